"""JSON Schema types as kwire shows them in Spark (there is no spark-json-schema to follow: these are kwire's
choices, made for what a Spark user would expect), expressed as Arrow types.

    JSON Schema                                        Spark                    Arrow
    object with properties                             struct (property order)  struct
    object, additionalProperties: S, no properties     map<string, S>           map<string, S>
    array, items: S                                    array<S>                 list<S>
    string                                             string                   string
    string, format: date                               date                     date32
    string, format: date-time (RFC 3339, with offset)  timestamp (UTC)          timestamp[us, UTC]
    string, contentEncoding: base64                    binary                   binary
    integer                                            bigint                   int64
    number (or integer + number)                       double                   float64
    boolean                                            boolean                  bool
    null                                               void                     null
    enum / const                                       their values' type (all strings: string, ...)
    ["T", "null"], oneOf/anyOf [null, T]               T, nullable
    $ref, $defs, definitions, references               the schema referred to (recursion refused)
    allOf of objects                                   struct of all their properties
    anything else ({}, several types, other oneOf/     string: the value's JSON text
    anyOf/allOf, tuples, objects without properties)

Nullability: a property is nullable unless it is ``required`` and its type excludes null; such a property
missing (or null) in a record is that record's error. Array items and map values are nullable when their
schema allows null.
"""

from __future__ import annotations

import pyarrow as pa

from .model import ARRAY, BINARY, BOOLEAN, DATE, INTEGER, JSON, MAP, NULL, NUMBER, OBJECT, STRING, TIMESTAMP, JType

TIMESTAMP_TYPE = pa.timestamp("us", tz="UTC")
_PLAIN = {STRING: pa.string(), DATE: pa.date32(), TIMESTAMP: TIMESTAMP_TYPE, BINARY: pa.binary(),
          INTEGER: pa.int64(), NUMBER: pa.float64(), BOOLEAN: pa.bool_(), NULL: pa.null(), JSON: pa.string()}


def arrow_type(t: JType) -> pa.DataType:
    """The Arrow type of values of ``t``."""
    if t.kind == OBJECT:
        return pa.struct([pa.field(name, arrow_type(sub), nullable=property_nullable(t, name, sub))
                          for name, sub in t.properties])
    if t.kind == ARRAY:
        return pa.list_(pa.field("element", arrow_type(t.items), nullable=t.items.nullable))
    if t.kind == MAP:
        return pa.map_(pa.field("key", pa.string(), nullable=False),
                       pa.field("value", arrow_type(t.items), nullable=t.items.nullable))
    return _PLAIN[t.kind]


def property_nullable(parent: JType, name: str, t: JType) -> bool:
    return t.nullable or name not in parent.required or t.kind == NULL


def arrow_field(t: JType, name: str = "value") -> pa.Field:
    return pa.field(name, arrow_type(t), nullable=True)
