"""Parsing Avro schemas: names and namespaces, references, aliases, defaults, logical types; Parsing
Canonical Form and fingerprints against fastavro's; clear errors for malformed schemas."""

from __future__ import annotations

import json

import fastavro
import pytest

from spark_kwire.formats.avro.canonical import fingerprint64, parsing_canonical_form
from spark_kwire.formats.avro.defaults import encode_default
from spark_kwire.formats.avro.model import Record
from spark_kwire.formats.avro.parser import parse_schema
from spark_kwire.formats.errors import SchemaError
from tests.formats.avro.oracle import write
from tests.formats.avro.schemas import ALL_TYPES, V1, V2, V3

NAMESPACES = {"type": "record", "name": "Outer", "namespace": "a.b", "fields": [
    {"name": "inner", "type": {"type": "record", "name": "Inner", "fields": [
        {"name": "e", "type": {"type": "enum", "name": "c.E", "symbols": ["X"]}},
        {"name": "f", "type": {"type": "fixed", "name": "F", "namespace": "d", "size": 1}},
        {"name": "g", "type": {"type": "fixed", "name": "G", "namespace": "", "size": 2}}]}},
    {"name": "again", "type": "Inner"},  # a.b.Inner, by its short name in the same namespace
    {"name": "e2", "type": "c.E"},
    {"name": "f2", "type": "d.F"},
]}


@pytest.mark.parametrize("schema", [ALL_TYPES, V1, V2, V3, NAMESPACES, "string", ["null", "int"],
                                    {"type": "map", "values": {"type": "array", "items": "bytes"}}],
                         ids=lambda s: json.dumps(s)[:30])
def test_canonical_form_and_fingerprint_are_fastavros(schema):
    parsed = parse_schema(json.dumps(schema))
    expected = fastavro.schema.to_parsing_canonical_form(schema)
    assert parsing_canonical_form(parsed) == expected
    assert fingerprint64(parsed).to_bytes(8, "little").hex() == fastavro.schema.fingerprint(expected, "CRC-64-AVRO")


def test_names_and_namespaces():
    outer = parse_schema(NAMESPACES)
    inner = outer.fields[0].schema
    assert inner.fullname == "a.b.Inner" and outer.fields[1].schema is inner
    assert [f.schema.fullname for f in inner.fields] == ["c.E", "d.F", "G"]
    assert outer.fields[2].schema is inner.fields[0].schema and outer.fields[3].schema is inner.fields[1].schema
    # a short name not found in the enclosing namespace is looked up in the null namespace (as schemas that
    # refer to a type defined without namespace expect; fastavro is stricter)
    lenient = parse_schema({**NAMESPACES, "fields": NAMESPACES["fields"] + [{"name": "g2", "type": "G"}]})
    assert lenient.fields[-1].schema is lenient.fields[0].schema.fields[2].schema


def test_references_define_named_types():
    address = {"type": "record", "name": "Address", "namespace": "shop", "fields": [{"name": "city", "type": "string"}]}
    order = {"type": "record", "name": "Order", "namespace": "shop", "fields": [{"name": "to", "type": "Address"}]}
    parsed = parse_schema(json.dumps(order), references=[json.dumps(address)])
    assert isinstance(parsed, Record) and parsed.fields[0].schema.fullname == "shop.Address"
    with pytest.raises(SchemaError, match=r"^to: unknown type 'Address'"):
        parse_schema(order)


def test_aliases_are_full_names():
    r = parse_schema({"type": "record", "name": "R", "namespace": "n", "aliases": ["Old", "x.Older"], "fields": []})
    assert r.aliases == ("n.Old", "x.Older")


@pytest.mark.parametrize("schema, message", [
    ("{not json", "schema is not valid JSON"),
    ({"type": "record", "name": "R", "fields": [{"name": "a", "type": "Nope"}]}, r"^a: unknown type 'Nope'"),
    ({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}, {"name": "a", "type": "int"}]},
     "two fields named 'a'"),
    ({"type": "record", "name": "R", "fields": [
        {"name": "a", "type": {"type": "fixed", "name": "R", "size": 1}}]}, r"^a: type R is defined twice"),
    ({"type": "enum", "name": "E", "symbols": ["A", "A"]}, "lists a symbol twice"),
    ({"type": "enum", "name": "E", "symbols": ["A"], "default": "B"}, "default 'B' of enum E is not one of"),
    ({"type": "enum", "name": "E", "symbols": ["1A"]}, r"invalid symbol of enum E '1A'"),
    (["int", ["string"]], "a union cannot hold another union directly"),
    (["int", "string", "int"], "the union lists int twice"),
    ({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int", "default": "x"}]},
     r"^a: invalid default \"x\": an int default must be an integer"),
    ({"type": "record", "name": "R", "fields": [{"name": "a", "type": ["null", "int"], "default": "x"}]},
     r"^a: invalid default \"x\": the default 'x' fits no branch"),
    ({"type": "record", "name": "R", "fields": [{"name": "b", "type": "bytes", "default": "\u0100"}]},
     r"characters \\u0000-\\u00ff only"),
    ({"type": "record", "name": "1R", "fields": []}, "invalid record name '1R'"),
    ({"type": "fixed", "name": "F", "size": -1}, "non-negative integer \"size\""),
    ({"type": "array"}, "array without \"items\""),
    ({"type": "record", "name": "R", "fields": [{"name": "self", "type": {"type": "array", "items": "R"}}]},
     r"^self\[\]: recursive type: R refers to itself"),
])
def test_malformed_schemas_say_what_and_where(schema, message):
    with pytest.raises(SchemaError, match=message):
        parse_schema(schema)


@pytest.mark.parametrize("schema, default", [
    ({"type": "record", "name": "A", "fields": [{"name": "x", "type": "int"}, {"name": "y", "type": "string"}]},
     {"x": -3, "y": "é"}),
    ({"type": "array", "items": ["null", "double"]}, [None, 1.5]),
    ({"type": "map", "values": "long"}, {"a": 1, "b": -(2**63)}),
    ("bytes", "\u0000\u00ff"),
    ({"type": "fixed", "name": "F", "size": 2}, "ab"),
    (["null", "string"], None),
    (["string", "null"], "s"),
    ("float", 0.1),
    ({"type": "enum", "name": "E", "symbols": ["A", "B"]}, "B"),
])
def test_defaults_encode_as_fastavro_writes_them(schema, default):
    value = default.encode("latin-1") if schema in ("bytes",) or (isinstance(schema, dict) and
                                                                   schema.get("type") == "fixed") else default
    assert encode_default(parse_schema(schema), default) == write(schema, value)


def test_invalid_logical_types_are_ignored_as_avro_ignores_them():
    assert parse_schema({"type": "int", "logicalType": "timestamp-millis"}).logical is None
    assert parse_schema({"type": "bytes", "logicalType": "decimal", "precision": 2, "scale": 3}).logical is None
    assert parse_schema({"type": "fixed", "name": "F", "size": 2, "logicalType": "decimal",
                         "precision": 5}).logical is None  # 2 bytes hold 4 digits
    assert parse_schema({"type": "fixed", "name": "F", "size": 2, "logicalType": "decimal",
                         "precision": 4}).logical == "decimal"
    assert parse_schema({"type": "string", "logicalType": "something-else"}).logical is None
