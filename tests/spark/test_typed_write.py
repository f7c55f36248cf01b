"""Typed writes (valueFormat=avro): kwire encodes struct columns with the subject's schema (or registers the
DataFrame's), and confluent-kafka's AvroDeserializer, an independent reader, reads back the very values written; a
DataFrame that does not fit the schema fails before anything is written."""

from __future__ import annotations

import datetime as dt
import json
import struct
from decimal import Decimal

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

from spark_kwire import admin
from tests.spark.typed_fixtures import consume_avro, kwire_reader, registry, unique  # noqa: F401

pytestmark = pytest.mark.timeout(900)

ROW_TYPE = ("id bigint, qty int, name string, score double, ratio float, ok boolean, raw binary, "
            "price decimal(10,2), day date, at timestamp, local_at timestamp_ntz, tags array<string>, "
            "counts map<string,int>, address struct<city:string,zip:int>, note string")
UTC = dt.timezone.utc


def _rows(n: int) -> list[tuple]:
    return [(i, i % 7, f"name-{i}-é", i / 3, 1.5, i % 2 == 0, bytes([i % 256]) * (i % 4), Decimal(f"{i}.{i % 100:02d}"),
             dt.date(2024, 1, 1) + dt.timedelta(days=i), dt.datetime(2025, 6, 1, 12, tzinfo=UTC) + dt.timedelta(seconds=i),
             dt.datetime(2025, 6, 1, 8) + dt.timedelta(microseconds=i), ["a"] * (i % 3), {"k": i} if i % 2 else {},
             (f"city-{i}", 75000 + i), None if i % 3 else f"note-{i}") for i in range(n)]


def _as_written(row: tuple) -> dict:
    """A row as fastavro (under confluent-kafka's AvroDeserializer) gives it back: timestamps as UTC datetimes,
    timestamp_ntz as naive ones, decimals from their fixed bytes, structs as dicts."""
    names = ["id", "qty", "name", "score", "ratio", "ok", "raw", "price", "day", "at", "local_at", "tags", "counts",
             "address", "note"]
    value = dict(zip(names, row))
    value["address"] = {"city": row[13][0], "zip": row[13][1]}
    return value


def _writer(df, bootstrap, topic, registry_url, **options):
    writer = df.write.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("topic", topic)
    for key, value in {"valueFormat": "avro", "schema.registry.url": registry_url, **options}.items():
        writer = writer.option(key, str(value))
    return writer.mode("append")


def _ids_written(bootstrap, topic, registry_url, expected, partitions=1) -> set[int]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("ids"), "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    ids, seen = set(), 0
    try:
        while seen < expected:
            for message in consumer.consume(500, timeout=1):
                ids.add(struct.unpack(">I", message.value()[1:5])[0])
                seen += 1
    finally:
        consumer.close()
    return ids


def test_registered_from_the_dataframe_and_read_back_by_confluent_kafka(spark, bootstrap, create_topic, registry):
    topic = create_topic(unique("typed-write-auto"), partitions=2)
    rows = _rows(60)
    df = spark.createDataFrame(rows, ROW_TYPE).selectExpr(
        "CAST(id AS STRING) AS key", "struct(id, qty, name, score, ratio, ok, raw, price, day, at, local_at, tags, "
        "counts, address, note) AS value")
    _writer(df, bootstrap, topic, registry.url, **{"auto.register.schemas": "true"}).save()
    registered = SchemaRegistryClient({"url": registry.url}).get_latest_version(f"{topic}-value")
    schema = json.loads(registered.schema.schema_str)
    assert schema["name"] == "topLevelRecord"  # spark-avro's toAvroType, as to_avro would write
    got = consume_avro(bootstrap, topic, registry.url, 60, partitions=2)
    assert sorted((v["id"], v) for _k, v in got) == sorted((r[0], _as_written(r)) for r in rows)
    assert {k for k, _v in got} == {str(r[0]).encode() for r in rows}
    # and kwire reads its own writes back to the same Spark rows
    back = kwire_reader(spark, bootstrap, topic, registry.url).load().select("value.*")
    assert sorted(back.collect()) == sorted(spark.createDataFrame(rows, ROW_TYPE).collect())


ORDER = {"type": "record", "name": "Order", "namespace": "shop", "fields": [
    {"name": "id", "type": "long"},
    {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID", "SHIPPED"]}},
    {"name": "total", "type": {"type": "fixed", "name": "Money", "size": 8, "logicalType": "decimal",
                               "precision": 12, "scale": 2}},
    {"name": "lines", "type": {"type": "array", "items": {"type": "record", "name": "Line", "fields": [
        {"name": "sku", "type": "string"}, {"name": "qty", "type": "int"}]}}},
    {"name": "coupon", "type": ["null", "string"], "default": None},
    {"name": "channel", "type": "string", "default": "web"},
]}


def _register(registry_url, subject, schema) -> int:
    return SchemaRegistryClient({"url": registry_url}).register_schema(subject, Schema(json.dumps(schema), "AVRO"))


def test_written_with_the_subjects_schema_latest_or_a_given_version(spark, bootstrap, create_topic, registry):
    topic = create_topic(unique("typed-write-latest"), partitions=1)
    v1 = _register(registry.url, f"{topic}-value", ORDER)
    v2_schema = {**ORDER, "fields": ORDER["fields"] + [{"name": "gift", "type": "boolean", "default": False}]}
    v2 = _register(registry.url, f"{topic}-value", v2_schema)
    df = spark.createDataFrame(
        [(i, ["NEW", "PAID", "SHIPPED"][i % 3], Decimal(f"{i}9.95"), [(f"sku-{i}", i)], None if i % 2 else "TEN")
         for i in range(12)],
        "id bigint, status string, total decimal(12,2), lines array<struct<sku:string,qty:int>>, coupon string")
    value = df.selectExpr("struct(id, status, total, lines, coupon) AS value")
    _writer(value, bootstrap, topic, registry.url).save()  # the latest: v2 (channel and gift take their defaults)
    _writer(value, bootstrap, topic, registry.url, valueSchemaVersion=1).save()
    assert _ids_written(bootstrap, topic, registry.url, 24) == {v1, v2}
    got = consume_avro(bootstrap, topic, registry.url, 24)
    expected = [{"id": i, "status": ["NEW", "PAID", "SHIPPED"][i % 3], "total": Decimal(f"{i}9.95"),
                 "lines": [{"sku": f"sku-{i}", "qty": i}], "coupon": None if i % 2 else "TEN", "channel": "web"}
                for i in range(12)]
    # each write's two Spark tasks send to the one partition concurrently: its rows come in either task's order
    by_id = lambda values: sorted(values, key=lambda v: v["id"])  # noqa: E731
    assert by_id(v for _k, v in got[:12]) == [{**e, "gift": False} for e in expected]
    assert by_id(v for _k, v in got[12:]) == expected


def test_a_dataframe_that_does_not_fit_fails_before_anything_is_written(spark, bootstrap, create_topic, registry):
    topic = create_topic(unique("typed-write-misfit"), partitions=1)
    _register(registry.url, f"{topic}-value", ORDER)
    cases = {
        "lines[].qty": "struct(1L AS id, 'NEW' AS status, CAST(1 AS DECIMAL(12,2)) AS total, "
                       "array(struct('a' AS sku, 'two' AS qty)) AS lines)",
        "status": "struct(1L AS id, 5 AS status, CAST(1 AS DECIMAL(12,2)) AS total, "
                  "array(struct('a' AS sku, 2 AS qty)) AS lines)",
        "id": "struct('NEW' AS status, CAST(1 AS DECIMAL(12,2)) AS total, array(struct('a' AS sku, 2 AS qty)) AS lines)",
        "extra": "struct(1L AS id, 'NEW' AS status, CAST(1 AS DECIMAL(12,2)) AS total, "
                 "array(struct('a' AS sku, 2 AS qty)) AS lines, 3 AS extra)",
    }
    for field, value in cases.items():
        with pytest.raises(Exception) as info:
            _writer(spark.range(5).selectExpr(f"{value} AS value"), bootstrap, topic, registry.url).save()
        text = str(info.value)
        assert "does not fit" in text and field in text and "Nothing was written" in text, text
    assert admin.latest_offsets(bootstrap, topic) == {0: 0}


def test_a_null_the_schema_does_not_allow_fails_the_task_naming_row_and_field(spark, bootstrap, create_topic,
                                                                              registry):
    topic = create_topic(unique("typed-write-null"), partitions=1)
    _register(registry.url, f"{topic}-value", ORDER)
    df = spark.createDataFrame([(1, "NEW"), (2, None)], "id bigint, status string").selectExpr(
        "struct(id, status, CAST(1 AS DECIMAL(12,2)) AS total, array(struct('a' AS sku, 2 AS qty)) AS lines) AS value")
    with pytest.raises(Exception) as info:
        _writer(df.coalesce(1), bootstrap, topic, registry.url).save()
    text = str(info.value)
    assert "Row 1" in text and "status" in text and "were not sent" in text
    assert admin.latest_offsets(bootstrap, topic) == {0: 0}


def test_typed_keys_and_subject_rules(spark, bootstrap, create_topic, registry):
    topic = create_topic(unique("typed-write-key"), partitions=3)
    df = spark.range(30).selectExpr("struct(id, CAST(id % 5 AS STRING) AS region) AS key",
                                    "struct(id, 'x' AS payload) AS value")
    options = {"keyFormat": "avro", "auto.register.schemas": "true"}
    _writer(df, bootstrap, topic, registry.url, **options).save()
    got = consume_avro(bootstrap, topic, registry.url, 30, partitions=3, typed_key=True)
    assert sorted((k["id"], k["region"], v["id"]) for k, v in got) == [(i, str(i % 5), i) for i in range(30)]
    # A topic-named subject needs the topic option: rows of a 'topic' column may go to topics of other subjects.
    with pytest.raises(Exception, match="needs the 'topic' option"):
        (df.selectExpr("key", "value", f"'{topic}' AS topic").write.format("kwire")
         .option("kafka.bootstrap.servers", bootstrap).option("valueFormat", "avro")
         .option("schema.registry.url", registry.url).mode("append").save())
    # use.latest.version=false: the DataFrame's schema must be registered already (Confluent's lookup).
    other = create_topic(unique("typed-write-lookup"), partitions=1)
    with pytest.raises(Exception) as info:
        _writer(df.select("value"), bootstrap, other, registry.url, **{"use.latest.version": "false"}).save()
    assert "40401" in str(info.value) or "40403" in str(info.value)
    _writer(df.select("value"), bootstrap, other, registry.url, **{"auto.register.schemas": "true"}).save()
    _writer(df.select("value"), bootstrap, other, registry.url, **{"use.latest.version": "false"}).save()
    assert admin.latest_offsets(bootstrap, other) == {0: 60}
