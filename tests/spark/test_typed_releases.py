"""Typed data on whichever PySpark release runs this file (`make test` runs it on 4.0, 4.1, 4.2 and the newest,
against the installed wheel): an Avro topic written by confluent-kafka reads as the types Spark's own from_avro
gives on that release (time-micros: bigint on 4.0 and 4.1, TIME from 4.2), a typed write reads back through
confluent-kafka's deserializer, and a typed stream runs on that release's streaming API; Protobuf's Timestamp
and Duration (timestamp, interval day to second) and JSON Schema's dates and maps read and write back on it; plain
JSON (valueFormat=json) reads as that release's from_json reads it, and writes the text its to_json writes."""

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


CLOCK = """syntax = "proto3";
package releases;
import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
message Clock {
  int64 id = 1;
  google.protobuf.Timestamp at = 2;
  google.protobuf.Duration took = 3;
  map<string, int64> counts = 4;
}
"""
SHIFT = {"type": "object", "required": ["id"], "properties": {
    "id": {"type": "integer"}, "day": {"type": "string", "format": "date"},
    "at": {"type": "string", "format": "date-time"}, "hours": {"type": "object", "additionalProperties":
                                                                   {"type": "number"}}}}


def test_protobuf_and_json_schema_on_this_release(spark, bootstrap, create_topic, registry):
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer

    from tests.spark.typed_fixtures import consume_deserialized, produce_raw, produce_serialized

    client = SchemaRegistryClient({"url": registry.url})
    clock_topic, shift_topic = create_topic(unique("pb-release")), create_topic(unique("js-release"))
    clock_id = client.register_schema(f"{clock_topic}-value", Schema(CLOCK, "PROTOBUF"))
    # Clock{id: i, at: {seconds: 1.7e9 + i, nanos: 5000}, took: {seconds: i, nanos: 1000}, counts: {"k": i}},
    # encoded by hand from protobuf's wire format: field numbers and types, lengths, varints
    def clock(i: int) -> bytes:
        def varint(n: int) -> bytes:
            out = b""
            while True:
                out += bytes([(n & 0x7F) | (0x80 if n > 0x7F else 0)])
                n >>= 7
                if not n:
                    return out

        def nested(field: int, body: bytes) -> bytes:
            return bytes([field << 3 | 2]) + varint(len(body)) + body

        at = b"\x08" + varint(1_700_000_000 + i) + b"\x10" + varint(5000)
        took = b"\x08" + varint(i) + b"\x10" + varint(1000)
        entry = nested(1, b"k") + b"\x10" + varint(i)
        body = b"\x08" + varint(i) + nested(2, at) + nested(3, took) + nested(4, entry)
        return b"\x00" + clock_id.to_bytes(4, "big") + b"\x00" + body

    produce_raw(bootstrap, clock_topic, [(None, clock(i)) for i in range(1, 6)])
    clocks = kwire_reader(spark, bootstrap, clock_topic, registry.url, valueFormat="protobuf").load()
    assert clocks.schema["value"].dataType.simpleString() == \
        "struct<id:bigint,at:timestamp,took:interval day to second,counts:map<string,bigint>>"
    rows = sorted(clocks.select("value.*").collect())
    utc = dt.timezone.utc
    assert [(r.id, r.at.replace(tzinfo=utc) if r.at.tzinfo is None else r.at, r.took, r.counts) for r in rows] == [
        (i, dt.datetime(2023, 11, 14, 22, 13, 20 + i, 5, tzinfo=utc), dt.timedelta(seconds=i, microseconds=1),
         {"k": i}) for i in range(1, 6)]
    shifts = [{"id": i, "day": f"2026-03-0{i}", "at": f"2026-03-0{i}T08:00:00+02:00", "hours": {"a": i / 2}}
              for i in range(1, 6)]
    produce_serialized(bootstrap, shift_topic, JSONSerializer(json.dumps(SHIFT), client), shifts)
    read = kwire_reader(spark, bootstrap, shift_topic, registry.url, valueFormat="json-schema").load()
    assert read.schema["value"].dataType.simpleString() == \
        "struct<id:bigint,day:date,at:timestamp,hours:map<string,double>>"
    out = create_topic(unique("js-release-out"))
    (read.select("value").write.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("topic", out)
     .option("valueFormat", "json-schema").option("schema.registry.url", registry.url)
     .option("auto.register.schemas", "true").mode("append").save())
    back = consume_deserialized(bootstrap, out, JSONDeserializer(None, schema_registry_client=client), 5)
    assert sorted((v["id"], v["day"], dt.datetime.fromisoformat(v["at"].replace("Z", "+00:00")), v["hours"])
                  for _k, v in back) == \
        [(s["id"], s["day"], dt.datetime.fromisoformat(s["at"]), s["hours"]) for s in shifts]


PLAIN = ("id BIGINT, at TIMESTAMP, day DATE, price DECIMAL(8,2), tags ARRAY<STRING>, m MAP<STRING, DOUBLE>, "
         "_corrupt_record STRING")


def test_plain_json_on_this_release(spark, bootstrap, create_topic):
    from pyspark.sql import functions as F

    from tests.spark.typed_fixtures import produce_raw

    topic = create_topic(unique("json-release"))
    texts = ['{"id": %d, "at": "2026-03-0%dT08:00:00+02:00", "day": "2026-3-%d", "price": %d.125, "tags": ["t", null],'
             ' "m": {"x": 1.5e10, "y": null}, "more": [1]}' % (i, i, i, i) for i in range(1, 6)]
    texts += ['{"id": "six", "price": 7}', '{"id": 7', "", None]
    produce_raw(bootstrap, topic, [(None, None if t is None else t.encode()) for t in texts])
    ours = kwire_reader(spark, bootstrap, topic, valueFormat="json", valueSchema=PLAIN).load()
    raw = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
           .option("startingOffsets", "earliest").load())
    theirs = raw.select("offset", F.from_json(F.col("value").cast("string"), PLAIN).alias("value"))
    assert ours.schema["value"].dataType == theirs.schema["value"].dataType
    assert rows_as_json(ours.withColumn("partition", F.lit(0))) == rows_as_json(theirs.withColumn("partition",
                                                                                                 F.lit(0)))
    out = create_topic(unique("json-release-out"))
    (ours.where("value.id IS NOT NULL").select("value").write.format("kwire")
     .option("kafka.bootstrap.servers", bootstrap).option("topic", out).option("valueFormat", "json").mode("append")
     .save())
    written = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("subscribe", out)
               .option("startingOffsets", "earliest").load().selectExpr("CAST(value AS STRING) AS j").collect())
    expected = ours.where("value.id IS NOT NULL").select(F.to_json("value").alias("j")).collect()
    assert sorted(r.j for r in written) == sorted(r.j for r in expected)
