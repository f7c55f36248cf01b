"""Option parsing: Spark's names and semantics, and clear errors that name the option and what is accepted."""

from __future__ import annotations

import pytest

from spark_kwire.spark.options.parsing import KwireOptionError, ReadOptions, WriteOptions
from spark_kwire.spark.options.values import parse_duration_ms

BASE = {"kafka.bootstrap.servers": "127.0.0.1:9092", "subscribe": "t"}


def parse(extra=None, drop=(), streaming=False, **kw):
    opts = {**BASE, **(extra or {})}
    for k in drop:
        opts.pop(k)
    return ReadOptions.parse(opts, streaming=streaming)


def test_defaults_match_spark_kafka_source():
    o = parse()
    assert o.starting.kind == "earliest" and o.ending.kind == "latest"
    assert o.fail_on_data_loss is True and o.include_headers is False and o.read_committed is False
    assert o.min_partitions is None and o.max_records_per_partition is None
    s = parse(streaming=True)
    assert s.starting.kind == "latest" and s.ending is None


def test_option_names_are_case_insensitive():
    o = ReadOptions.parse({"KAFKA.BOOTSTRAP.SERVERS": "h:1", "SubScribe": "a, b", "STARTINGOFFSETS": "earliest",
                           "includeheaders": "TRUE"})
    assert o.subscription.topics == ("a", "b") and o.include_headers is True


def test_bootstrap_servers_required():
    with pytest.raises(KwireOptionError, match="kafka.bootstrap.servers"):
        parse(drop=["kafka.bootstrap.servers"])


@pytest.mark.parametrize("extra", [{}, {"assign": '{"t":[0]}'}])
def test_exactly_one_subscription_kind(extra):
    opts = dict(BASE)
    if not extra:
        opts.pop("subscribe")
    opts.update(extra)
    with pytest.raises(KwireOptionError, match="Exactly one of the options 'subscribe', 'subscribePattern' or 'assign'"):
        ReadOptions.parse(opts)


def test_assign_and_pattern():
    o = parse({"assign": '{"a":[0,2],"b":[1]}'}, drop=["subscribe"])
    assert o.subscription.assignment == (("a", 0), ("a", 2), ("b", 1))
    with pytest.raises(KwireOptionError, match="assign"):
        parse({"assign": '{"a":"0"}'}, drop=["subscribe"])
    with pytest.raises(KwireOptionError, match="not valid JSON"):
        parse({"assign": "{a:[0]}"}, drop=["subscribe"])
    with pytest.raises(KwireOptionError, match="regular expression"):
        parse({"subscribePattern": "([a"}, drop=["subscribe"])


def test_offsets_json_and_restrictions():
    o = parse({"startingOffsets": '{"t":{"0":5,"1":-2}}', "endingOffsets": '{"t":{"0":-1,"1":9}}'})
    assert o.starting.offset_map == {("t", 0): 5, ("t", 1): -2}
    assert o.ending.offset_map == {("t", 0): -1, ("t", 1): 9}
    with pytest.raises(KwireOptionError, match="can't be 'latest'"):
        parse({"startingOffsets": "latest"})
    with pytest.raises(KwireOptionError, match="can't be 'earliest'"):
        parse({"endingOffsets": '{"t":{"0":-2}}'})
    with pytest.raises(KwireOptionError, match="'startingOffsets' must be 'earliest', 'latest' or JSON"):
        parse({"startingOffsets": "beginning"})
    with pytest.raises(KwireOptionError, match="offset -7"):
        parse({"startingOffsets": '{"t":{"0":-7}}'})
    with pytest.raises(KwireOptionError, match="Option 'endingOffsets' does not apply to a kwire streaming read: a stream has no end"):
        parse({"endingOffsets": "latest"}, streaming=True)


def test_timestamp_precedence_as_spark():
    o = parse({"startingTimestamp": "1000", "startingOffsetsByTimestamp": '{"t":{"0":5}}', "startingOffsets": "earliest"})
    assert o.starting.kind == "timestamp" and o.starting.timestamp == 1000
    o = parse({"startingOffsetsByTimestamp": '{"t":{"0":5}}', "startingOffsets": "earliest"})
    assert o.starting.kind == "timestamps" and o.starting.offset_map == {("t", 0): 5}
    with pytest.raises(KwireOptionError, match="startingTimestamp"):
        parse({"startingTimestamp": "yesterday"})
    with pytest.raises(KwireOptionError, match="'error' or 'latest'"):
        parse({"startingOffsetsByTimestampStrategy": "earliest"})


@pytest.mark.parametrize("name,value,match", [
    ("failOnDataLoss", "yes", "'true' or 'false'"),
    ("minPartitions", "0", "positive integer"),
    ("maxRecordsPerPartition", "ten", "positive integer"),
    ("kafka.isolation.level", "serializable", "read_committed"),
    ("maxDecompressedBytes", "-5", "positive integer"),
])
def test_malformed_values(name, value, match):
    with pytest.raises(KwireOptionError, match=match) as info:
        parse({name: value})
    assert name in str(info.value)


def test_unknown_option_suggests_the_right_name():
    with pytest.raises(KwireOptionError, match="Did you mean 'startingOffsets'") as info:
        parse({"startingOffset": "earliest"})
    assert "endingOffsets" in str(info.value)  # lists what is accepted


@pytest.mark.parametrize("name", ["kafka.auto.offset.reset", "kafka.key.deserializer", "kafka.enable.auto.commit"])
def test_kafka_settings_that_make_no_sense_are_refused(name):
    with pytest.raises(KwireOptionError, match="is not supported"):
        parse({name: "x"})


def test_kafka_params_are_passed_without_prefix():
    o = parse({"kafka.request.timeout.ms": "5000", "kafka.client.id": "me"})
    assert o.kafka.request_timeout_ms == 5000 and o.kafka.client_id == "me"


def test_max_decompressed_bytes_reaches_the_client_config():
    o = parse({"maxDecompressedBytes": "1048576"})
    assert o.kafka.max_decompressed_bytes == 1048576
    assert parse().kafka.max_decompressed_bytes == 256 * 1024 * 1024


def test_poll_timeout_bounds_fetch_retries_unless_kafka_setting_given():
    assert parse({"kafkaConsumer.pollTimeoutMs": "5000"}).kafka.default_api_timeout_ms == 5000
    both = parse({"kafkaConsumer.pollTimeoutMs": "5000", "kafka.default.api.timeout.ms": "7000"})
    assert both.kafka.default_api_timeout_ms == 7000
    assert parse().kafka.default_api_timeout_ms is None
    with pytest.raises(KwireOptionError, match="kafkaConsumer.pollTimeoutMs"):
        parse({"kafkaConsumer.pollTimeoutMs": "soon"})


def test_write_options():
    w = WriteOptions.parse({"kafka.bootstrap.servers": "h:1", "topic": "out"})
    assert w.topic == "out"
    with pytest.raises(KwireOptionError, match="not supported"):
        WriteOptions.parse({"kafka.bootstrap.servers": "h:1", "kafka.value.serializer": "x"})
    with pytest.raises(KwireOptionError, match="Option 'subscribe' does not apply to a kwire write: it is a read option"):
        WriteOptions.parse({"kafka.bootstrap.servers": "h:1", "subscribe": "x"})
    with pytest.raises(KwireOptionError, match="Unknown option 'topics' for a kwire write. Did you mean 'topic'"):
        WriteOptions.parse({"kafka.bootstrap.servers": "h:1", "topics": "x"})


WRITE = {"kafka.bootstrap.servers": "h:1", "topic": "out"}


@pytest.mark.parametrize("name", ["kafka.partitioner.class", "kafka.interceptor.classes", "kafka.key.serializer"])
def test_java_classes_a_write_cannot_run_are_refused(name):
    with pytest.raises(KwireOptionError, match=f"Kafka option '{name}' is not supported"):
        WriteOptions.parse({**WRITE, name: "org.apache.kafka.clients.producer.RoundRobinPartitioner"})


def test_include_headers_on_a_write_is_refused_saying_the_headers_column_decides():
    for streaming in (False, True):
        with pytest.raises(KwireOptionError, match="'includeHeaders' does not apply.*headers of its 'headers' column"):
            WriteOptions.parse({**WRITE, "includeHeaders": "true"}, streaming=streaming)


def test_spark_puts_checkpoint_and_query_name_into_stream_writes_only():
    assert WriteOptions.parse({**WRITE, "checkpointLocation": "/c", "queryName": "q"}, streaming=True).topic == "out"
    with pytest.raises(KwireOptionError, match="'checkpointLocation' does not apply to a kwire write: .*writeStream"):
        WriteOptions.parse({**WRITE, "checkpointLocation": "/c"})
    with pytest.raises(KwireOptionError, match="'path' does not apply to a kwire write: .*'topic'"):
        WriteOptions.parse({**WRITE, "path": "/x"})


@pytest.mark.parametrize("name, value, where", [
    ("groups", "g", "metadata tables 'groups' and 'group_offsets'"),
    ("groupPattern", "g.*", "metadata tables 'groups' and 'group_offsets'"),
    ("topic", "t", "'subscribe'"),
    ("path", "/x", "no path"),
    ("checkpointLocation", "/c", "writeStream"),
    ("queryName", "q", "writeStream"),
])
def test_options_a_read_would_not_use_are_refused_saying_where_they_belong(name, value, where):
    for streaming in (False, True, None):
        with pytest.raises(KwireOptionError, match=f"Option '{name}' does not apply to a kwire .*read: .*{where}"):
            parse({name: value}, streaming=streaming)


def test_stream_only_options():
    with pytest.raises(KwireOptionError, match="'commitOffsetsToGroup' does not apply to a kwire batch read: .*readStream"):
        parse({"commitOffsetsToGroup": "g"})
    with pytest.raises(KwireOptionError, match="'metadata' does not apply to a kwire streaming read: .*batch-only"):
        parse({"metadata": "topics"}, streaming=True)
    with pytest.raises(KwireOptionError, match="'startingOffsetsGroup' .* used only with startingOffsets='group'"):
        parse({"startingOffsetsGroup": "g"}, streaming=True)
    assert parse({"startingOffsetsGroup": "g", "startingOffsets": "group"}, streaming=True).starting.group == "g"


def test_stream_read_mode_is_a_stream_option_with_three_values():
    assert parse(streaming=True).stream_read_mode == "auto"
    for given, mode in (("tasks", "tasks"), (" Driver ", "driver"), ("AUTO", "auto")):
        assert parse({"streamReadMode": given}, streaming=True).stream_read_mode == mode
    assert parse({"streamReadMode": "tasks"}, streaming=None).stream_read_mode == "tasks"
    with pytest.raises(KwireOptionError, match="'streamReadMode' must be 'auto', 'tasks' or 'driver', got 'executor'"):
        parse({"streamReadMode": "executor"}, streaming=True)
    with pytest.raises(KwireOptionError, match="'streamReadMode' does not apply to a kwire batch read: .*readStream"):
        parse({"streamReadMode": "driver"})
    for streaming in (False, True):
        with pytest.raises(KwireOptionError, match="'streamReadMode' does not apply to a kwire .*write: it is a read"):
            WriteOptions.parse({"kafka.bootstrap.servers": "h:1", "topic": "t", "streamReadMode": "driver"},
                               streaming=streaming)


def test_stream_admission_options_are_accepted_and_ignored_by_batch_reads_as_by_spark(caplog):
    o = parse({"maxOffsetsPerTrigger": "5", "minOffsetsPerTrigger": "2", "maxTriggerDelay": "1m"})
    assert o.ending.kind == "latest"
    assert "option 'maxOffsetsPerTrigger' is ignored in batch queries" in caplog.text
    with pytest.raises(KwireOptionError, match=r"'minOffsetsPerTrigger' \(9\) is higher than 'maxOffsetsPerTrigger' \(5\)"):
        parse({"maxOffsetsPerTrigger": "5", "minOffsetsPerTrigger": "9"})
    with pytest.raises(KwireOptionError, match=r"'minOffsetsPerTrigger' \(9\) is higher"):
        parse({"maxOffsetsPerTrigger": "5", "minOffsetsPerTrigger": "9"}, streaming=True)


def test_options_checked_before_batch_or_stream_is_known():
    # What both kinds of read refuse fails at load(); what only one refuses waits for reader()/streamReader().
    assert parse({"startingOffsets": "latest"}, streaming=None).starting.kind == "latest"
    assert parse({"commitOffsetsToGroup": "g", "endingOffsets": "latest"}, streaming=None).commit_group == "g"
    with pytest.raises(KwireOptionError, match="minPartitions"):
        parse({"minPartitions": "0"}, streaming=None)


@pytest.mark.parametrize("name", ["fetchOffset.numRetries", "fetchOffset.retryIntervalMs"])
def test_offset_fetch_retry_options_are_checked_like_sparks(name):
    parse({name: "5"})
    with pytest.raises(KwireOptionError, match=f"'{name}' must be a whole number"):
        parse({name: "often"})


def test_durations():
    assert parse_duration_ms("15m", "x") == 900_000
    assert parse_duration_ms("250", "x") == 250
    assert parse_duration_ms("2 seconds", "x") == 2000
    with pytest.raises(KwireOptionError, match="maxTriggerDelay"):
        parse({"maxTriggerDelay": "soon"}, streaming=True)


def test_kafka_settings_are_accounted_for_when_the_options_are_parsed():
    with pytest.raises(KwireOptionError, match=r"Unknown Kafka option 'kafka.bootstrap.server'\. Did you mean "
                                               r"'kafka.bootstrap.servers'\?"):
        parse({"kafka.bootstrap.server": "h:1"})
    with pytest.raises(KwireOptionError, match=r"Unknown Kafka option 'kafka.totally.made.up'\. kwire takes"):
        WriteOptions.parse({**WRITE, "kafka.totally.made.up": "x"})
    with pytest.raises(KwireOptionError, match=r"'kafka.bootstrap.controllers' is not supported: kwire talks"):
        parse({"kafka.bootstrap.controllers": "h:1"})
    assert parse({"kafka.kwire.aws.region": "eu-west-1", "kafka.client.rack": "az1"}).kafka.client_rack == "az1"


def _ignored_warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "have no effect in kwire" in r.getMessage()]


def test_settings_with_no_effect_are_named_once_per_query_on_the_driver(caplog):
    java_only = {"kafka.max.poll.records": "10", "kafka.heartbeat.interval.ms": "3000"}
    parse(java_only, streaming=None)  # load(): batch or stream is not known yet, and reader() parses again
    assert _ignored_warnings(caplog) == []
    o = parse(java_only)  # reader(): once per batch query
    assert o.kafka.ignored == ("heartbeat.interval.ms", "max.poll.records")
    (warning,) = _ignored_warnings(caplog)
    assert warning.count("'kafka.max.poll.records'") == 1 and "no poll loop" in warning
    assert warning.count("'kafka.heartbeat.interval.ms'") == 1 and "no consumer group" in warning
    caplog.clear()
    stream = {**WRITE, **java_only, "checkpointLocation": f"/tmp/checkpoint-{id(caplog)}"}
    for _ in range(3):  # Spark makes a stream's writer for every micro-batch (and one more to commit it)
        WriteOptions.parse(stream, streaming=True)
        WriteOptions.parse(stream, streaming=True, warn=False)
    assert len(_ignored_warnings(caplog)) == 1


def test_a_typo_fails_at_load_and_a_java_only_setting_warns_once_while_the_read_works(spark, bootstrap, create_topic,
                                                                                        produce, topic_name):
    topic = create_topic(topic_name)
    produce(topic, [(None, b"v%d" % i) for i in range(5)])

    def reader():  # a DataFrameReader keeps the options it was given: a new one for each query
        return spark.read.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)

    with pytest.raises(Exception, match=r"Unknown Kafka option 'kafka.bootstrap.server'\. Did you mean "
                                        r"'kafka.bootstrap.servers'\?"):
        reader().option("kafka.bootstrap.server", bootstrap).load()
    logs = getattr(getattr(spark, "tvf", None), "python_worker_logs", None)  # Spark 4.1+ keeps the workers' logs
    spark.conf.set("spark.sql.pyspark.worker.logging.enabled", "true")

    def warnings() -> int:
        return 0 if logs is None else logs().where("msg LIKE '%''kafka.max.poll.records''%'").count()

    try:
        before = warnings()
        rows = reader().option("kafka.max.poll.records", "2").load().collect()
        after = warnings()
    finally:
        spark.conf.unset("spark.sql.pyspark.worker.logging.enabled")
    assert sorted(r.value for r in rows) == [b"v%d" % i for i in range(5)]
    if logs is not None:
        assert after - before == 1
