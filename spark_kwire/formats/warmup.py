"""Compile (or load from numba's disk cache) the format kernels up front.

The decoder and encoder interpreters of each format are compiled once per machine (a few seconds each; then
loaded from the cache in a few tenths of a second), whatever the schemas: ``make setup`` calls :func:`warm_up` so that a
first query does not pay for it, and the data source may call it in the background.
"""

from __future__ import annotations

import time

import pyarrow as pa


_SAMPLE = {"type": "record", "name": "Warm", "fields": [
    {"name": "l", "type": "long"}, {"name": "s", "type": ["null", "string"]},
    {"name": "a", "type": {"type": "array", "items": {"type": "map", "values": "double"}}},
    {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}},
    {"name": "d", "type": {"type": "bytes", "logicalType": "decimal", "precision": 20, "scale": 2}},
    {"name": "u", "type": ["int", "string", "boolean"]}, {"name": "f", "type": "float"},
    {"name": "default", "type": "int", "default": 1}]}


_PROTO = """syntax = "proto3";
import "google/protobuf/timestamp.proto";
message Warm {
  enum Kind { A = 0; B = 1; }
  int64 l = 1; optional string s = 2; repeated double d = 3; map<string, int32> m = 4; Kind k = 5;
  google.protobuf.Timestamp t = 6; Inner inner = 7; sint32 z = 8; fixed64 f = 9; bytes b = 10; bool ok = 11;
  message Inner { string name = 1; repeated Inner2 more = 2; }
  message Inner2 { float x = 1; }
  oneof choice { string c1 = 12; uint32 c2 = 13; }
}
"""
_JSON = {"type": "object", "required": ["l"], "properties": {
    "l": {"type": "integer"}, "s": {"type": ["string", "null"]}, "d": {"type": "array", "items": {"type": "number"}},
    "m": {"type": "object", "additionalProperties": {"type": "integer"}},
    "t": {"type": "string", "format": "date-time"},
    "day": {"type": "string", "format": "date"}, "b": {"type": "string", "contentEncoding": "base64"},
    "ok": {"type": "boolean"}, "any": {}, "inner": {"type": "object", "properties": {"x": {"type": "number"}}}}}


def _avro() -> None:
    import decimal

    from .avro.decoder import AvroDecoder
    from .avro.encoder import AvroEncoder
    from .framing import parse_confluent

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


def _round_trip(fmt_name: str, schema, row: dict) -> None:
    from .payload import payload_format

    fmt = payload_format(fmt_name)
    decoder = fmt.decoder(schema)
    decoder.add_writer_schema(1, schema)
    values = fmt.encoder(schema, 1).encode(pa.array([row, None], decoder.arrow_type)).values
    for two_steps in (False, True):
        if hasattr(decoder, "two_steps_only"):
            decoder.two_steps_only = two_steps
        result = decoder.decode(values, mode="PERMISSIVE")
        assert result.error_count == 0 and result.values.to_pylist()[0] == row, result.describe(0)


def warm_up(formats=("avro", "protobuf", "json-schema")) -> float:
    """Runs a small sample through framing, decoding and encoding of each format with the chosen kernels; the
    seconds it took (mostly compiling, the first time on a machine)."""
    import datetime

    start = time.perf_counter()
    if "avro" in formats:
        _avro()
    when = datetime.datetime(2024, 5, 1, 12, tzinfo=datetime.timezone.utc)
    if "protobuf" in formats:
        _round_trip("protobuf", _PROTO, {
            "l": -3, "s": "x", "d": [1.5], "m": [("k", 2)], "k": "B", "t": when,
            "inner": {"name": "n", "more": [{"x": 0.5}]}, "z": -4, "f": 5, "b": b"\x01", "ok": True, "c1": None,
            "c2": 7})
    if "json-schema" in formats:
        _round_trip("json-schema", _JSON, {
            "l": 1, "s": "é\n", "d": [0.25, 1e300], "m": [("k", 2)], "t": when, "day": datetime.date(2024, 2, 29),
            "b": b"\x00", "ok": False, "any": '{"a":[1]}', "inner": {"x": 0.1}})
    return time.perf_counter() - start
