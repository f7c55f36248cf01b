"""A `.proto` schema derived from an Arrow (Spark) struct type, to register when writing with
``auto.register.schemas`` (spark-protobuf derives none: this is kwire's own, chosen to read back as the same
Spark type through spark-protobuf's mapping).

proto3, one message (``record_name``, default ``TopLevelRecord``) whose fields are numbered 1, 2, ... in the
struct's order: boolean -> bool, byte/short/int -> int32, bigint -> int64, float -> float, double -> double,
string -> string, binary -> bytes, date -> int32 (days since 1970; reads back as int), timestamp ->
google.protobuf.Timestamp, interval day to second -> google.protobuf.Duration, struct -> a nested message named
after the field (CamelCase), array<T> -> repeated T, map<K, V> -> map<K, V> (K: string, int, bigint or
boolean). Scalar fields are ``optional`` (explicit presence), so a null reads back as null and a zero as zero
(with proto3's implicit presence spark-protobuf would read zeros as nulls); every field reads back nullable.
Refused with a :class:`SchemaError` naming the field: decimals (Protobuf has none), arrays of arrays or
maps and maps of arrays or maps (Protobuf cannot nest repeated fields), unsigned and other Arrow-only types.
"""

from __future__ import annotations

import re

import pyarrow as pa

from ..errors import SchemaError

_KEYS = {"string": "string", "int32": "int32", "int64": "int64", "bool": "bool"}


def _camel(name: str) -> str:
    parts = re.split(r"[^0-9A-Za-z]+", name)
    text = "".join(p[:1].upper() + p[1:] for p in parts if p)
    if not text or not text[0].isalpha():
        text = "M" + text
    return text


def _identifier(name: str, path: str) -> str:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise SchemaError(f"field name {name!r} is not a Protobuf identifier (letters, digits, _)", path)
    return name


class _Writer:
    def __init__(self) -> None:
        self.imports: set[str] = set()

    def scalar(self, t: pa.DataType, path: str) -> str | None:
        types = pa.types
        if types.is_boolean(t):
            return "bool"
        if types.is_int8(t) or types.is_int16(t) or types.is_int32(t) or types.is_date32(t):
            return "int32"
        if types.is_int64(t):
            return "int64"
        if types.is_float32(t):
            return "float"
        if types.is_float64(t):
            return "double"
        if types.is_string(t) or types.is_large_string(t) or types.is_string_view(t):
            return "string"
        if types.is_binary(t) or types.is_large_binary(t) or types.is_binary_view(t) or types.is_fixed_size_binary(t):
            return "bytes"
        if types.is_timestamp(t):
            self.imports.add("google/protobuf/timestamp.proto")
            return "google.protobuf.Timestamp"
        if types.is_duration(t):
            self.imports.add("google/protobuf/duration.proto")
            return "google.protobuf.Duration"
        if types.is_decimal(t):
            raise SchemaError(f"Protobuf has no decimal type for {t}: cast it to double or string first", path)
        if types.is_struct(t) or types.is_list(t) or types.is_large_list(t) or types.is_map(t):
            return None
        raise SchemaError(f"Arrow type {t} has no Protobuf counterpart (written: boolean, integers, float, double, "
                          f"string, binary, date, timestamp, interval, struct, array, map)", path)

    def message(self, name: str, t: pa.StructType, path: str, depth: int) -> list[str]:
        pad = "  " * depth
        lines = [f"{pad}message {name} {{"]
        nested: list[str] = []
        taken: set[str] = set()
        for number, f in enumerate(t, start=1):
            fpath = f"{path}.{f.name}" if path else f.name
            field_name = _identifier(f.name, fpath)
            declared, label = self.field_type(f, fpath, depth + 1, nested, taken)
            lines.append(f"{pad}  {label}{declared} {field_name} = {number};")
        return lines + nested + [f"{pad}}}"]

    def nested_name(self, field: str, taken: set[str]) -> str:
        name = _camel(field)
        while name in taken:
            name += "_"
        taken.add(name)
        return name

    def element(self, t: pa.DataType, field: str, path: str, depth: int, nested: list[str], taken: set[str]) -> str:
        """The type of a non-repeated value (a nested message is appended to ``nested``)."""
        s = self.scalar(t, path)
        if s is not None:
            return s
        if pa.types.is_struct(t):
            name = self.nested_name(field, taken)
            nested.extend(self.message(name, t, path, depth))
            return name
        raise SchemaError(f"Protobuf cannot nest a repeated field or a map directly in another ({t}): put it in a "
                          f"struct", path)

    def field_type(self, f: pa.Field, path: str, depth: int, nested: list[str], taken: set[str]) -> tuple[str, str]:
        t = f.type
        types = pa.types
        if types.is_map(t):
            key = self.scalar(t.key_type, f"{path}{{key}}")
            if key not in _KEYS.values() or types.is_date32(t.key_type):
                raise SchemaError(f"Protobuf map keys are string, integers or bool, not {t.key_type}", path)
            value = self.element(t.item_type, f.name + "_value", f"{path}{{}}", depth, nested, taken)
            return f"map<{key}, {value}>", ""
        if types.is_list(t) or types.is_large_list(t) or types.is_fixed_size_list(t):
            return self.element(t.value_type, f.name, f"{path}[]", depth, nested, taken), "repeated "
        declared = self.element(t, f.name, path, depth, nested, taken)
        scalar = self.scalar(t, path) is not None and not declared.startswith("google.")
        return declared, ("optional " if scalar else "")


def protobuf_schema_for(arrow: pa.DataType | pa.Schema, record_name: str = "TopLevelRecord",
                        package: str = "") -> str:
    """The `.proto` text (proto3) of one message for values of the Arrow struct type ``arrow``."""
    if isinstance(arrow, pa.Schema):
        arrow = pa.struct(list(arrow))
    if not pa.types.is_struct(arrow):
        raise SchemaError(f"a Protobuf message is derived from a struct type, not {arrow}", "value")
    writer = _Writer()
    body = writer.message(_identifier(record_name, "value"), arrow, "", 0)
    head = ['syntax = "proto3";']
    if package:
        head.append(f"package {package};")
    head += [f'import "{path}";' for path in sorted(writer.imports)]
    return "\n".join(head + [""] + body) + "\n"
