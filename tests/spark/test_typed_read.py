"""Typed reads (valueFormat=avro) against real parts: records written by confluent-kafka's AvroSerializer through a
real broker and the harness registry; kwire's typed DataFrame compared with what Spark's own from_avro (spark-avro)
makes of the same records read by Spark's built-in kafka source: the same Spark type, the same rows."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer  # noqa: F401 - the independent writer
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.formats.avro.oracle import values
from tests.formats.avro.schemas import ALL_TYPES, V1, V2, V3
from tests.spark.typed_fixtures import (kwire_reader, oracle_frame, produce_avro, registry,  # noqa: F401
                                        rows_as_json, unique)

pytestmark = pytest.mark.timeout(900)

ORDER = {"type": "record", "name": "Order", "namespace": "shop", "fields": [
    {"name": "id", "type": "long"}, {"name": "item", "type": "string"},
    {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
    {"name": "note", "type": ["null", "string"], "default": None}]}
KEY = {"type": "record", "name": "OrderKey", "namespace": "shop", "fields": [{"name": "id", "type": "long"}]}


def _latest_id(registry_url: str, subject: str) -> int:
    return SchemaRegistryClient({"url": registry_url}).get_latest_version(subject).schema_id


def _generated(schema, count: int) -> list:
    """``count`` values of ``schema`` drawn by hypothesis (one fixed draw: each Spark read costs seconds)."""
    drawn = []

    @settings(max_examples=1, derandomize=True, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(st.lists(values(schema), min_size=count, max_size=count))
    def draw(records):
        drawn[:] = records

    draw()
    return drawn


def test_every_type_reads_as_spark_avro_reads_it(spark, bootstrap, create_topic, registry):
    topic = create_topic(unique("typed-all"), partitions=2)
    records = _generated(ALL_TYPES, 40) + [None]  # and a tombstone
    produce_avro(bootstrap, topic, registry.url, ALL_TYPES, records, partitions=2)
    ours = kwire_reader(spark, bootstrap, topic, registry.url).load()
    oracle = oracle_frame(spark, bootstrap, topic, {_latest_id(registry.url, f"{topic}-value"): json.dumps(ALL_TYPES)})
    assert ours.schema["value"].dataType == oracle.schema["value"].dataType
    expected = rows_as_json(oracle)
    assert len(expected) == 41
    assert rows_as_json(ours) == expected
    # The other columns stay those of Spark's kafka source.
    assert ours.columns == ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType"]


def test_a_topic_written_under_three_schema_versions_reads_as_one_dataframe(spark, bootstrap, create_topic,
                                                                             registry):
    topic = create_topic(unique("typed-evolving"), partitions=2)
    ids = {}
    for version, schema in enumerate((V1, V2, V3), start=1):
        produce_avro(bootstrap, topic, registry.url, schema, _generated(schema, 15), partitions=2)
        ids[_latest_id(registry.url, f"{topic}-value")] = json.dumps(schema)
    assert len(ids) == 3
    ours = kwire_reader(spark, bootstrap, topic, registry.url).load()  # the reader schema: the latest, V3
    oracle = oracle_frame(spark, bootstrap, topic, ids, reader_schema=json.dumps(V3))
    assert ours.schema["value"].dataType == oracle.schema["value"].dataType
    assert rows_as_json(ours) == rows_as_json(oracle)
    # Version 2 as the reader schema: version 3's records cannot be read as it (price: double is no float), so a
    # PERMISSIVE read keeps them aside with the reason, and reads the others as from_avro does.
    ours_v2 = kwire_reader(spark, bootstrap, topic, registry.url, valueSchemaVersion=2, mode="PERMISSIVE").load()
    assert ours_v2.schema["value"].dataType.fieldNames() == [f["name"] for f in V2["fields"]]
    v3_id = max(ids)
    bad = ours_v2.where("_corrupt_record IS NOT NULL").select("value", "_corrupt_record.error").collect()
    assert len(bad) == 15 and all(r.value is None for r in bad)
    assert all(f"writer schema id {v3_id} cannot be read" in r.error and "price" in r.error for r in bad)
    older = {i: text for i, text in ids.items() if i != v3_id}
    assert rows_as_json(ours_v2.where("_corrupt_record IS NULL")) == \
        rows_as_json(oracle_frame(spark, bootstrap, topic, older, reader_schema=json.dumps(V2)))


def test_typed_key_and_value_with_headers(spark, bootstrap, create_topic, registry):
    topic = create_topic(unique("typed-key"), partitions=1)
    orders = [{"id": i, "item": f"item-{i}", "price": Decimal(f"{i}.25"),
               "note": None if i % 2 else "gift"} for i in range(20)]
    produce_avro(bootstrap, topic, registry.url, ORDER, orders, keys=[{"id": i} for i in range(20)], key_schema=KEY)
    df = kwire_reader(spark, bootstrap, topic, registry.url, keyFormat="avro", includeHeaders="true").load()
    assert df.schema["key"].dataType.simpleString() == "struct<id:bigint>"
    assert df.columns[-1] == "headers"
    rows = df.selectExpr("key.id AS k", "value.id AS v", "value.item", "CAST(value.price AS STRING) AS price",
                         "value.note").orderBy("offset").collect()
    assert [(r.k, r.v, r.item, r.price, r.note) for r in rows] == \
        [(i, i, f"item-{i}", f"{i}.25", None if i % 2 else "gift") for i in range(20)]


def test_an_inline_schema_reads_without_any_registry(spark, bootstrap, create_topic, registry):
    topic = create_topic(unique("typed-inline"), partitions=1)
    orders = [{"id": i, "item": "x" * i, "price": Decimal(i), "note": None} for i in range(10)]
    produce_avro(bootstrap, topic, registry.url, ORDER, orders)
    df = kwire_reader(spark, bootstrap, topic, None, valueSchema=json.dumps(ORDER)).load()
    oracle = oracle_frame(spark, bootstrap, topic, {1: json.dumps(ORDER)})
    assert rows_as_json(df) == rows_as_json(oracle)


def test_record_name_strategy_reads_the_subject_of_the_record(spark, bootstrap, create_topic, registry):
    topic = create_topic(unique("typed-record-strategy"), partitions=1)
    schema = {**ORDER, "name": f"Order{unique('x').split('-')[1]}"}  # a subject of its own
    from confluent_kafka.schema_registry import record_subject_name_strategy

    produce_avro(bootstrap, topic, registry.url, schema, [{"id": 7, "item": "a", "price": Decimal(1), "note": None}],
                 serializer_conf={"subject.name.strategy": record_subject_name_strategy})
    full_name = f"shop.{schema['name']}"
    df = kwire_reader(spark, bootstrap, topic, registry.url, **{"value.subject.name.strategy": "RecordNameStrategy",
                                                               "valueRecordName": full_name}).load()
    assert [r.id for r in df.select("value.id").collect()] == [7]
    with pytest.raises(Exception, match="valueRecordName"):
        kwire_reader(spark, bootstrap, topic, registry.url,
                     **{"value.subject.name.strategy": "io.confluent.kafka.serializers.subject.RecordNameStrategy"}
                     ).load()


def test_several_topics_read_as_one_dataframe_only_with_one_schema(spark, bootstrap, create_topic, registry):
    a, b, c = (create_topic(unique(f"typed-multi-{n}"), partitions=1) for n in "abc")
    orders = [{"id": i, "item": "i", "price": Decimal(0), "note": None} for i in range(5)]
    produce_avro(bootstrap, a, registry.url, ORDER, orders)
    produce_avro(bootstrap, b, registry.url, ORDER, orders)
    produce_avro(bootstrap, c, registry.url, KEY, [{"id": 1}])
    both = kwire_reader(spark, bootstrap, f"{a},{b}", registry.url).load()
    assert both.count() == 10 and both.schema["value"].dataType.fieldNames() == ["id", "item", "price", "note"]
    pattern = kwire_reader(spark, bootstrap, None, registry.url, subscribePattern=f"({a}|{b})").load()
    assert pattern.count() == 10  # the subjects of the topics the pattern matches at load()
    with pytest.raises(Exception) as info:
        kwire_reader(spark, bootstrap, f"{a},{c}", registry.url).load()
    text = str(info.value)
    assert "different value schemas" in text and f"'{a}-value'" in text and f"'{c}-value'" in text
    assert "valueSchema" in text
    # A reader schema given inline fits them all: each record is still decoded with its own writer schema.
    reader = {"type": "record", "name": "Any", "fields": [{"name": "id", "type": "long"}]}
    mixed = kwire_reader(spark, bootstrap, f"{a},{c}", registry.url, valueSchema=json.dumps(reader)).load()
    assert sorted(r.id for r in mixed.select("value.id").collect()) == [0, 1, 1, 2, 3, 4]
