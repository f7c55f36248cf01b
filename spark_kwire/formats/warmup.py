"""Compile (or load from numba's disk cache) the format kernels up front.

The decoder and encoder interpreters are compiled once per machine (a few seconds; then loaded from the
cache in a few tenths of a second), whatever the schemas: ``make setup`` calls :func:`warm_up` so that a
first query does not pay for it, and the data source may call it in the background.
"""

from __future__ import annotations

import time

import pyarrow as pa

from . import kernels

_SAMPLE = {"type": "record", "name": "Warm", "fields": [
    {"name": "l", "type": "long"}, {"name": "s", "type": ["null", "string"]},
    {"name": "a", "type": {"type": "array", "items": {"type": "map", "values": "double"}}},
    {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}},
    {"name": "d", "type": {"type": "bytes", "logicalType": "decimal", "precision": 20, "scale": 2}},
    {"name": "u", "type": ["int", "string", "boolean"]}, {"name": "f", "type": "float"},
    {"name": "default", "type": "int", "default": 1}]}


def warm_up() -> float:
    """Runs a small sample through framing, decoding and encoding with the chosen kernels; the seconds it
    took (mostly compiling, the first time on a machine)."""
    import decimal

    from .avro.decoder import AvroDecoder
    from .avro.encoder import AvroEncoder
    from .framing import parse_confluent

    start = time.perf_counter()
    writer = {**_SAMPLE, "fields": _SAMPLE["fields"][:-1]}  # the reader's "default" comes from its default
    decoder = AvroDecoder(_SAMPLE)
    decoder.add_writer_schema(1, writer)
    encoder = AvroEncoder(writer, 1)
    t = decoder.arrow_type
    row_type = pa.struct([t.field(i) for i in range(t.num_fields - 1)])
    row = {"l": 1, "s": "x", "a": [[("k", 1.5)]], "e": "B", "d": decimal.Decimal("1.25"),
           "u": {"member0": 3, "member1": None, "member2": None}, "f": 0.5}
    values = encoder.encode(pa.array([row, None], row_type)).values
    result = decoder.decode(values, mode="PERMISSIVE")
    assert result.error_count == 0 and result.values.to_pylist()[0] == {**row, "default": 1}, result.describe(0)
    parse_confluent(values, message_indexes=True)
    return time.perf_counter() - start
