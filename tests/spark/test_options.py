"""Option parsing: Spark's names and semantics, and clear errors that name the option and what is accepted."""

from __future__ import annotations

import pytest

from spark_kwire.spark.options import KwireOptionError, ReadOptions, WriteOptions, parse_duration_ms

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
    with pytest.raises(KwireOptionError, match="not valid in streaming"):
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
    assert o.kafka["request.timeout.ms"] == "5000" and o.kafka["client.id"] == "me"


def test_max_decompressed_bytes_reaches_the_client_config():
    from spark_kwire.client.config import ClientConfig

    o = parse({"maxDecompressedBytes": "1048576"})
    assert ClientConfig.from_kafka_options(o.kafka).max_decompressed_bytes == 1048576
    assert ClientConfig.from_kafka_options(parse().kafka).max_decompressed_bytes == 256 * 1024 * 1024


def test_poll_timeout_bounds_fetch_retries_unless_kafka_setting_given():
    assert parse({"kafkaConsumer.pollTimeoutMs": "5000"}).kafka["default.api.timeout.ms"] == "5000"
    both = parse({"kafkaConsumer.pollTimeoutMs": "5000", "kafka.default.api.timeout.ms": "7000"})
    assert both.kafka["default.api.timeout.ms"] == "7000"
    assert "default.api.timeout.ms" not in parse().kafka
    with pytest.raises(KwireOptionError, match="kafkaConsumer.pollTimeoutMs"):
        parse({"kafkaConsumer.pollTimeoutMs": "soon"})


def test_write_options():
    w = WriteOptions.parse({"kafka.bootstrap.servers": "h:1", "topic": "out"})
    assert w.topic == "out"
    with pytest.raises(KwireOptionError, match="not supported"):
        WriteOptions.parse({"kafka.bootstrap.servers": "h:1", "kafka.value.serializer": "x"})
    with pytest.raises(KwireOptionError, match="Unknown option 'subscribe' for a kwire write"):
        WriteOptions.parse({"kafka.bootstrap.servers": "h:1", "subscribe": "x"})


def test_durations():
    assert parse_duration_ms("15m", "x") == 900_000
    assert parse_duration_ms("250", "x") == 250
    assert parse_duration_ms("2 seconds", "x") == 2000
    with pytest.raises(KwireOptionError, match="maxTriggerDelay"):
        parse({"maxTriggerDelay": "soon"}, streaming=True)
