"""The cluster as DataFrames: option("metadata", ...) tables compared with what Kafka's own Java tools print
(kafka-topics, kafka-get-offsets, kafka-consumer-groups) for the same cluster, for groups made by librdkafka,
by the Java console consumer and by a kwire stream."""

from __future__ import annotations

import random
import re
import time
import uuid

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource

from spark_kwire import admin
from spark_kwire.client.admin.cluster_tables import COLUMNS
from spark_kwire.spark.metadata.tables import SCHEMAS
from harness import KafkaCluster, Listener, run_java_tool

GROUP_TOOL = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"


# -- helpers ------------------------------------------------------------------------------------------------

def meta(spark, bootstrap, table, **options):
    reader = spark.read.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("metadata", table)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def rows_by(df, *keys):
    return {tuple(r[k] for k in keys): r.asDict() for r in df.collect()}


def topic_command(bootstrap, topic_regex):
    """kafka-topics.sh --describe --topic <regex>: {topic: {"count", "rf", "partitions": {p: (leader, replicas,
    isr)}}}."""
    out = run_java_tool("org.apache.kafka.tools.TopicCommand", "--bootstrap-server", bootstrap, "--describe",
                        "--topic", topic_regex).stdout
    result = {}
    for m in re.finditer(r"^Topic: (\S+)\s+TopicId: \S+\s+PartitionCount: (\d+)\s+ReplicationFactor: (\d+)", out, re.M):
        result[m.group(1)] = {"count": int(m.group(2)), "rf": int(m.group(3)), "partitions": {}}
    for m in re.finditer(r"^\s+Topic: (\S+)\s+Partition: (\d+)\s+Leader: (\S+)\s+Replicas: (\S*)\s+Isr: (\S*)",
                         out, re.M):
        ints = [[int(x) for x in m.group(i).split(",") if x] for i in (4, 5)]
        leader = None if m.group(3) == "none" else int(m.group(3))
        result[m.group(1)]["partitions"][int(m.group(2))] = (leader, *ints)
    return result


def get_offsets(bootstrap, topic_regex, time_spec):
    """kafka-get-offsets.sh --topic <regex> --time -1|-2|-3: {(topic, partition): offset}."""
    out = run_java_tool("org.apache.kafka.tools.GetOffsetShell", "--bootstrap-server", bootstrap,
                        "--topic", topic_regex, "--time", str(time_spec)).stdout
    result = {}
    for line in out.split():
        name, partition, offset = line.rsplit(":", 2)
        result[(name, int(partition))] = int(offset) if offset else None
    return result


def group_command_offsets(bootstrap, group):
    """kafka-consumer-groups.sh --describe --offsets: {(topic, partition): (current, log_end, lag)}, the rows
    with a committed offset ("-" columns are partitions assigned to a member without a commit)."""
    out = run_java_tool(GROUP_TOOL, "--bootstrap-server", bootstrap, "--describe", "--offsets", "--group", group).stdout
    result = {}
    for line in out.splitlines():
        cols = line.split()
        if len(cols) >= 6 and cols[0] == group and cols[3] != "-":
            result[(cols[1], int(cols[2]))] = (int(cols[3]), int(cols[4]), int(cols[5]))
    assert result or "has no active members" in out or group in out, out
    return result


def group_command_state(bootstrap, group):
    """kafka-consumer-groups.sh --describe --state: (coordinator id, assignment strategy or None, state, members)."""
    out = run_java_tool(GROUP_TOOL, "--bootstrap-server", bootstrap, "--describe", "--state", "--group", group).stdout
    for line in out.splitlines():
        m = re.match(rf"^{re.escape(group)}\s+\S+\s+\((\d+)\)\s+(\S+)\s+(\S+)\s+(\d+)\s*$", line)
        if m:
            return int(m.group(1)), None if m.group(2) == "-" else m.group(2), m.group(3), int(m.group(4))
    raise AssertionError(f"no state line for {group} in:\n{out}")


def our_offsets(spark, bootstrap, group, **filters):
    df = meta(spark, bootstrap, "group_offsets", groups=group, **filters)
    return {(r.topic, r.partition): (r.committed_offset, r.latest_offset, r.lag) for r in df.collect()}


def consume_and_commit(bootstrap, topic, group, count, metadata=None, close=True):
    """A librdkafka consumer in `group` reads `count` records and commits what it read (with `metadata`).
    Returns ({(topic, partition): committed offset}, the consumer if still open)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                         "enable.auto.commit": False, "session.timeout.ms": 30000})
    consumer.subscribe([topic])
    positions: dict[tuple[str, int], int] = {}
    got, deadline = 0, time.monotonic() + 60
    while got < count:
        assert time.monotonic() < deadline, f"consumed only {got} of {count}"
        for msg in consumer.consume(num_messages=count - got, timeout=1):
            assert msg.error() is None, msg.error()
            positions[(msg.topic(), msg.partition())] = msg.offset() + 1
            got += 1
    consumer.commit(offsets=[TopicPartition(t, p, o, metadata) if metadata is not None else TopicPartition(t, p, o)
                             for (t, p), o in positions.items()], asynchronous=False)
    if close:
        consumer.close()
        return positions, None
    return positions, consumer


def recent_ms():
    return int(time.time() * 1000) - 60_000


# -- schemas and options ------------------------------------------------------------------------------------

def test_fixed_schemas_and_errors_through_spark(spark, bootstrap, create_topic, topic_name):
    create_topic(topic_name, partitions=1)
    expected = {
        "topics": "struct<topic:string,partitions:int,replication_factor:int,is_internal:boolean,"
                  "cleanup_policy:string,retention_ms:bigint,max_message_bytes:int>",
        "partitions": "struct<topic:string,partition:int,leader:int,replicas:array<int>,isr:array<int>,"
                      "earliest_offset:bigint,latest_offset:bigint,record_count_estimate:bigint,"
                      "latest_record_timestamp:timestamp>",
        "groups": "struct<group_id:string,state:string,protocol_type:string,protocol:string,coordinator:int,"
                  "member_count:int>",
        "group_offsets": "struct<group:string,topic:string,partition:int,committed_offset:bigint,"
                         "latest_offset:bigint,lag:bigint,metadata:string>",
    }
    for table, simple in expected.items():
        df = meta(spark, bootstrap, table.upper())  # table names are case-insensitive
        assert df.schema.simpleString() == simple
        assert df.schema == SCHEMAS[table]
        assert tuple(df.schema.names) == COLUMNS[table]  # spark_kwire.admin names its dict keys by COLUMNS
    assert meta(spark, bootstrap, "topics", subscribe=topic_name).collect()[0].topic == topic_name

    def fails(match, table, **options):
        with pytest.raises(Exception, match=match):
            meta(spark, bootstrap, table, **options).collect()

    # Errors found when planning reach the user with their message.
    fails(r"Unknown metadata table 'topicz'.*Did you mean 'topics'.*topics, partitions, groups, group_offsets",
          "topicz")
    fails(r"Unknown option 'startingoffsets' for a kwire metadata read", "partitions", startingOffsets="earliest")
    missing = f"missing-{uuid.uuid4().hex[:6]}"
    fails(rf"Topic '{missing}' named in option 'subscribe' does not exist. Existing topics include: ", "partitions",
          subscribe=f"{topic_name},{missing}")
    fails(rf"Consumer group '{missing}' named in option 'groups' does not exist", "group_offsets", groups=missing)
    with pytest.raises(Exception, match=r"Option 'kafka.bootstrap.servers' is required"):
        spark.read.format("kwire").option("metadata", "topics").load().collect()
    # As with kafka-consumer-groups.sh --all-groups, a pattern that matches nothing is not an error.
    empty = meta(spark, bootstrap, "group_offsets", groupPattern=f"{missing}.*")
    assert empty.count() == 0 and empty.rdd.getNumPartitions() == 1


def test_metadata_tables_are_batch_only_and_a_stream_of_one_fails_at_start(spark, bootstrap, tmp_path):
    from pyspark.errors import StreamingQueryException

    df = (spark.readStream.format("kwire").option("kafka.bootstrap.servers", bootstrap)
          .option("metadata", "topics").load())
    query = (df.writeStream.format("memory").queryName(f"meta_stream_{uuid.uuid4().hex[:6]}")
             .option("checkpointLocation", str(tmp_path / "checkpoint")).start())
    try:
        with pytest.raises(StreamingQueryException) as info:
            query.awaitTermination(120)
    finally:
        query.stop()
    text = str(info.value)
    assert "Option 'metadata' does not apply to a kwire streaming read" in text and "batch-only" in text, text[:3000]
    assert "UnboundLocalError" not in text  # the refusal itself, not a worker error that hides it
    assert query.lastProgress is None  # no batch ran


def test_option_validation():
    from spark_kwire.spark.metadata.tables import MetadataReader
    from spark_kwire.spark.options.parsing import KwireOptionError

    def fails(match, table, **options):
        with pytest.raises(KwireOptionError, match=match):
            MetadataReader(table, {"kafka.bootstrap.servers": "localhost:1", "metadata": table,
                                   **{k.lower(): v for k, v in options.items()}})

    fails(r"Option 'groups' does not apply to metadata table 'topics' \(only to: groups, group_offsets\)",
          "topics", groups="g")
    fails(r"Option 'subscribe' does not apply to metadata table 'groups'", "groups", subscribe="t")
    fails(r"Unknown option 'subscrib'.*Did you mean 'subscribe'\?", "group_offsets", subscrib="t")
    fails(r"Give at most one of the options 'subscribe' and 'subscribePattern'", "partitions",
          subscribe="t", subscribePattern=".*")
    fails(r"Give at most one of the options 'groups' and 'groupPattern'", "group_offsets", groups="g",
          groupPattern="g.*")
    fails(r"Option 'groupPattern' is not a valid regular expression", "groups", groupPattern="(")
    fails(r"Option 'subscribe' must name at least one topic", "partitions", subscribe=" , ")
    fails(r"Kafka option 'kafka.auto.offset.reset' is not supported", "topics", **{"kafka.auto.offset.reset": "x"})
    fails(r"Unknown metadata table 'lag'", "lag")
    reader = MetadataReader("Group_Offsets", {"kafka.bootstrap.servers": "h:1", "groups": "a, b,a",
                                              "subscribepattern": "t-.*"})
    assert reader.table == "group_offsets" and reader.groups.names == ("a", "b")
    assert reader.topics.matches("t-1") and not reader.topics.matches("xt-1")  # whole-name match


# -- topics and partitions --------------------------------------------------------------------------------

def test_topics_and_partitions_equal_topic_command_and_get_offset_shell(spark, bootstrap, create_topic, produce,
                                                                           topic_name):
    compacted, plain, empty = f"{topic_name}-c", f"{topic_name}-d", f"{topic_name}-e"
    create_topic(compacted, partitions=3, config={"cleanup.policy": "compact", "retention.ms": "3600000",
                                                  "max.message.bytes": "200000"})
    create_topic(plain, partitions=2, config={"cleanup.policy": "compact,delete"})
    create_topic(empty, partitions=1)
    admin.commit_offsets(bootstrap, f"{topic_name}-g", {(plain, 0): 0})  # makes sure __consumer_offsets exists

    # Shuffled timestamps: the newest record of a partition is not its last one.
    rng = random.Random(7)
    base = recent_ms()
    produced: dict[tuple[str, int], list[int]] = {}
    for topic, partitions, per_partition in ((compacted, 3, (12, 5, 9)), (plain, 2, (20, 7))):
        records = []
        for p in range(partitions):
            stamps = [base + rng.randrange(0, 50_000) for _ in range(per_partition[p])]
            produced[(topic, p)] = stamps
            records += [(f"k{i}".encode(), b"v", None, ts, p) for i, ts in enumerate(stamps)]
        produce(topic, records)
    # Delete the first records of plain-0 so that its earliest offset is not 0.
    librdkafka_admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in librdkafka_admin.delete_records([TopicPartition(plain, 0, 6)]).values():
        future.result(timeout=30)

    selection = f"{compacted},{plain},{empty}"
    topics = rows_by(meta(spark, bootstrap, "topics", subscribe=selection), "topic")
    parts_df = meta(spark, bootstrap, "partitions", subscribe=selection)
    assert parts_df.rdd.getNumPartitions() == 1  # one Spark partition per leader broker
    parts = rows_by(parts_df, "topic", "partition")
    assert set(topics) == {(compacted,), (plain,), (empty,)}
    assert len(parts) == 6

    # The configs, as librdkafka's DescribeConfigs sees them.
    resources = [ConfigResource(ConfigResource.Type.TOPIC, t) for t in (compacted, plain, empty)]
    for resource, future in librdkafka_admin.describe_configs(resources).items():
        configs = future.result(timeout=30)
        row = topics[(resource.name,)]
        assert row["cleanup_policy"] == configs["cleanup.policy"].value
        assert row["retention_ms"] == int(configs["retention.ms"].value)
        assert row["max_message_bytes"] == int(configs["max.message.bytes"].value)
        assert row["is_internal"] is False
    assert (topics[(compacted,)]["cleanup_policy"], topics[(compacted,)]["retention_ms"],
            topics[(compacted,)]["max_message_bytes"]) == ("compact", 3_600_000, 200_000)
    assert topics[(plain,)]["cleanup_policy"] == "compact,delete"

    # One run of each tool for the three topics (both take a regular expression).
    regex = f"{re.escape(topic_name)}-[cde]"
    described = topic_command(bootstrap, regex)
    latest, earliest = get_offsets(bootstrap, regex, -1), get_offsets(bootstrap, regex, -2)
    max_ts_offsets = get_offsets(bootstrap, regex, -3)
    assert set(described) == {compacted, plain, empty}
    assert set(latest) == set(earliest) == set(parts)
    for topic, info in described.items():
        assert (topics[(topic,)]["partitions"], topics[(topic,)]["replication_factor"]) == (info["count"], info["rf"])
        assert set(info["partitions"]) == {p for t, p in parts if t == topic}
        for p, (leader, replicas, isr) in info["partitions"].items():
            row = parts[(topic, p)]
            assert (row["leader"], row["replicas"], row["isr"]) == (leader, replicas, isr)
            assert (row["earliest_offset"], row["latest_offset"]) == (earliest[(topic, p)], latest[(topic, p)])
            assert row["record_count_estimate"] == latest[(topic, p)] - earliest[(topic, p)]
            stamps = produced.get((topic, p), [])
            if not stamps:
                assert row["latest_record_timestamp"] is None and row["record_count_estimate"] == 0
                continue
            assert row["latest_record_timestamp"].timestamp() * 1000 == pytest.approx(max(stamps), abs=0.5)
            # kafka-get-offsets --time -3 names the record holding that timestamp.
            assert stamps[max_ts_offsets[(topic, p)]] == max(stamps)
    assert parts[(plain, 0)]["earliest_offset"] == 6 and parts[(plain, 0)]["record_count_estimate"] == 14

    # subscribePattern matches whole names; no filter lists internal topics too, flagged as such.
    assert set(rows_by(meta(spark, bootstrap, "topics", subscribePattern=f"{re.escape(topic_name)}-[cd]"),
                       "topic")) == {(compacted,), (plain,)}
    assert meta(spark, bootstrap, "topics", subscribePattern=re.escape(topic_name)).count() == 0
    everything = rows_by(meta(spark, bootstrap, "topics"), "topic")
    assert everything[("__consumer_offsets",)]["is_internal"] is True
    assert everything[(plain,)] == topics[(plain,)]
    assert all(row["is_internal"] == name.startswith("__") for (name,), row in everything.items())


# -- groups and lag ----------------------------------------------------------------------------------------

def test_librdkafka_group_equals_consumer_group_command(spark, bootstrap, create_topic, produce, topic_name):
    create_topic(topic_name, partitions=3)
    produce(topic_name, [(None, f"v{i}".encode(), None, None, i % 3) for i in range(60)])
    group = f"{topic_name}-librdkafka"
    committed, consumer = consume_and_commit(bootstrap, topic_name, group, 25, metadata="rdk-meta", close=False)
    try:
        # While its consumer is in the group.
        row = rows_by(meta(spark, bootstrap, "groups", groups=group), "group_id")[(group,)]
        coordinator, strategy, state, members = group_command_state(bootstrap, group)
        assert (row["coordinator"], row["protocol"], row["state"], row["member_count"]) == \
            (coordinator, strategy, state, members) == (1, "range", "Stable", 1)
        assert row["protocol_type"] == "consumer"
    finally:
        consumer.close()

    df = meta(spark, bootstrap, "group_offsets", groups=group)
    rows = rows_by(df, "group", "topic", "partition")
    tool = group_command_offsets(bootstrap, group)
    ours = {(t, p): (r["committed_offset"], r["latest_offset"], r["lag"]) for (_g, t, p), r in rows.items()}
    assert ours == tool
    assert {tp: c for tp, (c, _e, _l) in ours.items()} == committed
    assert sum(committed.values()) == 25
    assert all((end, lag) == (20, 20 - c) for c, end, lag in ours.values())
    # The committed metadata, as librdkafka's admin client reads it back (librdkafka commits the string with
    # its C terminator, and that NUL is what the broker stores).
    assert {r["metadata"].rstrip("\x00") for r in rows.values()} == {"rdk-meta"}
    librdkafka_admin = AdminClient({"bootstrap.servers": bootstrap})
    from confluent_kafka import ConsumerGroupTopicPartitions
    listed = librdkafka_admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(30)
    assert {(tp.topic, tp.partition): tp.metadata for tp in listed.topic_partitions if tp.offset >= 0} == \
        {(t, p): r["metadata"].rstrip("\x00") for (_g, t, p), r in rows.items()}

    # After it left: Empty, no members, no assignor (the tool prints "-").
    row = rows_by(meta(spark, bootstrap, "groups", groupPattern=re.escape(group)), "group_id")[(group,)]
    coordinator, strategy, state, members = group_command_state(bootstrap, group)
    assert (row["coordinator"], row["protocol"], row["state"], row["member_count"]) == \
        (coordinator, strategy, state, members) == (1, None, "Empty", 0)


def test_kip848_consumer_protocol_group(spark, bootstrap, create_topic, produce, topic_name):
    """A librdkafka consumer with group.protocol=consumer (KIP-848): offsets and lag as for classic groups;
    members and the server-side assignor come from ConsumerGroupDescribe, as kafka-consumer-groups.sh shows them."""
    create_topic(topic_name, partitions=2)
    produce(topic_name, [(None, b"v", None, None, i % 2) for i in range(16)])
    group = f"{topic_name}-848"
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "group.protocol": "consumer",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic_name])
    got, deadline = 0, time.monotonic() + 60
    while got < 11:
        assert time.monotonic() < deadline, f"consumed only {got}"
        msg = consumer.poll(1)
        if msg is not None and msg.error() is None:
            got += 1
    consumer.commit(asynchronous=False)
    try:
        row = rows_by(meta(spark, bootstrap, "groups", groups=group), "group_id")[(group,)]
        coordinator, strategy, state, members = group_command_state(bootstrap, group)
        assert (row["coordinator"], row["protocol"], row["state"], row["member_count"]) == \
            (coordinator, strategy, state, members)
        assert (row["protocol_type"], row["state"], row["member_count"]) == ("consumer", "Stable", 1)
        assert row["protocol"] in ("uniform", "range"), row  # the broker's group.consumer.assignors
    finally:
        consumer.close()
    tool = group_command_offsets(bootstrap, group)
    assert our_offsets(spark, bootstrap, group) == tool
    assert sum(c for c, _e, _l in tool.values()) == 11
    row = rows_by(meta(spark, bootstrap, "groups", groups=group), "group_id")[(group,)]
    assert (row["state"], row["member_count"], row["coordinator"]) == ("Empty", 0, 1)


def test_java_console_consumer_group_equals_consumer_group_command(spark, kafka, bootstrap, create_topic, produce,
                                                                    topic_name):
    create_topic(topic_name, partitions=2)
    produce(topic_name, [(None, f"v{i}".encode(), None, None, i % 2) for i in range(40)])
    group = f"{topic_name}-java"
    run_java_tool("org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", bootstrap,
                  "--topic", topic_name, "--group", group, "--from-beginning", "--max-messages", "7",
                  "--consumer-property", "max.poll.records=3", "--timeout-ms", "30000")
    before = group_command_offsets(bootstrap, group)
    assert before and our_offsets(spark, bootstrap, group) == before
    row = rows_by(meta(spark, bootstrap, "groups", groups=group), "group_id")[(group,)]
    coordinator, strategy, state, members = group_command_state(bootstrap, group)
    assert (row["coordinator"], row["protocol"], row["state"], row["member_count"]) == \
        (coordinator, strategy, state, members)
    assert row["protocol_type"] == "consumer" and row["state"] == "Empty"

    produce(topic_name, [(None, b"late", None, None, 1)] * 5)
    after = group_command_offsets(bootstrap, group)
    assert our_offsets(spark, bootstrap, group) == after
    assert sum(v[2] for v in after.values()) == sum(v[2] for v in before.values()) + 5


def test_lag_of_a_stopped_group_grows_by_exactly_the_records_produced(spark, bootstrap, create_topic, produce,
                                                                      topic_name):
    create_topic(topic_name, partitions=3)
    other = f"{topic_name}-other"
    create_topic(other, partitions=1)
    produce(topic_name, [(None, b"x", None, None, i % 3) for i in range(30)])
    group = f"{topic_name}-stopped"
    committed, _ = consume_and_commit(bootstrap, topic_name, group, 30)
    admin.commit_offsets(bootstrap, group, {(other, 0): 0}, metadata="kwire-meta")  # a second topic, to filter on
    before = our_offsets(spark, bootstrap, group, subscribe=topic_name)
    assert set(before) == {(topic_name, p) for p in range(3)}
    assert all(lag == 0 for _c, _e, lag in before.values())

    added = {0: 11, 1: 0, 2: 4}
    produce(topic_name, [(None, b"late", None, None, p) for p, n in added.items() for _ in range(n)])
    after = our_offsets(spark, bootstrap, group, subscribe=topic_name)
    for p, n in added.items():
        c0, e0, lag0 = before[(topic_name, p)]
        c1, e1, lag1 = after[(topic_name, p)]
        assert (c1, e1 - e0, lag1 - lag0) == (c0, n, n) and c1 == committed[(topic_name, p)]
    tool = group_command_offsets(bootstrap, group)
    assert {tp: v for tp, v in tool.items() if tp[0] == topic_name} == after
    # The topic filters: subscribePattern (whole names) and no filter.
    other_rows = meta(spark, bootstrap, "group_offsets", groups=group, subscribePattern=re.escape(other)).collect()
    assert [(r.topic, r.partition, r.committed_offset, r.lag, r.metadata) for r in other_rows] == \
        [(other, 0, 0, 0, "kwire-meta")]
    assert our_offsets(spark, bootstrap, group) == tool
    # The admin helper gives the same rows.
    assert {(r["topic"], r["partition"]): (r["committed_offset"], r["latest_offset"], r["lag"])
            for r in admin.group_lag(bootstrap, group)} == tool


def test_kwire_stream_committing_to_a_group_shows_its_lag(spark, bootstrap, create_topic, produce, topic_name,
                                                          tmp_path):
    create_topic(topic_name, partitions=3)
    produce(topic_name, [(None, f"v{i}".encode(), None, None, i % 3) for i in range(21)])
    group = f"{topic_name}-stream"

    def run_stream():
        query = (spark.readStream.format("kwire").option("kafka.bootstrap.servers", bootstrap)
                 .option("subscribe", topic_name).option("startingOffsets", "earliest")
                 .option("commitOffsetsToGroup", group).load()
                 .writeStream.format("noop").option("checkpointLocation", str(tmp_path / "checkpoint"))
                 .trigger(availableNow=True).start())
        assert query.awaitTermination(120)
        assert query.exception() is None

    run_stream()
    caught_up = group_command_offsets(bootstrap, group)
    assert our_offsets(spark, bootstrap, group) == caught_up
    assert {tp: (c, e) for tp, (c, e, _l) in caught_up.items()} == {(topic_name, p): (7, 7) for p in range(3)}
    assert all(lag == 0 for _c, _e, lag in caught_up.values())

    produce(topic_name, [(None, b"late", None, None, 2)] * 6)
    behind = our_offsets(spark, bootstrap, group)
    assert behind == group_command_offsets(bootstrap, group)
    assert behind[(topic_name, 2)] == (7, 13, 6)
    run_stream()
    assert our_offsets(spark, bootstrap, group)[(topic_name, 2)] == (13, 13, 0)


# -- authorization -----------------------------------------------------------------------------------------

ALICE_PASSWORD = "alice-" + uuid.uuid4().hex[:8]


@pytest.fixture(scope="module")
def acl_kafka():
    """A broker with ACLs: PLAINTEXT clients are the super user (ANONYMOUS), SASL_PLAINTEXT user alice has none
    unless a test grants them."""
    props = {
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:ANONYMOUS",
        "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config":
            f'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="{ALICE_PASSWORD}";',
    }
    with KafkaCluster(1, listeners=[Listener("SASL_PLAINTEXT", "SASL_PLAINTEXT")], extra_properties=props) as cluster:
        yield cluster


def test_authorization_failures_are_named(spark, acl_kafka):
    from confluent_kafka.admin import (AclBinding, AclOperation, AclPermissionType, NewTopic, ResourcePatternType,
                                       ResourceType)
    superuser = AdminClient({"bootstrap.servers": acl_kafka.bootstrap_servers})
    visible, hidden, group = "visible-topic", "hidden-topic", "hidden-group"
    for future in superuser.create_topics([NewTopic(visible, 2, 1), NewTopic(hidden, 1, 1)]).values():
        future.result(timeout=60)
    acl = AclBinding(ResourceType.TOPIC, visible, ResourcePatternType.LITERAL, "User:alice", "*",
                     AclOperation.DESCRIBE, AclPermissionType.ALLOW)
    for future in superuser.create_acls([acl]).values():
        future.result(timeout=30)
    admin.commit_offsets(acl_kafka.bootstrap_servers, group, {(visible, 0): 0})

    def as_alice(table, **options):
        reader = (spark.read.format("kwire").option("metadata", table)
                  .option("kafka.bootstrap.servers", acl_kafka.bootstrap("SASL_PLAINTEXT"))
                  .option("kafka.security.protocol", "SASL_PLAINTEXT").option("kafka.sasl.mechanism", "PLAIN")
                  .option("kafka.sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule "
                                                    f'required username="alice" password="{ALICE_PASSWORD}";'))
        for key, value in options.items():
            reader = reader.option(key, value)
        return reader.load()

    # Describe on the topic is enough for its partitions and offsets (the ACL is seen to work) ...
    parts = as_alice("partitions", subscribe=visible).collect()
    assert sorted((r.partition, r.leader, r.latest_offset) for r in parts) == [(0, 1, 0), (1, 1, 0)]
    # ... but not for its configs.
    with pytest.raises(Exception, match=r"Not authorized to describe the configs of topics \(topic 'visible-topic'\)"
                                        r": Kafka answered TOPIC_AUTHORIZATION_FAILED.*DescribeConfigs"):
        as_alice("topics", subscribe=visible).collect()
    with pytest.raises(Exception, match=r"Not authorized to describe topics \(topic 'hidden-topic'\): "
                                        r"Kafka answered TOPIC_AUTHORIZATION_FAILED"):
        as_alice("partitions", subscribe=f"{visible},{hidden}").collect()
    with pytest.raises(Exception, match=r"Not authorized to describe consumer group 'hidden-group': "
                                        r"Kafka answered GROUP_AUTHORIZATION_FAILED.*Describe operation on the group"):
        as_alice("group_offsets", groups=group).collect()
    # Without a filter, Kafka shows a principal only what it may describe (no error), as its tools do.
    assert [r.topic for r in as_alice("partitions").collect()] == [visible, visible]
    assert as_alice("groups").count() == 0
