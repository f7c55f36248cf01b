"""Mutated payloads (bytes flipped, cut, inserted): the decoder never raises in PERMISSIVE, never hangs, and
whatever it accepts fastavro reads too, to the same value and consuming every byte."""

from __future__ import annotations

import io
import math

import fastavro
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kwire.formats.avro.decoder import AvroDecoder
from tests.formats.avro.oracle import Names, frame, spark_shape, values, write

# no strings: fastavro refuses invalid UTF-8 that kwire (like Spark) passes through; no booleans or decimals:
# fastavro accepts any byte as a boolean and any digit count as a decimal, kwire refuses them
SCHEMA = {"type": "record", "name": "Fuzz", "fields": [
    {"name": "l", "type": "long"}, {"name": "i", "type": "int"}, {"name": "d", "type": "double"},
    {"name": "b", "type": "bytes"}, {"name": "f", "type": {"type": "fixed", "name": "F", "size": 3}},
    {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B", "C"]}},
    {"name": "u", "type": ["null", "long", "bytes", {"type": "array", "items": "int"}]},
    {"name": "arr", "type": {"type": "array", "items": {"type": "array", "items": ["null", "double"]}}},
    {"name": "o", "type": ["null", {"type": "record", "name": "In", "fields": [{"name": "x", "type": "float"}]}]}]}
PARSED = fastavro.parse_schema(SCHEMA)


def mutate(payload: bytes, edits: list[tuple[int, int, int]]) -> bytes:
    data = bytearray(payload)
    for kind, where, value in edits:
        if not data:
            break
        at = where % len(data)
        if kind == 0:
            data[at] = value
        elif kind == 1:
            del data[at:]
        else:
            data.insert(at, value)
    return bytes(data)


def nan_safe(v):
    """NaN made comparable (mutated doubles are often NaN)."""
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if isinstance(v, dict):
        return {k: nan_safe(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [nan_safe(x) for x in v]
    return v


def fastavro_reads_whole(payload: bytes):
    buf = io.BytesIO(payload)
    try:
        value = fastavro.schemaless_reader(buf, PARSED, None, return_named_type=True)
    except Exception:
        return False, None
    return buf.tell() == len(payload), value


edit = st.tuples(st.integers(0, 2), st.integers(0, 10_000), st.integers(0, 255))


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(values(SCHEMA), st.lists(edit, min_size=1, max_size=3)), min_size=1, max_size=10))
def test_mutated_payloads(cases):
    payloads = [mutate(write(SCHEMA, record), edits) for record, edits in cases]
    decoder = AvroDecoder(SCHEMA)
    decoder.add_writer_schema(1, SCHEMA)
    result = decoder.decode(pa.array([frame(1, p) for p in payloads], pa.binary()), mode="PERMISSIVE")
    rows = result.values.to_pylist()
    names = Names(SCHEMA)
    for payload, row, failed in zip(payloads, rows, result.errors.tolist()):
        if failed:
            assert row is None
            continue
        whole, value = fastavro_reads_whole(payload)
        assert whole, f"kwire accepted {payload.hex()}, fastavro did not read it whole"
        assert nan_safe(row) == nan_safe(spark_shape(SCHEMA, value, names))
