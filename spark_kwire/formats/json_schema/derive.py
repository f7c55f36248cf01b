"""A JSON Schema derived from an Arrow (Spark) struct type, to register when writing with
``auto.register.schemas``; it reads back (``spark_types.py``) as the same Spark type, decimals excepted.

draft-07; struct -> object with every field a property, the non-nullable ones ``required``; boolean; byte,
short, int, bigint -> integer; float, double, decimal -> number (decimals read back as double); string;
binary -> string with contentEncoding base64; date -> string with format date; timestamp -> format date-time;
array -> array with items; map<string, V> -> object with additionalProperties V. A nullable field or element is
``{"type": ["T", "null"]}`` (objects and arrays: ``oneOf`` null and the type). Other types (intervals, maps with
non-string keys) are refused with a :class:`SchemaError` naming the field.
"""

from __future__ import annotations

import json

import pyarrow as pa

from ..errors import SchemaError

DRAFT = "http://json-schema.org/draft-07/schema#"


def _nullable(schema: dict) -> dict:
    t = schema.get("type")
    if isinstance(t, str) and t not in ("object", "array"):
        return {**schema, "type": [t, "null"]}
    return {"oneOf": [{"type": "null"}, schema]}


def _schema(t: pa.DataType, nullable: bool, path: str) -> dict:
    types = pa.types
    if types.is_null(t):
        return {"type": "null"}
    if types.is_boolean(t):
        s = {"type": "boolean"}
    elif types.is_integer(t):
        s = {"type": "integer"}
    elif types.is_floating(t) or types.is_decimal(t):
        s = {"type": "number"}
    elif types.is_string(t) or types.is_large_string(t) or types.is_string_view(t):
        s = {"type": "string"}
    elif types.is_binary(t) or types.is_large_binary(t) or types.is_binary_view(t) or types.is_fixed_size_binary(t):
        s = {"type": "string", "contentEncoding": "base64"}
    elif types.is_date(t):
        s = {"type": "string", "format": "date"}
    elif types.is_timestamp(t):
        s = {"type": "string", "format": "date-time"}
    elif types.is_struct(t):
        s = {"type": "object", "properties": {f.name: _schema(f.type, f.nullable, f"{path}.{f.name}" if path else
                                                              f.name) for f in t}}
        required = [f.name for f in t if not f.nullable]
        if required:
            s["required"] = required
    elif types.is_map(t):
        if not (types.is_string(t.key_type) or types.is_large_string(t.key_type)):
            raise SchemaError(f"JSON objects have string keys; this map's keys are {t.key_type}", path)
        s = {"type": "object", "additionalProperties": _schema(t.item_type, t.item_field.nullable, f"{path}{{}}")}
    elif types.is_list(t) or types.is_large_list(t) or types.is_fixed_size_list(t):
        s = {"type": "array", "items": _schema(t.value_type, t.value_field.nullable, f"{path}[]")}
    else:
        raise SchemaError(f"Arrow type {t} has no JSON Schema counterpart here (written: boolean, integers, floats, "
                          f"decimal, string, binary, date, timestamp, struct, array, map)", path or "value")
    return _nullable(s) if nullable else s


def json_schema_for(arrow: pa.DataType | pa.Schema, title: str | None = None) -> dict:
    """The JSON Schema (as a value) for values of the Arrow struct type ``arrow``."""
    if isinstance(arrow, pa.Schema):
        arrow = pa.struct(list(arrow))
    if not pa.types.is_struct(arrow):
        raise SchemaError(f"a JSON Schema is derived from a struct type here, not {arrow}", "value")
    schema = {"$schema": DRAFT, **({"title": title} if title else {}), **_schema(arrow, False, "")}
    return schema


def json_schema_json(arrow: pa.DataType | pa.Schema, **kwargs) -> str:
    """:func:`json_schema_for` as compact JSON text, e.g. to register with a schema registry."""
    return json.dumps(json_schema_for(arrow, **kwargs), separators=(",", ":"))
