"""The read tasks' typed decoding without Spark around it (the test registry, fastavro as the writer): batches
shaped as kwire's reader yields them decode into the declared Arrow types; each writer schema id is fetched once
per process however many batches name it; an id the registry did not know yet is asked for again later; the
corrupt-record column holds only the failed records' bytes."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest

from spark_kwire.client.registry import RegistryClient, Schema
from spark_kwire.spark.options.parsing import ReadOptions
from spark_kwire.spark.schema import arrow_read_schema, typed_read_schema
from spark_kwire.spark.typed import decoding
from spark_kwire.spark.typed.schemas import resolve_read
from spark_kwire.spark.typed.spark_types import expected_arrow_type
from tests.formats.avro.oracle import frame, read, write
from tests.spark.typed_fixtures import registry, unique  # noqa: F401

V1 = {"type": "record", "name": "Parcel", "namespace": "post", "fields": [
    {"name": "id", "type": "long"}, {"name": "grams", "type": "int"}]}
V2 = {**V1, "fields": V1["fields"] + [{"name": "to", "type": "string", "default": "?"}]}


def _typed(registry_url: str, topic: str, **extra):
    options = {"kafka.bootstrap.servers": "unused:9092", "subscribe": topic, "valueformat": "avro",
               "schema.registry.url": registry_url, **{k.lower(): v for k, v in extra.items()}}
    return resolve_read(ReadOptions.parse(options).typed, [topic])


def _batch(topic: str, values: list[bytes | None]) -> pa.RecordBatch:
    n = len(values)
    columns = [pa.array([b"k"] * n, pa.binary()), pa.array(values, pa.binary()), pa.array([topic] * n),
               pa.array([0] * n, pa.int32()), pa.array(range(n), pa.int64()),
               pa.array(np.zeros(n, dtype="datetime64[us]"), pa.timestamp("us", tz="UTC")),
               pa.array([0] * n, pa.int32())]
    return pa.RecordBatch.from_arrays(columns, schema=arrow_read_schema(False))


def test_batches_decode_to_the_declared_types_and_each_id_is_fetched_once(registry):
    topic = unique("decoding")
    client = RegistryClient({"url": registry.url})
    id1 = client.register(f"{topic}-value", Schema(json.dumps(V1)))
    id2 = client.register(f"{topic}-value", Schema(json.dumps(V2)))
    typed = _typed(registry.url, topic)
    records = [({"id": i, "grams": i * 10}, V1, id1) if i % 2 else ({"id": i, "grams": i, "to": f"t{i}"}, V2, id2)
               for i in range(40)]
    values = [frame(sid, write(schema, record)) for record, schema, sid in records]
    registry.clear_log()
    for _ in range(3):
        out = decoding.decode_batch(typed, _batch(topic, values))
    spark_schema = typed_read_schema(False, typed)
    assert out.schema.field("value").type == expected_arrow_type(spark_schema["value"].dataType)
    assert out.column("value").to_pylist() == [read(v[5:], schema, V2) for v, (_r, schema, _i) in zip(values, records)]
    assert registry.count("GET", f"/schemas/ids/{id1}") <= 1 and registry.count("GET", f"/schemas/ids/{id2}") <= 1


def test_an_id_the_registry_did_not_know_is_asked_for_again_later(registry, monkeypatch):
    topic = unique("decoding-late")
    client = RegistryClient({"url": registry.url})
    v1 = {**V1, "namespace": topic.replace("-", "_")}  # schemas no earlier test registered
    v2 = {**V2, "namespace": v1["namespace"]}
    first = client.register(f"{topic}-value", Schema(json.dumps(v1)))
    typed = _typed(registry.url, topic, mode="PERMISSIVE")
    late = first + 1  # the next id this registry gives (tests of one process run one after the other)
    values = [frame(first, write(v1, {"id": 1, "grams": 2})), frame(late, write(v2, {"id": 3, "grams": 4, "to": "x"}))]
    out = decoding.decode_batch(typed, _batch(topic, values))
    corrupt = out.column("_corrupt_record").to_pylist()
    assert corrupt[0] is None and f"schema id {late} not found" in corrupt[1]["error"]
    assert corrupt[1]["value"] == values[1] and corrupt[1]["key"] == b"k"
    # the corrupt column carries bytes for the failed record only
    assert out.column("_corrupt_record").field("value").buffers()[2].size == len(values[1])
    assert client.register(f"{topic}-value", Schema(json.dumps(v2))) == late
    out = decoding.decode_batch(typed, _batch(topic, values))
    assert out.column("value").to_pylist()[1] is None  # not asked again within NOT_FOUND_RETRY_S
    monkeypatch.setattr(decoding, "NOT_FOUND_RETRY_S", 0.0)
    out = decoding.decode_batch(typed, _batch(topic, values))
    assert out.column("value").to_pylist() == [{"id": 1, "grams": 2}, {"id": 3, "grams": 4}]
    assert out.column("_corrupt_record").null_count == 2


def test_failfast_names_the_first_failing_record_in_offset_order(registry):
    topic = unique("decoding-failfast")
    sid = RegistryClient({"url": registry.url}).register(f"{topic}-value", Schema(json.dumps(V1)))
    typed = _typed(registry.url, topic)
    values = [frame(sid, write(V1, {"id": 1, "grams": 2})), None, b"\x00\x00", frame(sid + 10_000, b"\x02\x04")]
    with pytest.raises(Exception) as info:
        decoding.decode_batch(typed, _batch(topic, values))
    assert f"topic '{topic}' partition 0 offset 2 (no schema id" in str(info.value)
