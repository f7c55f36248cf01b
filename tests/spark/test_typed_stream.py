"""Typed streams: readStream with valueFormat=avro keeps decoding as the topic's schema evolves under a running
query, and a typed Kafka-to-Kafka stream with deliveryGuarantee=exactly-once writes each record once for
read_committed readers, a replayed micro-batch included (checked by confluent-kafka's AvroDeserializer)."""

from __future__ import annotations

import os
from decimal import Decimal

import pytest

from spark_kwire.spark.capabilities import READ_LIMIT_API
from tests.spark.typed_fixtures import consume_avro, kwire_reader, produce_avro, registry, unique  # noqa: F401

pytestmark = pytest.mark.timeout(900)

V1 = {"type": "record", "name": "Payment", "namespace": "bank", "fields": [
    {"name": "id", "type": "long"}, {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal",
                                                                  "precision": 10, "scale": 2}},
    {"name": "currency", "type": "string"}]}
V2 = {**V1, "fields": V1["fields"] + [{"name": "memo", "type": ["null", "string"], "default": None}]}


def _payments(start: int, n: int, schema) -> list[dict]:
    extra = {"memo": "m"} if schema is V2 else {}
    return [{"id": i, "amount": Decimal(f"{i}.50"), "currency": "EUR", **extra} for i in range(start, start + n)]


def test_a_typed_stream_keeps_decoding_as_the_schema_evolves(spark, bootstrap, create_topic, registry, tmp_path):
    topic = create_topic(unique("typed-stream"), partitions=2)
    produce_avro(bootstrap, topic, registry.url, V1, _payments(0, 50, V1), partitions=2)
    name = f"typed_stream_{unique('q').split('-')[1]}"
    stream = kwire_reader(spark, bootstrap, topic, registry.url, stream=True, maxOffsetsPerTrigger=40).load()
    assert stream.schema["value"].dataType.fieldNames() == ["id", "amount", "currency"]  # typed at load()
    query = (stream.selectExpr("value.id", "CAST(value.amount AS STRING) AS amount").writeStream.format("memory")
             .queryName(name).option("checkpointLocation", str(tmp_path / "cp"))
             .trigger(processingTime="200 milliseconds").start())
    try:
        query.processAllAvailable()
        # version 2 registered and written while the query runs: read with the query's reader schema (v1)
        produce_avro(bootstrap, topic, registry.url, V2, _payments(50, 50, V2), partitions=2)
        query.processAllAvailable()
        assert query.exception() is None
        rows = spark.sql(f"SELECT id, amount FROM {name}").collect()
    finally:
        query.stop()
    assert sorted((r.id, r.amount) for r in rows) == [(i, f"{i}.50") for i in range(100)]
    assert len([p for p in query.recentProgress if p["numInputRows"]]) >= 3  # capped micro-batches


def _run_typed_exactly_once(spark, bootstrap, registry_url, source, sink, checkpoint, prefix):
    stream = (kwire_reader(spark, bootstrap, source, registry_url, stream=True, maxOffsetsPerTrigger=300).load()
              .selectExpr("key", "struct(value.id AS id, value.amount * 2 AS amount, value.currency AS currency) "
                          "AS value"))
    writer = (stream.writeStream.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("topic", sink)
              .option("checkpointLocation", checkpoint).option("deliveryGuarantee", "exactly-once")
              .option("transactionalIdPrefix", prefix).option("valueFormat", "avro")
              .option("schema.registry.url", registry_url).option("auto.register.schemas", "true"))
    if READ_LIMIT_API:
        query = writer.trigger(availableNow=True).start()
        query.awaitTermination(300)
    else:  # Spark 4.0/4.1 run AvailableNow as one capped batch (docs/streaming.md): the processing-time way
        query = writer.trigger(processingTime="200 milliseconds").start()
        try:
            query.processAllAvailable()
        finally:
            query.stop()
    assert query.exception() is None, query.exception()
    return query


def test_exactly_once_typed_stream_writes_each_record_once_even_when_replayed(spark, bootstrap, create_topic,
                                                                               registry, tmp_path):
    source, sink = create_topic(unique("typed-eos-in"), partitions=2), create_topic(unique("typed-eos-out"), 2)
    n = 1000
    produce_avro(bootstrap, source, registry.url, V1, _payments(0, n, V1), keys=[f"k{i}".encode() for i in range(n)],
                 partitions=2)
    checkpoint, prefix = str(tmp_path / "cp"), unique("typed-eos")
    query = _run_typed_exactly_once(spark, bootstrap, registry.url, source, sink, checkpoint, prefix)
    assert len(query.recentProgress) >= 3
    # Spark plans the writer of every micro-batch: the schema is registered once per planning process, not per
    # micro-batch (nor for its commit).
    assert 1 <= registry.count("POST", f"/subjects/{sink}-value/versions") <= 2
    # The crash between the Kafka commit and Spark's commit log, made deterministic: the last micro-batch's
    # entry in the commit log is removed, so the restarted query runs it again; its marker says it was written.
    commits = sorted(int(name) for name in os.listdir(os.path.join(checkpoint, "commits")) if name.isdigit())
    for name in (str(commits[-1]), f".{commits[-1]}.crc"):
        if os.path.exists(os.path.join(checkpoint, "commits", name)):
            os.remove(os.path.join(checkpoint, "commits", name))
    _run_typed_exactly_once(spark, bootstrap, registry.url, source, sink, checkpoint, prefix)
    assert str(commits[-1]) in os.listdir(os.path.join(checkpoint, "commits")), "the micro-batch was not replayed"
    got = consume_avro(bootstrap, sink, registry.url, n, partitions=2, isolation="read_committed")
    assert len(got) == n
    assert sorted((k, v["id"], v["amount"], v["currency"]) for k, v in got) == \
        [(f"k{i}".encode(), i, Decimal(f"{2 * i + 1}.00"), "EUR") for i in sorted(range(n), key=lambda i: f"k{i}")]
