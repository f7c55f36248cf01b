"""Typed JSON Schema through the data source (valueFormat=json-schema) against real parts: confluent-kafka's
JSONSerializer writes (it validates every value) through a real broker and the harness registry, kwire reads
through Spark; the oracle is Python's ``json`` parsing the same payload bytes after the framing, ``jsonschema``
validating them, and the documented mapping to Spark values (tests/formats/json_schema/oracle.py). Writes go the
other way: kwire writes, confluent-kafka's JSONDeserializer (which validates against the registered schema) reads
back."""

from __future__ import annotations

import datetime as dt
import json

import jsonschema
import pytest
from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer

from spark_kwire import admin
from tests.formats.json_schema.oracle import SCHEMA, VALUES, compare, frame, spark as spark_value
from tests.formats.protobuf.oracle import spark_value as protobuf_spark_value
from tests.spark.typed_fixtures import (consume_deserialized, drawn, kwire_reader, produce_raw,  # noqa: F401
                                        produce_serialized, protobuf_deserializer_of_latest, registry, unique)

pytestmark = [pytest.mark.timeout(900),
              pytest.mark.filterwarnings("ignore::hypothesis.errors.NonInteractiveExampleWarning")]
UTC = dt.timezone.utc
DRAFT = "http://json-schema.org/draft-07/schema#"

V1 = {"$schema": DRAFT, "title": "Order", "type": "object", "required": ["id"],
      "properties": {"id": {"type": "integer"}, "item": {"type": "string"}}}
V2 = {**V1, "properties": {**V1["properties"], "qty": {"type": "integer"}, "price": {"type": "number"}}}
V3 = {**V2, "properties": {**V2["properties"], "tags": {"type": "array", "items": {"type": "string"}},
                           "note": {"type": ["string", "null"]}}}


def parsed(payload: bytes, schema: dict):
    """The oracle's value of a Confluent-framed JSON payload: ``json.loads`` of the bytes after the magic byte and
    schema id, validated by ``jsonschema`` against ``schema``, mapped to Spark values."""
    assert payload[0] == 0
    document = json.loads(payload[5:])
    jsonschema.validate(document, schema)
    return spark_value(schema, document)


def typed_rows(df) -> dict:
    """{key: value} read through Arrow (Spark's toArrow): kwire's values as the oracle's ``compare`` takes them;
    tombstones (null values) as None. (PySpark's toArrow cannot carry a null struct whose fields are not nullable,
    as a required property makes them: null values are counted apart.)"""
    table = df.where("value IS NOT NULL").select("key", "value").toArrow()
    rows = dict(zip(table.column("key").to_pylist(), table.column("value").to_pylist()))
    rows.update((r.key, None) for r in df.where("value IS NULL").select("key").collect())
    return rows


def assert_rows(got: dict, expected: dict) -> None:
    assert set(got) == set(expected)
    for key, value in expected.items():
        assert (value is None and got[key] is None) or compare(value, got[key]), (key, value, got[key])


def test_every_type_reads_as_json_and_jsonschema_read_it(spark, bootstrap, create_topic, registry):
    topic = create_topic(unique("js-all"), partitions=2)
    client = SchemaRegistryClient({"url": registry.url})
    objects = drawn(VALUES, 30) + [{"id": 0}, None]  # every optional property missing, and a tombstone
    keys = [str(i).encode() for i in range(len(objects))]
    payloads = produce_serialized(bootstrap, topic, JSONSerializer(json.dumps(SCHEMA), client), objects, keys=keys,
                                  partitions=2)
    df = kwire_reader(spark, bootstrap, topic, registry.url, valueFormat="json-schema").load()
    assert df.schema["value"].dataType.fieldNames() == list(SCHEMA["properties"])
    assert_rows(typed_rows(df), {k: None if p is None else parsed(p, SCHEMA) for k, p in zip(keys, payloads)})


def test_a_topic_written_under_three_versions_reads_with_the_reader_schema(spark, bootstrap, create_topic,
                                                                           registry):
    topic = create_topic(unique("js-evolving"), partitions=2)
    client = SchemaRegistryClient({"url": registry.url})
    client.set_compatibility(f"{topic}-value", "NONE")  # open content models: adding properties is not BACKWARD
    payloads = {}
    for version, schema in enumerate((V1, V2, V3)):
        objects = [{"id": 10 * version + i, "item": f"i{i}", "qty": i, "price": i / 8, "tags": ["t"] * i,
                    "note": None if i % 2 else "n"} for i in range(6)]
        objects = [{k: v for k, v in o.items() if k in schema["properties"]} for o in objects]
        keys = [str(o["id"]).encode() for o in objects]
        written = produce_serialized(bootstrap, topic, JSONSerializer(json.dumps(schema), client), objects,
                                     keys=keys, partitions=2)
        payloads.update(zip(keys, written))
    assert len(client.get_versions(f"{topic}-value")) == 3
    latest = kwire_reader(spark, bootstrap, topic, registry.url, valueFormat="json-schema").load()
    assert latest.schema["value"].dataType.fieldNames() == ["id", "item", "qty", "price", "tags", "note"]
    assert_rows(typed_rows(latest), {k: parsed(p, V3) for k, p in payloads.items()})
    first = kwire_reader(spark, bootstrap, topic, registry.url, valueFormat="json-schema",
                         valueSchemaVersion=1).load()
    assert_rows(typed_rows(first), {k: parsed(p, V1) for k, p in payloads.items()})
    inline = kwire_reader(spark, bootstrap, topic, None, valueFormat="json-schema", valueSchema=json.dumps(V2)).load()
    assert_rows(typed_rows(inline), {k: parsed(p, V2) for k, p in payloads.items()})


def test_permissive_keeps_the_raw_bytes_of_what_does_not_decode(spark, bootstrap, create_topic, registry):
    topic = create_topic(unique("js-permissive"), partitions=1)
    client = SchemaRegistryClient({"url": registry.url})
    schema_id = client.register_schema(f"{topic}-value", Schema(json.dumps(V1), "JSON"))
    records = [(b"0", frame(schema_id, '{"id": 1, "item": "a"}')), (b"1", frame(schema_id, b'{"id": 2, "item": ')),
               (b"2", frame(schema_id, '{"item": "no id"}')), (b"3", b"not framed")]
    produce_raw(bootstrap, topic, records)
    with pytest.raises(Exception) as info:
        kwire_reader(spark, bootstrap, topic, registry.url, valueFormat="json-schema").load().collect()
    assert "offset 1" in str(info.value)
    df = kwire_reader(spark, bootstrap, topic, registry.url, valueFormat="json-schema", mode="PERMISSIVE",
                      columnNameOfCorruptRecord="bad").load()
    rows = df.orderBy("offset").select("value", "bad.value", "bad.error").collect()
    assert rows[0][0].asDict() == {"id": 1, "item": "a"} and rows[0][1] is None
    assert [r[0] for r in rows[1:]] == [None] * 3
    assert [bytes(r[1]) for r in rows[1:]] == [v for _k, v in records[1:]]
    assert "id" in rows[2].error  # a required property missing


def test_references_to_other_registered_schemas_both_ways(spark, bootstrap, create_topic, registry):
    topic = create_topic(unique("js-refs"), partitions=1)
    client = SchemaRegistryClient({"url": registry.url})
    address = {"type": "object", "properties": {"city": {"type": "string"}, "zip": {"type": "integer"}}}
    address_subject = unique("js-address")
    client.register_schema(address_subject, Schema(json.dumps(address), "JSON"))
    main = {"$schema": DRAFT, "type": "object", "required": ["id"], "properties": {
        "id": {"type": "integer"}, "home": {"$ref": "address.json"},
        "past": {"type": "array", "items": {"$ref": "address.json"}}}}
    schema = Schema(json.dumps(main), "JSON", [SchemaReference("address.json", address_subject, 1)])
    objects = [{"id": i, "home": {"city": f"c{i}", "zip": i}, "past": [{"city": "old"}] * (i % 3)} for i in range(9)]
    keys = [str(i).encode() for i in range(9)]
    payloads = produce_serialized(bootstrap, topic, JSONSerializer(schema, client), objects, keys=keys)
    df = kwire_reader(spark, bootstrap, topic, registry.url, valueFormat="json-schema").load()
    assert df.schema["value"].dataType.simpleString() == \
        "struct<id:bigint,home:struct<city:string,zip:bigint>,past:array<struct<city:string,zip:bigint>>>"
    resolved = {**main, "properties": {"id": main["properties"]["id"], "home": address,
                                       "past": {"type": "array", "items": address}}}
    assert_rows(typed_rows(df), {k: parsed(p, resolved) for k, p in zip(keys, payloads)})
    # kwire writes with the subject's schema and its reference; confluent's deserializer validates through it
    out = create_topic(unique("js-refs-write"), partitions=1)
    client.register_schema(f"{out}-value", schema)
    _writer(df.select("value"), bootstrap, out, registry.url).save()
    back = consume_deserialized(bootstrap, out, JSONDeserializer(None, schema_registry_client=client), 9)
    # (a null zip is left out: the schema's zip is an integer, which null is not)
    assert sorted((v for _k, v in back), key=lambda v: v["id"]) == objects


def _writer(df, bootstrap, topic, registry_url, **options):
    writer = df.write.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("topic", topic)
    for key, value in {"schema.registry.url": registry_url, "valueFormat": "json-schema", **options}.items():
        writer = writer.option(key, str(value))
    return writer.mode("append")


ORDER = {"$schema": DRAFT, "title": "shop.Order", "type": "object", "required": ["id", "at"], "properties": {
    "id": {"type": "integer"}, "item": {"type": ["string", "null"]}, "price": {"type": "number"},
    "at": {"type": "string", "format": "date-time"}, "day": {"type": "string", "format": "date"},
    "tags": {"type": "array", "items": {"type": "string"}},
    "attrs": {"type": "object", "additionalProperties": {"type": "integer"}},
    "address": {"type": "object", "properties": {"city": {"type": "string"}, "zip": {"type": "integer"}}}}}


def test_writes_read_back_by_confluent_kafka(spark, bootstrap, create_topic, registry):
    client = SchemaRegistryClient({"url": registry.url})
    rows = [(i, None if i % 3 == 0 else f"item-{i}-é", i / 4, dt.datetime(2025, 5, 1, tzinfo=UTC) +
             dt.timedelta(seconds=i, microseconds=i), dt.date(2024, 2, 28) + dt.timedelta(days=i), ["a"] * (i % 3),
             {"k": i}, (f"city{i}", 1000 + i)) for i in range(20)]
    df = spark.createDataFrame(rows, "id bigint, item string, price double, at timestamp, day date, "
                                     "tags array<string>, attrs map<string,bigint>, address struct<city:string,zip:int>")
    names = ["id", "item", "price", "at", "day", "tags", "attrs", "address"]
    expected = {r[0]: {**dict(zip(names, r)), "address": {"city": r[7][0], "zip": r[7][1]}} for r in rows}
    value = df.selectExpr(f"struct({', '.join(names)}) AS value")
    # 1. the subject's latest schema, registered beforehand: confluent's deserializer validates each value
    topic = create_topic(unique("js-write-latest"), partitions=2)
    client.register_schema(f"{topic}-value", Schema(json.dumps(ORDER), "JSON"))
    _writer(value, bootstrap, topic, registry.url).save()
    got = consume_deserialized(bootstrap, topic, JSONDeserializer(None, schema_registry_client=client), 20,
                               partitions=2)
    assert {v["id"]: spark_value(ORDER, v) for _k, v in got} == expected
    # 2. auto.register.schemas: a JSON Schema derived from the DataFrame, titled after valueRecordName
    derived_topic = create_topic(unique("js-write-auto"), partitions=1)
    _writer(value, bootstrap, derived_topic, registry.url, valueRecordName="shop.Order",
            **{"auto.register.schemas": "true"}).save()
    derived = json.loads(client.get_latest_version(f"{derived_topic}-value").schema.schema_str)
    assert derived["title"] == "shop.Order" and list(derived["properties"]) == names
    back = consume_deserialized(bootstrap, derived_topic, JSONDeserializer(None, schema_registry_client=client), 20)
    assert {v["id"]: spark_value(derived, v) for _k, v in back} == expected
    # kwire reads its own writes back to the same rows
    again = kwire_reader(spark, bootstrap, derived_topic, registry.url, valueFormat="json-schema").load()
    assert sorted(again.select("value.*").collect()) == sorted(df.collect())
    # 3. a DataFrame that does not fit fails before anything is written, naming the field
    misfit = create_topic(unique("js-write-misfit"), partitions=1)
    client.register_schema(f"{misfit}-value", Schema(json.dumps(ORDER), "JSON"))
    bad = df.selectExpr("struct(CAST(id AS STRING) AS id, at) AS value")
    with pytest.raises(Exception) as info:
        _writer(bad, bootstrap, misfit, registry.url).save()
    text = str(info.value)
    assert "does not fit" in text and "id" in text and "Nothing was written" in text, text
    assert admin.latest_offsets(bootstrap, misfit) == {0: 0}


def test_a_json_schema_stream_into_a_protobuf_stream(spark, bootstrap, create_topic, registry, tmp_path):
    source, sink = create_topic(unique("js-stream"), partitions=2), create_topic(unique("pb-sink"), partitions=2)
    client = SchemaRegistryClient({"url": registry.url})
    serializer = JSONSerializer(json.dumps(V3), client)
    orders = [{"id": i, "item": f"i{i}", "qty": i % 4, "price": i / 2, "tags": ["t"] * (i % 2), "note": None}
              for i in range(1, 41)]
    produce_serialized(bootstrap, source, serializer, orders[:25], partitions=2)
    stream = (kwire_reader(spark, bootstrap, source, registry.url, stream=True, valueFormat="json-schema",
                           maxOffsetsPerTrigger=15).load()
              .selectExpr("struct(value.id, value.item, value.qty * 10 AS qty, value.tags) AS value"))
    writer = (stream.writeStream.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("topic", sink)
              .option("checkpointLocation", str(tmp_path / "cp")).option("valueFormat", "protobuf")
              .option("schema.registry.url", registry.url).option("auto.register.schemas", "true"))
    query = writer.trigger(processingTime="200 milliseconds").start()
    try:
        query.processAllAvailable()
        produce_serialized(bootstrap, source, serializer, orders[25:], partitions=2)
        query.processAllAvailable()
        assert query.exception() is None
    finally:
        query.stop()
    _cls, deserializer, _text = protobuf_deserializer_of_latest(client, f"{sink}-value")
    got = consume_deserialized(bootstrap, sink, deserializer, 40, partitions=2)
    assert sorted((protobuf_spark_value(v) for _k, v in got), key=lambda v: v["id"]) == \
        [{"id": o["id"], "item": o["item"], "qty": o["qty"] * 10, "tags": o["tags"]} for o in orders]
