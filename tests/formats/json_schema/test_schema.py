"""JSON Schemas reduced to Spark types, row by row of the table in ``spark_types.py``: objects, maps, arrays,
strings and their formats, numbers, nullability in its three spellings, enums and consts, ``$ref`` into
definitions/$defs and into other schemas given as references, ``allOf`` of objects, and what becomes JSON text;
recursion and malformed schemas refused."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from spark_kwire.formats.errors import SchemaError
from spark_kwire.formats.json_schema import arrow_type, parse_json_schema

TS = pa.timestamp("us", tz="UTC")


def field_type(schema: dict, references=()) -> tuple[pa.DataType, bool]:
    """The Arrow type and nullability of property ``p`` of an object holding ``schema``."""
    root = parse_json_schema({"type": "object", "properties": {"p": schema}}, references)
    f = arrow_type(root).field("p")
    return f.type, f.nullable


@pytest.mark.parametrize("schema, expected", [
    ({"type": "string"}, pa.string()),
    ({"type": "string", "format": "date"}, pa.date32()),
    ({"type": "string", "format": "date-time"}, TS),
    ({"type": "string", "format": "email"}, pa.string()),
    ({"type": "string", "contentEncoding": "base64"}, pa.binary()),
    ({"type": "integer"}, pa.int64()),
    ({"type": "number"}, pa.float64()),
    ({"type": ["integer", "number"]}, pa.float64()),
    ({"type": "boolean"}, pa.bool_()),
    ({"type": "null"}, pa.null()),
    ({"type": "array", "items": {"type": "integer"}}, pa.list_(pa.field("element", pa.int64(), False))),
    ({"type": "array", "items": {"type": ["integer", "null"]}}, pa.list_(pa.field("element", pa.int64(), True))),
    ({"type": "object", "additionalProperties": {"type": "number"}},
     pa.map_(pa.field("key", pa.string(), False), pa.field("value", pa.float64(), False))),
    ({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
     pa.struct([pa.field("a", pa.string(), False)])),
    ({"properties": {"a": {"type": "integer"}}}, pa.struct([pa.field("a", pa.int64())])),
    ({"enum": ["x", "y"]}, pa.string()),
    ({"enum": [1, 2, 3]}, pa.int64()),
    ({"enum": [1, 2.5]}, pa.float64()),
    ({"const": True}, pa.bool_()),
    ({"enum": ["x", 1]}, pa.string()),  # mixed: JSON text
    ({}, pa.string()),
    ({"type": ["string", "integer"]}, pa.string()),
    ({"oneOf": [{"type": "string"}, {"type": "integer"}]}, pa.string()),
    ({"type": "object"}, pa.string()),
    ({"type": "array"}, pa.string()),
    ({"type": "array", "prefixItems": [{"type": "integer"}], "items": {"type": "string"}}, pa.string()),
    ({"allOf": [{"properties": {"a": {"type": "integer"}}}, {"properties": {"b": {"type": "string"}},
                                                                 "required": ["b"]}]},
     pa.struct([pa.field("a", pa.int64()), pa.field("b", pa.string(), False)])),
    ({"allOf": [{"type": "string"}]}, pa.string()),
])
def test_mapping_table(schema, expected):
    assert field_type(schema)[0] == expected


@pytest.mark.parametrize("schema, nullable", [
    ({"type": "string"}, True),  # not required
    ({"type": ["string", "null"]}, True),
    ({"oneOf": [{"type": "null"}, {"type": "string"}]}, True),
    ({"anyOf": [{"type": "string"}, {"type": "null"}]}, True),
    ({"enum": ["a", None]}, True),
])
def test_nullability(schema, nullable):
    root = parse_json_schema({"type": "object", "properties": {"p": schema, "q": schema}, "required": ["q"]})
    t = arrow_type(root)
    assert t.field("p").nullable is nullable
    # required: nullable only when the schema allows null
    assert t.field("q").nullable is (schema != {"type": "string"})


def test_refs_into_definitions_defs_pointers_and_references():
    customer = {"$id": "customer.json", "type": "object", "properties": {"name": {"type": "string"},
                                                                         "tier": {"$ref": "#/$defs/Tier"}},
                "$defs": {"Tier": {"enum": ["gold", "silver"]}}}
    money = {"type": "object", "properties": {"units": {"type": "integer"}}}
    schema = {"type": "object", "definitions": {"Money": money},
              "properties": {"total": {"$ref": "#/definitions/Money"}, "refund": {"$ref": "#/properties/total"},
                             "buyer": {"$ref": "customer.json"}, "tier": {"$ref": "customer.json#/$defs/Tier"},
                             "again": {"$ref": "#"}}}
    with pytest.raises(SchemaError, match="recursive schema through \\$ref '#'"):
        parse_json_schema(schema, {"customer.json": json.dumps(customer)})
    del schema["properties"]["again"]
    t = arrow_type(parse_json_schema(json.dumps(schema), [("customer.json", json.dumps(customer))]))
    money = pa.struct([pa.field("units", pa.int64())])
    assert t == pa.struct([pa.field("total", money), pa.field("refund", money),
                           pa.field("buyer", pa.struct([pa.field("name", pa.string()), pa.field("tier", pa.string())])),
                           pa.field("tier", pa.string())])
    with pytest.raises(SchemaError, match="names a schema that was not given"):
        parse_json_schema(schema)


@pytest.mark.parametrize("schema, message", [
    ("{not json", "not valid JSON"),
    ({"type": "object", "properties": {"p": {"type": "decimal"}}}, "p: unknown JSON Schema type 'decimal'"),
    ({"type": "object", "properties": {"p": False}}, "accepts no value"),
    ({"type": "object", "properties": {"p": {"$ref": "#/definitions/Nope"}}}, "points at nothing"),
    ({"type": "object", "properties": {"p": {"$ref": "#/$defs/Node"}},
      "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}}}, "recursive schema"),
])
def test_bad_schemas(schema, message):
    with pytest.raises(SchemaError, match=message):
        parse_json_schema(schema)
