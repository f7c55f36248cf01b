"""Field defaults: the JSON value a schema gives, checked against the field's type and encoded as Avro binary.

A reader field the writer lacks takes its default; the decoder reads these bytes with the reader's own
program, so a default of any type (records, arrays, unions) costs nothing per record beyond decoding it.
Per the specification a union's default belongs to its first branch; a default that fits another branch
is accepted too (and encoded with that branch), as schemas in the wild carry them.
"""

from __future__ import annotations

import math
import struct
from typing import Any

from ..errors import SchemaError
from ...protocol.records.pure.ints import encode_varint
from .model import Array, Enum, Fixed, Map, Primitive, Record, Schema, Union

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)
_FLOAT_WORDS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _latin1(value: Any, what: str) -> bytes:
    if not isinstance(value, str):
        raise SchemaError(f"a {what} default must be a JSON string (one character per byte), got {value!r}")
    try:
        return value.encode("latin-1")
    except UnicodeEncodeError:
        raise SchemaError(f"a {what} default must hold characters \\u0000-\\u00ff only (one per byte)") from None


def encode_default(schema: Schema, value: Any) -> bytes:
    """The Avro binary encoding of ``value`` (a JSON default) as ``schema``; :class:`SchemaError` if it does not
    fit."""
    out = bytearray()
    _encode(schema, value, out)
    return bytes(out)


def _encode(schema: Schema, value: Any, out: bytearray) -> None:
    kind = schema.type
    if isinstance(schema, Primitive):
        if kind == "null":
            if value is not None:
                raise SchemaError(f"a null default must be null, got {value!r}")
        elif kind == "boolean":
            if not isinstance(value, bool):
                raise SchemaError(f"a boolean default must be true or false, got {value!r}")
            out.append(1 if value else 0)
        elif kind in ("int", "long"):
            lo, hi = _INT32 if kind == "int" else _INT64
            if not _is_int(value) or not lo <= value <= hi:
                raise SchemaError(f"an {kind} default must be an integer in [{lo}, {hi}], got {value!r}")
            out += encode_varint(value)
        elif kind in ("float", "double"):
            if isinstance(value, str) and value in _FLOAT_WORDS:
                value = _FLOAT_WORDS[value]
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise SchemaError(f"a {kind} default must be a number, got {value!r}")
            out += struct.pack("<f" if kind == "float" else "<d", float(value))
        elif kind == "bytes":
            data = _latin1(value, "bytes")
            out += encode_varint(len(data)) + data
        elif kind == "string":
            if not isinstance(value, str):
                raise SchemaError(f"a string default must be a JSON string, got {value!r}")
            data = value.encode("utf-8")
            out += encode_varint(len(data)) + data
        return
    if isinstance(schema, Fixed):
        data = _latin1(value, f"fixed {schema.fullname}")
        if len(data) != schema.size:
            raise SchemaError(f"a default of fixed {schema.fullname} must be {schema.size} bytes long, got {len(data)}")
        out += data
    elif isinstance(schema, Enum):
        if value not in schema.symbols:
            raise SchemaError(f"{value!r} is not a symbol of enum {schema.fullname}")
        out += encode_varint(schema.symbols.index(value))
    elif isinstance(schema, Array):
        if not isinstance(value, list):
            raise SchemaError(f"an array default must be a JSON array, got {value!r}")
        if value:
            out += encode_varint(len(value))
            for item in value:
                _encode(schema.items, item, out)
        out.append(0)
    elif isinstance(schema, Map):
        if not isinstance(value, dict):
            raise SchemaError(f"a map default must be a JSON object, got {value!r}")
        if value:
            out += encode_varint(len(value))
            for k, v in value.items():
                key = k.encode("utf-8")
                out += encode_varint(len(key)) + key
                _encode(schema.values, v, out)
        out.append(0)
    elif isinstance(schema, Record):
        if not isinstance(value, dict):
            raise SchemaError(f"a default of record {schema.fullname} must be a JSON object, got {value!r}")
        for f in schema.fields:
            if f.name in value:
                _encode(f.schema, value[f.name], out)
            elif f.has_default:
                _encode(f.schema, f.default, out)
            else:
                raise SchemaError(f"the default of record {schema.fullname} has no value for field {f.name!r}")
    elif isinstance(schema, Union):
        first_error = None
        for index, branch in enumerate(schema.branches):
            attempt = bytearray()
            try:
                _encode(branch, value, attempt)
            except SchemaError as exc:
                first_error = first_error or exc
                continue
            out += encode_varint(index) + attempt
            return
        why = f" ({first_error.reason})" if first_error else ""
        raise SchemaError(f"the default {value!r} fits no branch of the union{why}")
    else:  # pragma: no cover - every kind is handled above
        raise SchemaError(f"cannot encode a default of type {kind}")
