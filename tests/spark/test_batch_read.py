"""Batch reads: kwire returns what Spark's built-in `kafka` source returns, over data written by independent
clients (librdkafka, the Java producer), plus pushdown, data loss and clear errors."""

from __future__ import annotations

import json
import time

import pytest
from chispa import assert_df_equality

from harness import run_java_tool
from tests.spark.read_stats import read_stats_for

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


def load(spark, fmt, bootstrap, **options):
    reader = spark.read.format(fmt).option("kafka.bootstrap.servers", bootstrap)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def assert_same_as_builtin(spark, bootstrap, expected_rows: int | None = None, **options):
    ours = load(spark, "kwire", bootstrap, **options)
    theirs = load(spark, "kafka", bootstrap, **options)
    assert ours.schema == theirs.schema
    assert_df_equality(ours, theirs, ignore_row_order=True)
    if expected_rows is not None:
        assert ours.count() == expected_rows
    return ours


def mixed_records(n: int, tag: str):
    """Keys and values with nulls and empty bytes, and headers with null values, repeated keys."""
    records = []
    for i in range(n):
        key = None if i % 7 == 0 else (b"" if i % 11 == 0 else f"key-{i % 13}".encode())
        value = None if i % 9 == 0 else f"{tag}-value-{i}-".encode() * (1 + i % 5)
        headers = [("h1", f"v{i}".encode()), ("empty", b""), ("nul", None)] if i % 3 == 0 else None
        records.append((key, value, headers))
    return records


@pytest.mark.parametrize("codec", CODECS)
def test_librdkafka_data_in_every_codec_equals_builtin(spark, bootstrap, create_topic, produce, topic_name, codec):
    create_topic(topic_name, partitions=3)
    produce(topic_name, mixed_records(600, codec), **{"compression.type": codec, "batch.num.messages": 50})
    df = assert_same_as_builtin(spark, bootstrap, 600, subscribe=topic_name, includeHeaders="true")
    # And the decoded content is what librdkafka was given, not just equal between two readers.
    got = {r.value for r in df.select("value").collect()}
    assert f"{codec}-value-1-".encode() * 2 in got and None in got


def test_java_producer_data_in_every_codec_equals_builtin(spark, kafka, create_topic, topic_name):
    create_topic(topic_name, partitions=2)
    for codec in CODECS:
        lines = "".join(f"k{i}\tjava-{codec}-{i}\n" for i in range(40))
        run_java_tool(
            "org.apache.kafka.tools.ConsoleProducer", "--bootstrap-server", kafka.bootstrap_servers,
            "--topic", topic_name, "--compression-codec", codec if codec != "none" else "none",
            "--property", "parse.key=true", input=lines,
        )
    df = assert_same_as_builtin(spark, kafka.bootstrap_servers, 40 * len(CODECS), subscribe=topic_name)
    assert df.filter("CAST(value AS STRING) = 'java-zstd-39'").count() == 1


def test_transactions_read_committed_and_uncommitted(spark, bootstrap, create_topic, topic_name):
    from confluent_kafka import Producer

    create_topic(topic_name, partitions=2)
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": topic_name, "linger.ms": 5})
    producer.init_transactions(30)
    for outcome, count in [("commit", 10), ("abort", 5), ("commit", 7), ("abort", 3)]:
        producer.begin_transaction()
        for i in range(count):
            producer.produce(topic_name, key=f"{outcome}-{i}".encode(), value=f"{outcome}-{i}".encode())
        producer.flush(30)
        (producer.commit_transaction if outcome == "commit" else producer.abort_transaction)(30)
    committed = assert_same_as_builtin(spark, bootstrap, 17, subscribe=topic_name,
                                       **{"kafka.isolation.level": "read_committed"})
    assert {r.value for r in committed.collect()} == {f"commit-{i}".encode() for i in range(10)} | {
        f"commit-{i}".encode() for i in range(7)}
    assert_same_as_builtin(spark, bootstrap, 25, subscribe=topic_name,
                           **{"kafka.isolation.level": "read_uncommitted"})


def test_compacted_topic_with_offset_gaps(spark, bootstrap, create_topic, produce, topic_name):
    from confluent_kafka import Consumer, TopicPartition

    create_topic(topic_name, partitions=1, config={
        "cleanup.policy": "compact", "segment.ms": "100", "min.cleanable.dirty.ratio": "0.01",
        "delete.retention.ms": "100", "min.compaction.lag.ms": "0",
    })
    deadline = time.time() + 60
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": topic_name, "enable.auto.commit": False})
    round_ = 0
    while True:
        produce(topic_name, [(f"k{i % 5}".encode(), f"r{round_}-{i}".encode()) for i in range(50)])
        round_ += 1
        time.sleep(1.0)
        low, high = consumer.get_watermark_offsets(TopicPartition(topic_name, 0), timeout=10)
        consumer.assign([TopicPartition(topic_name, 0, 0)])
        seen = 0
        while True:
            msg = consumer.poll(2.0)
            if msg is None:
                break
            seen += 1
            if msg.offset() >= high - 1:
                break
        if seen < high - low:
            break  # the cleaner removed records: the log has gaps
        assert time.time() < deadline, "the log cleaner did not compact the topic within 60 s"
    consumer.close()
    df = assert_same_as_builtin(spark, bootstrap, subscribe=topic_name)
    offsets = [r.offset for r in df.orderBy("offset").collect()]
    assert len(offsets) < offsets[-1] + 1  # the log starts at 0 and has gaps, which are not data loss


def test_offset_and_timestamp_options_equal_builtin(spark, bootstrap, create_topic, produce, topic_name):
    create_topic(topic_name, partitions=2)
    base = int(time.time() * 1000) - 3_600_000
    produce(topic_name, [(f"k{i}".encode(), f"v{i}".encode(), None, base + i * 1000, i % 2) for i in range(100)])
    cases = [
        {"startingOffsets": json.dumps({topic_name: {"0": 10, "1": -2}}),
         "endingOffsets": json.dumps({topic_name: {"0": 40, "1": -1}})},
        {"startingTimestamp": str(base + 50_000)},
        {"startingOffsetsByTimestamp": json.dumps({topic_name: {"0": base + 20_000, "1": base + 80_000}}),
         "endingOffsetsByTimestamp": json.dumps({topic_name: {"0": base + 60_000, "1": base + 90_000}})},
        {"startingTimestamp": str(base + 10_000_000), "startingOffsetsByTimestampStrategy": "latest"},
    ]
    expected = [30 + 50, 50, 20 + 5, 0]
    for options, rows in zip(cases, expected):
        assert_same_as_builtin(spark, bootstrap, rows, subscribe=topic_name, **options)
    assert_same_as_builtin(spark, bootstrap, 50, assign=json.dumps({topic_name: [1]}))
    assert_same_as_builtin(spark, bootstrap, 100, subscribePattern=topic_name[:-8] + ".*")


def test_min_partitions_and_max_records_split_ranges(spark, bootstrap, create_topic, produce, topic_name):
    create_topic(topic_name, partitions=2)
    produce(topic_name, [(None, f"v{i}".encode(), None, None, i % 2) for i in range(1000)])
    numeric_end = json.dumps({topic_name: {"0": 500, "1": 500}})
    # As many Spark partitions as Spark's source makes: maxRecordsPerPartition is compared with the offsets
    # as given, so it cuts a read from earliest to latest (-2 to -1) only with numeric offsets.
    for options, partitions in [({"minPartitions": "6"}, 6), ({"maxRecordsPerPartition": "100"}, 2),
                                ({"maxRecordsPerPartition": "100", "endingOffsets": numeric_end}, 10)]:
        ours = load(spark, "kwire", bootstrap, subscribe=topic_name, **options)
        theirs = load(spark, "kafka", bootstrap, subscribe=topic_name, **options)
        assert ours.rdd.getNumPartitions() == theirs.rdd.getNumPartitions() == partitions, options
        assert ours.select("offset", "partition").distinct().count() == 1000


def test_pushdown_reads_only_the_matching_part(spark, bootstrap, create_topic, produce, topic_name, read_stats_dir):
    create_topic(topic_name, partitions=2)
    base = int(time.time() * 1000) - 3_600_000
    produce(topic_name, [(f"k{i}".encode(), b"x" * 100, None, base + i * 10, i % 2) for i in range(4000)],
            # idempotent: a retried batch keeps its place, so offsets stay in timestamp order (a loaded machine
            # made librdkafka retry and reorder batches, and the timestamp lookup then started 20 records early)
            **{"batch.num.messages": 20, "enable.idempotence": True})
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    try:
        df = load(spark, "kwire", bootstrap, subscribe=topic_name)
        assert df.where("offset >= 1900 AND partition = 1").count() == 100
        (only,) = read_stats_for(read_stats_dir, topic_name)
        assert (only["partition"], only["start"], only["end"]) == (1, 1900, 2000)
        assert only["records_fetched"] <= 100 + 20  # at most one batch before the start is decoded
        cutoff = base + 3600 * 10  # records i >= 3600, i.e. 200 per partition
        start_ts = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(cutoff / 1000)) + f".{cutoff % 1000:03d}"
        before = read_stats_for(read_stats_dir, topic_name)
        assert df.where(f"timestamp >= TIMESTAMP'{start_ts}'").count() == 400
        stats = [s for s in read_stats_for(read_stats_dir, topic_name) if s not in before]
        assert sorted((s["partition"], s["start"]) for s in stats) == [(0, 1800), (1, 1800)]
        assert sum(s["records_fetched"] for s in stats) <= 400 + 2 * 20
    finally:
        spark.conf.set("spark.sql.python.filterPushdown.enabled", "false")
    # Without pushdown the same queries still give the same answers.
    assert df.where("offset >= 1900 AND partition = 1").count() == 100


def test_missing_topic_is_a_clear_error(spark, bootstrap):
    with pytest.raises(Exception, match="no-such-topic-kwire"):
        load(spark, "kwire", bootstrap, subscribe="no-such-topic-kwire").count()


def test_offsets_out_of_range_follow_fail_on_data_loss(spark, bootstrap, create_topic, produce, topic_name):
    create_topic(topic_name, partitions=1)
    produce(topic_name, [(None, f"v{i}".encode()) for i in range(10)])
    ending = json.dumps({topic_name: {"0": 50}})
    with pytest.raises(Exception, match=rf"(?s){topic_name}-0.*ending offset 50 is above the latest offset 10.*failOnDataLoss"):
        load(spark, "kwire", bootstrap, subscribe=topic_name, endingOffsets=ending).count()
    df = load(spark, "kwire", bootstrap, subscribe=topic_name, endingOffsets=ending, failOnDataLoss="false")
    assert df.count() == 10


def test_user_schema_is_refused(spark, bootstrap):
    with pytest.raises(Exception, match="fixed schema"):
        (spark.read.format("kwire").schema("value STRING").option("kafka.bootstrap.servers", bootstrap)
         .option("subscribe", "x").load().count())


def test_bad_option_fails_at_planning_with_the_name(spark, bootstrap):
    with pytest.raises(Exception, match="Did you mean 'startingOffsets'"):
        load(spark, "kwire", bootstrap, subscribe="x", startingOffset="earliest").count()


def test_a_topic_named_twice_is_read_once_as_by_spark(spark, bootstrap, create_topic, produce, topic_name):
    """subscribe='t, t': Spark's source subscribes to a set of topics, so every record comes once."""
    create_topic(topic_name, partitions=2)
    produce(topic_name, [(None, f"v{i}".encode(), None, None, i % 2) for i in range(20)])
    assert_same_as_builtin(spark, bootstrap, expected_rows=20, subscribe=f"{topic_name}, {topic_name}")
