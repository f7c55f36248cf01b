"""Avro's Parsing Canonical Form and its 64-bit Rabin fingerprint (CRC-64-AVRO), as the specification
defines them: two schemas with the same canonical form encode data identically (defaults, docs, aliases and
logical types do not take part)."""

from __future__ import annotations

import json

from .model import Array, Enum, Fixed, Map, Named, Primitive, Record, Schema, Union

_EMPTY = 0xC15D213AA4D7A795


def _table() -> list[int]:
    table = []
    for i in range(256):
        fp = i
        for _ in range(8):
            fp = (fp >> 1) ^ (_EMPTY & -(fp & 1))
        table.append(fp)
    return table


_TABLE = _table()


def parsing_canonical_form(schema: Schema) -> str:
    """The schema's Parsing Canonical Form (a compact JSON text)."""
    return _pcf(schema, set())


def _s(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _pcf(schema: Schema, seen: set[str]) -> str:
    if isinstance(schema, Primitive):
        return _s(schema.type)
    if isinstance(schema, Union):
        return "[" + ",".join(_pcf(b, seen) for b in schema.branches) + "]"
    if isinstance(schema, Array):
        return '{"type":"array","items":' + _pcf(schema.items, seen) + "}"
    if isinstance(schema, Map):
        return '{"type":"map","values":' + _pcf(schema.values, seen) + "}"
    assert isinstance(schema, Named)
    if schema.fullname in seen:
        return _s(schema.fullname)
    seen.add(schema.fullname)
    head = '{"name":' + _s(schema.fullname) + ',"type":' + _s(schema.type)
    if isinstance(schema, Record):
        fields = ",".join('{"name":' + _s(f.name) + ',"type":' + _pcf(f.schema, seen) + "}" for f in schema.fields)
        return head + ',"fields":[' + fields + "]}"
    if isinstance(schema, Enum):
        return head + ',"symbols":[' + ",".join(_s(s) for s in schema.symbols) + "]}"
    assert isinstance(schema, Fixed)
    return head + ',"size":' + str(schema.size) + "}"


def rabin_fingerprint(data: bytes) -> int:
    """CRC-64-AVRO of ``data`` (an unsigned 64-bit integer)."""
    fp = _EMPTY
    for b in data:
        fp = (fp >> 8) ^ _TABLE[(fp ^ b) & 0xFF]
    return fp


def fingerprint64(schema: Schema) -> int:
    """The Rabin fingerprint of the schema's canonical form: equal for schemas that encode data alike."""
    return rabin_fingerprint(parsing_canonical_form(schema).encode("utf-8"))
