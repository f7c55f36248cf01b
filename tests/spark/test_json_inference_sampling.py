"""Sampling a topic for JSON schema inference at load(), against a real broker: which records, how many, within
what time; read_committed and compressed topics; an empty topic; and the schema of the sample equal to what
spark.read.json infers from the same topic read by Spark's own kafka source."""

from __future__ import annotations

import json


import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from spark_kwire.formats.json.inference.infer import infer_schema
from spark_kwire.spark.errors import KwireOptionError
from spark_kwire.spark.options.parsing import ReadOptions
from spark_kwire.spark.options.inference import parse_sampling
from spark_kwire.spark.options.payloads import SideSpec
from spark_kwire.spark.reading.sampling import sample_values
from spark_kwire.spark.typed.spark_types import spark_type

pytestmark = pytest.mark.timeout(180)


def read_options(bootstrap: str, topic: str, **extra) -> ReadOptions:
    """The options as load() parses them: batch or stream not known yet."""
    return ReadOptions.parse({"kafka.bootstrap.servers": bootstrap, "subscribe": topic, **extra}, streaming=None)


def documents(values) -> list[dict]:
    return [json.loads(v) for v in values.to_pylist()]


@pytest.fixture(scope="module")
def three_partitions(bootstrap, create_topic, produce):
    """A topic of 3 partitions holding 40 records each, {"p": partition, "i": index}, with a null every 10th."""
    topic = create_topic(f"json-sampling-{__import__('uuid').uuid4().hex[:8]}", partitions=3)
    produce(topic, [(f"k{p}-{i}".encode(), None if i % 10 == 9 else json.dumps({"p": p, "i": i}).encode(), None, None,
                     p) for p in range(3) for i in range(40)])
    return topic


def test_the_last_records_of_each_partition_by_default(bootstrap, three_partitions):
    values = sample_values(read_options(bootstrap, three_partitions), records_per_partition=10)
    # the last 10 records of each partition, nulls (indexes 39) left out
    assert sorted((d["p"], d["i"]) for d in documents(values)) == [(p, i) for p in range(3) for i in range(30, 39)]


def test_the_range_the_query_reads(bootstrap, three_partitions):
    options = read_options(bootstrap, three_partitions,
                           startingOffsets=json.dumps({three_partitions: {"0": 0, "1": 5, "2": 35}}),
                           endingOffsets=json.dumps({three_partitions: {"0": 12, "1": 8, "2": -1}}))
    values = sample_values(options, records_per_partition=4)
    assert sorted((d["p"], d["i"]) for d in documents(values)) == [
        (0, 8), (0, 10), (0, 11), (1, 5), (1, 6), (1, 7), (2, 36), (2, 37), (2, 38)]


def test_keys_and_an_empty_range_samples_the_tail(bootstrap, three_partitions):
    """A stream starting at 'latest' reads nothing yet: the tail is sampled."""
    keys = sample_values(read_options(bootstrap, three_partitions, startingOffsets="latest"), "key",
                         records_per_partition=2)
    assert sorted(keys.to_pylist()) == [f"k{p}-{i}".encode() for p in range(3) for i in (38, 39)]


def test_an_empty_topic_asks_for_the_schema(bootstrap, create_topic, topic_name):
    create_topic(topic_name, partitions=2)
    with pytest.raises(KwireOptionError, match=r"no records to sample .* give it with option 'valueSchema'"):
        sample_values(read_options(bootstrap, topic_name))


def test_only_tombstones_ask_for_the_schema(bootstrap, create_topic, produce, topic_name):
    create_topic(topic_name)
    produce(topic_name, [(b"k", None)] * 3)
    with pytest.raises(KwireOptionError, match=r"3 sampled record\(s\) all have a null value"):
        sample_values(read_options(bootstrap, topic_name))


def test_the_time_bound(bootstrap, three_partitions):
    with pytest.raises(KwireOptionError, match="no record could be fetched within samplingTimeoutMs=1"):
        sample_values(read_options(bootstrap, three_partitions), timeout_ms=1)


def test_read_committed_skips_aborted_records_and_still_finds_enough(bootstrap, create_topic, topic_name):
    """Transaction markers and aborted records take offsets: the window widens backwards to find the last N
    committed records, as the read would return them."""
    from confluent_kafka import Producer

    create_topic(topic_name)
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": topic_name, "linger.ms": 5})
    producer.init_transactions(30)
    for round_ in range(4):
        for outcome in ("commit", "abort"):
            producer.begin_transaction()
            for i in range(3):
                producer.produce(topic_name, value=json.dumps({outcome: round_, "i": i}).encode())
            producer.flush(30)
            (producer.commit_transaction if outcome == "commit" else producer.abort_transaction)(30)
    committed = read_options(bootstrap, topic_name, **{"kafka.isolation.level": "read_committed"})
    values = documents(sample_values(committed, records_per_partition=5))
    assert values == [{"commit": 2, "i": 1}, {"commit": 2, "i": 2}, {"commit": 3, "i": 0}, {"commit": 3, "i": 1},
                      {"commit": 3, "i": 2}]
    uncommitted = documents(sample_values(read_options(bootstrap, topic_name), records_per_partition=5))
    assert {"abort": 3, "i": 2} in uncommitted and len(uncommitted) == 5


@pytest.mark.parametrize("codec", ["gzip", "lz4", "zstd", "snappy"])
def test_compressed_topics(bootstrap, create_topic, produce, topic_name, codec):
    create_topic(topic_name)
    produce(topic_name, [(None, json.dumps({"n": i, "codec": codec}).encode()) for i in range(50)],
            **{"compression.type": codec, "linger.ms": 50})
    values = documents(sample_values(read_options(bootstrap, topic_name), records_per_partition=20))
    assert values == [{"n": i, "codec": codec} for i in range(30, 50)]


def test_sampling_settings():
    inferred = [SideSpec("value", "json")]  # a side read as JSON with no schema
    assert parse_sampling({}, inferred) == (1000, 30000)
    assert parse_sampling({"samplingrecords": "50", "samplingtimeoutms": "2000"}, inferred) == (50, 2000)
    with pytest.raises(KwireOptionError, match="samplingRecords"):
        parse_sampling({"samplingrecords": "0"}, inferred)


def test_the_schema_of_a_whole_small_topic_is_spark_read_jsons(spark, bootstrap, create_topic, produce, topic_name):
    """Fewer records than samplingRecords: the sample is the topic, and its schema is what spark.read.json infers
    from the topic read by Spark's built-in kafka source (CAST(value AS STRING), tombstones left out there as
    kwire leaves them out: Spark would count them as malformed records)."""
    create_topic(topic_name, partitions=2)
    docs = ['{"id":1,"user":{"name":"a"},"tags":["x"]}', '{"id":2.5,"user":{"name":"b","age":30}}',
            '{"id":"three","extra":null}', "not json", '[{"batch":true}]', None, '{"user":"plain"}']
    produce(topic_name, [(None, d.encode() if d else None, None, None, n % 2) for n, d in enumerate(docs)])
    values = sample_values(read_options(bootstrap, topic_name))
    frame = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic_name)
             .load().where("value IS NOT NULL").selectExpr("CAST(value AS STRING) AS v"))
    strings = getattr(frame._jdf, "as")(spark.sparkContext._jvm.org.apache.spark.sql.Encoders.STRING())
    expected = DataFrame(spark._jsparkSession.read().json(strings), spark).schema  # spark.read.json(Dataset[String])
    assert spark_type(infer_schema(values)) == expected


# -- inference at load(): spark.read.format("kwire") with valueFormat=json and no valueSchema ----------------------

def kwire_json(spark, bootstrap, topic, **options):
    reader = (spark.read.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
              .option("valueFormat", "json"))
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def spark_read_json(spark, bootstrap, topic, **options):
    """spark.read.json over the topic's values as Spark's built-in kafka source reads them (tombstones left out)."""
    frame = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
             .load().where("value IS NOT NULL").selectExpr("CAST(value AS STRING) AS v"))
    strings = getattr(frame._jdf, "as")(spark.sparkContext._jvm.org.apache.spark.sql.Encoders.STRING())
    reader = spark._jsparkSession.read()
    for key, value in options.items():
        reader = reader.option(key, value)
    return DataFrame(reader.json(strings), spark)


@pytest.fixture(scope="module")
def mixed_topic(bootstrap, create_topic, produce):
    """Documents that every inference option changes: widening, conflicts, nesting, comments, nulls, decimals."""
    topic = create_topic(f"json-load-{__import__('uuid').uuid4().hex[:8]}", partitions=2)
    docs = ['{"id":1,"user":{"name":"a"},"tags":["x"],"price":1.25,"gone":null}',
            '{"id":2.5,"user":{"name":"b","age":30},"price":2}', '{"id":"three","extra":[]}',
            '{"user":"plain", /* note */ "price":3.5}', "not json", '[{"batch":true}]', None,
            '{"big":123456789012345678901234567890,"when":"2024-05-01T12:30:00Z"}']
    produce(topic, [(None, d.encode() if d else None, None, None, n % 2) for n, d in enumerate(docs)])
    return topic


@pytest.mark.parametrize("options", [
    {}, {"primitivesAsString": "true"}, {"prefersDecimal": "true", "allowComments": "true"},
    {"dropFieldIfAllNull": "true", "allowComments": "true"}, {"mode": "FAILFAST", "allowComments": "true"}
    ], ids=["defaults", "primitivesAsString", "prefersDecimal-allowComments", "dropFieldIfAllNull", "failfast"])
def test_load_infers_what_spark_read_json_infers(spark, bootstrap, mixed_topic, options):
    """The value column's type is the StructType spark.read.json infers from the same strings with the same
    options, and its rows are from_json's with that schema (the built-in source + from_json, the oracle)."""
    if options.get("mode") == "FAILFAST":
        with pytest.raises(Exception, match="Cannot infer the schema .* malformed JSON"):
            kwire_json(spark, bootstrap, mixed_topic, **options)
        return
    expected = spark_read_json(spark, bootstrap, mixed_topic, **options).schema
    ours = kwire_json(spark, bootstrap, mixed_topic, **options)
    assert ours.schema["value"].dataType == expected
    json_options = {k: v for k, v in options.items() if k != "mode"}
    oracle = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("subscribe", mixed_topic)
              .load().select("partition", "offset", F.from_json(F.col("value").cast("string"), expected,
                                                                 json_options).alias("value")))
    key = ["partition", "offset"]
    assert sorted(ours.select(*key, "value").collect()) == sorted(oracle.collect())


def test_load_takes_infer_timestamp_as_spark_read_json(spark, bootstrap, create_topic, produce, topic_name):
    """inferTimestamp, as spark.read.json takes it: off (the default) timestamps stay strings; on, the strings
    Spark's default timestamp parser reads (a date, a year, a time of day, a zone named by region) are TIMESTAMP,
    the others (an invalid month, an array mixing a timestamp and a word) stay strings. The rows are from_json's
    with that schema."""
    create_topic(topic_name, partitions=2)
    docs = ['{"t":"2024-05-01T12:30:00Z","d":"2024-05-01"}', '{"h":"12:00:00","y":"2024","s":"x"}',
            '{"z":"2024-05-01 10:00:00 Europe/Paris","n":"2024-13-01"}', '{"m":["2024-05-01T00:00:00","x"]}',
            '{"t":"2024-05-02T08:00:00.123+02:00","e":""}', None]
    produce(topic_name, [(None, d.encode() if d else None, None, None, n % 2) for n, d in enumerate(docs)])
    inferred = {}
    for infer in ("false", "true"):
        expected = spark_read_json(spark, bootstrap, topic_name, inferTimestamp=infer).schema
        ours = kwire_json(spark, bootstrap, topic_name, inferTimestamp=infer)
        assert ours.schema["value"].dataType == expected, infer
        oracle = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic_name)
                  .load().select("partition", "offset", F.from_json(F.col("value").cast("string"), expected)
                                 .alias("value")))
        assert sorted(ours.select("partition", "offset", "value").collect()) == sorted(oracle.collect())
        inferred[infer] = {f.name: f.dataType.simpleString() for f in expected.fields}
    assert inferred["false"]["t"] == "string" and inferred["true"]["t"] == "timestamp"
    assert {name for name, kind in inferred["true"].items() if kind == "timestamp"} == {"d", "h", "t", "y", "z"}


@pytest.mark.parametrize("docs, message", [
    (['{}', '{"a":{}}', '{"b":[]}'], "has no field .* nothing to type"),
    (['{"a":1,"A":2}'], r"same ignoring case \('A' and 'a'\)"),
    (['{"s":[{"b":1}]}', '{"s":[{"B":"x"}]}'], r"'s.B' and 's.b'"),
])
def test_load_refuses_a_schema_with_nothing_or_twice_the_same_name(spark, bootstrap, create_topic, produce,
                                                                   topic_name, docs, message):
    create_topic(topic_name)
    produce(topic_name, [(None, d.encode()) for d in docs])
    options = {"dropFieldIfAllNull": "true"} if "{}" in docs else {}
    with pytest.raises(Exception, match=message):
        kwire_json(spark, bootstrap, topic_name, **options)


def test_stream_options_are_refused_by_batch_reads(spark, bootstrap, mixed_topic, tmp_path):
    frame = kwire_json(spark, bootstrap, mixed_topic, schemaLocation=str(tmp_path), samplingRecords="5")
    with pytest.raises(Exception, match="schemaLocation.*applies to streaming reads"):
        frame.collect()
    with pytest.raises(Exception, match="samplingRecords' applies to a plain JSON side whose schema is inferred"):
        kwire_json(spark, bootstrap, mixed_topic, samplingRecords="5", valueSchema="a INT")
