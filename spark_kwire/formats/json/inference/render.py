"""An Arrow struct type written as Spark writes a schema: a DDL string (``StructType.toDDL``'s form) and the
JSON of ``StructType.json()``; for messages, logs and a ``valueSchema`` a user can copy.

Arrow types are read as Spark's Arrow conversion reads them (``spark_kwire.spark.typed.spark_types``): int64 is
BIGINT, a timestamp with a zone TIMESTAMP and without one TIMESTAMP_NTZ, time64 TIME(6), and so on. DDL has no
way to say that an array's elements or a map's values are never null; the JSON form keeps it.
"""

from __future__ import annotations

import json

import pyarrow as pa

__all__ = ["spark_ddl", "spark_json"]

_SIMPLE = (
    (pa.types.is_boolean, "boolean"), (pa.types.is_int8, "byte"), (pa.types.is_int16, "short"),
    (pa.types.is_int32, "integer"), (pa.types.is_int64, "long"), (pa.types.is_float32, "float"),
    (pa.types.is_float64, "double"), (pa.types.is_string, "string"), (pa.types.is_large_string, "string"),
    (pa.types.is_binary, "binary"), (pa.types.is_large_binary, "binary"), (pa.types.is_date32, "date"),
    (pa.types.is_null, "void"),
)
# DDL spells these differently from the JSON form
_DDL_NAMES = {"byte": "TINYINT", "short": "SMALLINT", "integer": "INT", "long": "BIGINT"}


def spark_ddl(schema: pa.StructType) -> str:
    """``schema`` as a Spark DDL string: ```a` BIGINT, `b` STRUCT<`c`: STRING>``."""
    return ", ".join(_ddl_field(field) for field in schema)


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _ddl_field(field: pa.Field, separator: str = " ") -> str:
    nullability = "" if field.nullable else " NOT NULL"
    return f"{_quote(field.name)}{separator}{_ddl_type(field.type)}{nullability}"


def _ddl_type(t: pa.DataType) -> str:
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return f"ARRAY<{_ddl_type(t.value_type)}>"
    if pa.types.is_map(t):
        return f"MAP<{_ddl_type(t.key_type)}, {_ddl_type(t.item_type)}>"
    if pa.types.is_struct(t):
        return "STRUCT<" + ", ".join(_ddl_field(field, ": ") for field in t) + ">"
    name = _atomic(t)
    return _DDL_NAMES.get(name, name.upper())


def spark_json(schema: pa.StructType) -> str:
    """``schema`` as the JSON of Spark's ``StructType.json()`` (what ``StructType.fromJson`` reads)."""
    return json.dumps(_json_type(schema), separators=(",", ":"), ensure_ascii=False)


def _json_type(t: pa.DataType):
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return {"type": "array", "elementType": _json_type(t.value_type), "containsNull": t.value_field.nullable}
    if pa.types.is_map(t):
        return {"type": "map", "keyType": _json_type(t.key_type), "valueType": _json_type(t.item_type),
                "valueContainsNull": t.item_field.nullable}
    if pa.types.is_struct(t):
        return {"type": "struct", "fields": [
            {"name": f.name, "type": _json_type(f.type), "nullable": f.nullable, "metadata": {}} for f in t]}
    return _atomic(t)


def _atomic(t: pa.DataType) -> str:
    """The name of a type that holds no other, as StructType.json() writes it (DDL: the same in capitals)."""
    for test, name in _SIMPLE:
        if test(t):
            return name
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_timestamp(t):
        return "timestamp" if t.tz else "timestamp_ntz"
    if pa.types.is_time64(t):
        return "time(6)"
    raise TypeError(f"Arrow type {t} has no Spark type")
