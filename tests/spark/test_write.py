"""Batch writes: round trips read back by independent clients, partition agreement with the Java producer,
and errors raised before anything is sent."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from spark_kwire import admin
from harness import run_java_tool

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


def write(df, bootstrap, mode="append", **options):
    writer = df.write.format("kwire").mode(mode).option("kafka.bootstrap.servers", bootstrap)
    for key, value in options.items():
        writer = writer.option(key, value)
    writer.save()


def sample_rows(spark, n: int):
    """Keys with nulls, string values, headers with a null value, as Spark's sink accepts them."""
    return spark.range(n).select(
        F.when(F.col("id") % 5 == 0, F.lit(None)).otherwise(F.concat(F.lit("k"), (F.col("id") % 17).cast("string")))
        .cast("binary").alias("key"),
        F.concat(F.lit("value-"), F.col("id").cast("string")).alias("value"),
        F.when(F.col("id") % 3 == 0, F.array(
            F.struct(F.lit("trace").alias("key"), F.col("id").cast("string").cast("binary").alias("value")),
            F.struct(F.lit("nothing").alias("key"), F.lit(None).cast("binary").alias("value")),
        )).otherwise(F.array().cast("array<struct<key:string,value:binary>>")).alias("headers"),
    )


def consume_all(bootstrap, topic, expected: int):
    from confluent_kafka import Consumer

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"check-{topic}", "auto.offset.reset": "earliest",
                         "enable.auto.commit": False})
    consumer.subscribe([topic])
    got = []
    import time

    deadline = time.time() + 60
    while len(got) < expected and time.time() < deadline:
        msg = consumer.poll(1.0)
        if msg is not None and not msg.error():
            got.append(msg)
    # Anything beyond `expected` would be a duplicate: give it a moment to show up.
    extra = consumer.poll(2.0)
    consumer.close()
    assert extra is None, f"more records than written in {topic}"
    return got


@pytest.mark.parametrize("codec", CODECS)
def test_round_trip_every_codec_read_by_kwire_and_librdkafka(spark, bootstrap, create_topic, topic_name, codec):
    create_topic(topic_name, partitions=3)
    rows = sample_rows(spark, 500)
    write(rows, bootstrap, topic=topic_name, **{"kafka.compression.type": codec})
    back = (spark.read.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic_name)
            .option("includeHeaders", "true").load())
    expected = {(r.key, r.value.encode(), tuple((h.key, h.value) for h in r.headers)) for r in rows.collect()}
    # Like Spark's source, a record without headers reads back with headers = null.
    got = {(r.key, r.value, tuple((h.key, h.value) for h in r.headers or ())) for r in back.collect()}
    assert back.count() == 500 and got == expected
    messages = consume_all(bootstrap, topic_name, 500)
    from_librdkafka = {(m.key(), m.value(), tuple(m.headers() or ())) for m in messages}
    assert from_librdkafka == expected


def test_round_trip_read_by_java_console_consumer(spark, kafka, create_topic, topic_name):
    create_topic(topic_name, partitions=2)
    rows = spark.range(200).select(F.concat(F.lit("k"), F.col("id").cast("string")).alias("key"),
                                   F.concat(F.lit("java-sees-"), F.col("id").cast("string")).alias("value"))
    write(rows, kafka.bootstrap_servers, topic=topic_name, **{"kafka.compression.type": "zstd"})
    out = run_java_tool(
        "org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", kafka.bootstrap_servers,
        "--topic", topic_name, "--from-beginning", "--max-messages", "200", "--timeout-ms", "30000",
        "--property", "print.key=true", "--property", "key.separator=|",
    ).stdout
    lines = sorted(line for line in out.splitlines() if "|" in line)
    assert lines == sorted(f"k{i}|java-sees-{i}" for i in range(200))


@pytest.mark.parametrize("partitions", [1, 3, 7, 64])
def test_keys_land_where_the_java_producer_puts_them(spark, kafka, create_topic, topic_name, partitions):
    java_topic, kwire_topic = f"{topic_name}-java", f"{topic_name}-kwire"
    create_topic(java_topic, partitions=partitions)
    create_topic(kwire_topic, partitions=partitions)
    keys = [f"user-{i}" for i in range(300)] + ["", "ключ", "🔑"]
    run_java_tool(
        "org.apache.kafka.tools.ConsoleProducer", "--bootstrap-server", kafka.bootstrap_servers, "--topic", java_topic,
        "--property", "parse.key=true", "--property", "key.separator=\t",
        input="".join(f"{k}\tv\n" for k in keys if k),
    )
    write(spark.createDataFrame([(k, "v") for k in keys if k], "key string, value string"),
          kafka.bootstrap_servers, topic=kwire_topic)

    def placement(topic):
        df = (spark.read.format("kwire").option("kafka.bootstrap.servers", kafka.bootstrap_servers)
              .option("subscribe", topic).load())
        return {r.key.decode(): r.partition for r in df.select("key", "partition").collect()}

    java, ours = placement(java_topic), placement(kwire_topic)
    assert len(java) == len(keys) - 1 and java == ours
    if partitions > 1:
        assert len(set(ours.values())) > 1


def test_explicit_partition_column_and_topic_column(spark, bootstrap, create_topic, topic_name):
    a, b = f"{topic_name}-a", f"{topic_name}-b"
    create_topic(a, partitions=4)
    create_topic(b, partitions=2)
    rows = spark.range(100).select(
        F.when(F.col("id") % 2 == 0, F.lit(a)).otherwise(F.lit(b)).alias("topic"),
        (F.col("id") % 2).cast("int").alias("partition"),
        F.col("id").cast("string").alias("value"),
    )
    write(rows, bootstrap)
    assert admin.latest_offsets(bootstrap, a) == {0: 50, 1: 0, 2: 0, 3: 0}
    assert admin.latest_offsets(bootstrap, b) == {0: 0, 1: 50}


def test_null_keys_are_spread_evenly(spark, bootstrap, create_topic, topic_name):
    create_topic(topic_name, partitions=4)
    write(spark.range(4000).select(F.col("id").cast("string").alias("value")), bootstrap, topic=topic_name)
    counts = admin.latest_offsets(bootstrap, topic_name)
    assert sum(counts.values()) == 4000 and min(counts.values()) >= 500


@pytest.mark.parametrize("select,message", [
    ("CAST(id AS INT) AS value", "Column 'value' has unsupported type int; value must be string or binary"),
    ("CAST(id AS STRING) AS key", "Required column 'value' is missing"),
    ("CAST(id AS STRING) AS value, id AS partition", "Column 'partition' has unsupported type bigint; partition must be int"),
    ("CAST(id AS STRING) AS Value", "Required column 'value' is missing.*'Value' is not 'value'"),
    ("CAST(id AS STRING) AS value, array(1) AS headers", "Column 'headers'"),
])
def test_wrong_columns_fail_before_anything_is_sent(spark, bootstrap, create_topic, topic_name, select, message):
    create_topic(topic_name, partitions=1)
    with pytest.raises(Exception, match=message):
        write(spark.range(10).selectExpr(*select.split(", ")), bootstrap, topic=topic_name)
    assert admin.latest_offsets(bootstrap, topic_name) == {0: 0}


def test_null_topic_and_missing_topic_fail_clearly(spark, bootstrap, create_topic, topic_name):
    create_topic(topic_name, partitions=1)
    rows = spark.range(3).selectExpr("CAST(NULL AS STRING) AS topic", "CAST(id AS STRING) AS value")
    with pytest.raises(Exception, match="Null topic present in the data"):
        write(rows, bootstrap)
    with pytest.raises(Exception, match="Required column 'topic' is missing"):
        write(spark.range(3).selectExpr("CAST(id AS STRING) AS value"), bootstrap)
    with pytest.raises(Exception, match="no-such-topic-for-write"):
        write(spark.range(3).selectExpr("CAST(id AS STRING) AS value"), bootstrap, topic="no-such-topic-for-write")


def test_overwrite_mode_is_refused(spark, bootstrap, topic_name):
    with pytest.raises(Exception, match="save mode 'overwrite' and INSERT OVERWRITE are refused"):
        write(spark.range(3).selectExpr("CAST(id AS STRING) AS value"), bootstrap, mode="overwrite", topic=topic_name)
