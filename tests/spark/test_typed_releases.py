"""Typed data on whichever PySpark release runs this file (`make test` runs it on 4.0, 4.1, 4.2 and the newest,
against the installed wheel): an Avro topic written by confluent-kafka reads as the types Spark's own from_avro
gives on that release (time-micros: bigint on 4.0 and 4.1, TIME from 4.2), a typed write reads back through
confluent-kafka's deserializer, and a typed stream runs on that release's streaming API."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pytest

from spark_kwire.spark.capabilities import TIME_TYPE
from tests.spark.typed_fixtures import (consume_avro, kwire_reader, oracle_frame, produce_avro, registry,  # noqa: F401
                                        rows_as_json, unique)

pytestmark = pytest.mark.timeout(600)

EVENT = {"type": "record", "name": "Event", "namespace": "releases", "fields": [
    {"name": "id", "type": "long"},
    {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "local_at", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
    {"name": "time_of_day", "type": {"type": "long", "logicalType": "time-micros"}},
    {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 8, "scale": 3}},
    {"name": "labels", "type": {"type": "map", "values": {"type": "array", "items": ["null", "string"]}}},
    {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}},
    {"name": "extra", "type": ["null", "int", "string"], "default": None},
]}


def _events(n: int) -> list[dict]:
    base = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    return [{"id": i, "at": base + dt.timedelta(milliseconds=i * 1001), "local_at": dt.datetime(2026, 1, 1, 9)
             + dt.timedelta(microseconds=i), "time_of_day": dt.time(10, 30, i % 60, i),
             "amount": Decimal(f"{i}.125"), "labels": {"x": [None, f"l{i}"]} if i % 2 else {},
             "kind": "AB"[i % 2], "extra": [None, i, f"s{i}"][i % 3]} for i in range(n)]


@pytest.fixture(scope="module")
def event_topic(bootstrap, create_topic, registry):
    topic = create_topic(unique("typed-release"), partitions=2)
    produce_avro(bootstrap, topic, registry.url, EVENT, _events(30), partitions=2)
    return topic


def test_typed_read_equals_from_avro_on_this_release(spark, bootstrap, registry, event_topic):
    ours = kwire_reader(spark, bootstrap, event_topic, registry.url).load()
    oracle = oracle_frame(spark, bootstrap, event_topic, {0: json.dumps(EVENT)})
    assert ours.schema["value"].dataType == oracle.schema["value"].dataType
    shown = ours.schema["value"].dataType["time_of_day"].dataType.simpleString()
    assert shown == ("time(6)" if TIME_TYPE else "bigint")
    assert rows_as_json(ours) == rows_as_json(oracle)


def test_typed_write_reads_back_through_confluent_kafka(spark, bootstrap, create_topic, registry, event_topic):
    out = create_topic(unique("typed-release-out"), partitions=1)
    (kwire_reader(spark, bootstrap, event_topic, registry.url).load()
     .selectExpr("struct(value.id AS id, value.amount AS amount, value.labels AS labels, value.kind AS kind) AS value")
     .write.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("topic", out)
     .option("valueFormat", "avro").option("schema.registry.url", registry.url)
     .option("auto.register.schemas", "true").mode("append").save())
    got = sorted((v["id"], v["amount"], v["labels"], v["kind"]) for _k, v in consume_avro(bootstrap, out,
                                                                                        registry.url, 30))
    assert got == [(e["id"], e["amount"], e["labels"], e["kind"]) for e in _events(30)]


def test_typed_stream_on_this_release(spark, bootstrap, registry, event_topic, tmp_path):
    name = f"typed_release_{unique('q').split('-')[1]}"
    query = (kwire_reader(spark, bootstrap, event_topic, registry.url, stream=True, mode="PERMISSIVE").load()
             .selectExpr("value.id", "_corrupt_record IS NULL AS fine").writeStream.format("memory").queryName(name)
             .option("checkpointLocation", str(tmp_path / "cp")).trigger(processingTime="200 milliseconds").start())
    try:
        query.processAllAvailable()
        assert query.exception() is None
        rows = spark.sql(f"SELECT id, fine FROM {name}").collect()
    finally:
        query.stop()
    assert sorted((r.id, r.fine) for r in rows) == [(i, True) for i in range(30)]
