"""Avro types as spark-avro 4.0 (``SchemaConverters``) maps them to Spark, expressed as Arrow types that
Spark's Arrow conversion turns into those Spark types; and back (``toAvroType``), for writing.

Avro -> Spark (-> Arrow):
  null -> void (null); boolean; int -> int (date -> date32); long -> bigint (timestamp-millis/micros ->
  timestamp[us, UTC]; local-timestamp-millis/micros -> timestamp[us], i.e. timestamp_ntz); float; double;
  bytes/fixed -> binary (decimal -> decimal128(p, s)); string (uuid too) and enum -> string;
  record -> struct; array -> list; map -> map<string, ...>;
  union: the null branch makes the type nullable; one other branch -> that type; int+long -> bigint;
  float+double -> double; otherwise a struct of member0..memberN (each nullable), one per non-null branch.
Nullability as spark-avro marks it: nullable exactly when the Avro type is null or a union holding null.
From Spark 4.2 on (SPARK-54473; 4.1 still gives bigint), ``from_avro`` reads ``time-micros`` as TIME(6) rather than bigint: ``time_type=True``
maps it to Arrow time64[us], which those releases turn into TIME.
A recursive type cannot be parsed at all (``parser.py``); a decimal over 38 digits is refused here, as
Spark refuses it.
"""

from __future__ import annotations

import json

import pyarrow as pa

from ..errors import SchemaError
from .model import Array, Enum, Fixed, Map, Primitive, Record, Schema, Union
from .parser import MAX_SPARK_DECIMAL_PRECISION

TIMESTAMP = pa.timestamp("us", tz="UTC")
TIMESTAMP_NTZ = pa.timestamp("us")
_MICROS_LOGICAL = {"timestamp-millis": TIMESTAMP, "timestamp-micros": TIMESTAMP,
                   "local-timestamp-millis": TIMESTAMP_NTZ, "local-timestamp-micros": TIMESTAMP_NTZ}


def arrow_type(schema: Schema, time_type: bool = False) -> pa.DataType:
    """The Arrow type of values of ``schema`` (a struct for a record)."""
    return arrow_field(schema, time_type=time_type).type


def arrow_field(schema: Schema, name: str = "value", time_type: bool = False) -> pa.Field:
    """``schema`` as an Arrow field named ``name``, nullable as spark-avro marks it."""
    t, nullable = _Converter(time_type).convert(schema, name)
    return pa.field(name, t, nullable=nullable)


def union_shape(union: Union) -> str:
    """How spark-avro shows a union: ``"null"`` (only null), ``"single"`` (one non-null branch), ``"long"``
    (int + long), ``"double"`` (float + double) or ``"members"`` (a struct of member0..N)."""
    nn = union.non_null
    if not nn:
        return "null" if union.has_null else "members"
    if len(nn) == 1:
        return "single"
    kinds = {b.type for b in nn if isinstance(b, Primitive)}
    if len(nn) == 2 and kinds == {"int", "long"}:
        return "long"
    if len(nn) == 2 and kinds == {"float", "double"}:
        return "double"
    return "members"


class _Converter:
    def __init__(self, time_type: bool) -> None:
        self.time_type = time_type

    def convert(self, schema: Schema, path: str) -> tuple[pa.DataType, bool]:
        if isinstance(schema, Primitive):
            return self.primitive(schema, path), schema.type == "null"
        if isinstance(schema, Fixed):
            if schema.logical == "decimal":
                return _decimal(schema.precision, schema.scale, path), False
            return pa.binary(), False
        if isinstance(schema, Enum):
            return pa.string(), False
        if isinstance(schema, Record):
            fields = []
            for f in schema.fields:
                t, nullable = self.convert(f.schema, f"{path}.{f.name}")
                fields.append(pa.field(f.name, t, nullable=nullable))
            return pa.struct(fields), False
        if isinstance(schema, Array):
            t, nullable = self.convert(schema.items, f"{path}[]")
            return pa.list_(pa.field("element", t, nullable=nullable)), False
        if isinstance(schema, Map):
            t, nullable = self.convert(schema.values, f"{path}{{}}")
            value = pa.field("value", t, nullable=nullable)
            return pa.map_(pa.field("key", pa.string(), nullable=False), value), False
        assert isinstance(schema, Union)
        shape = union_shape(schema)
        nn = schema.non_null
        if shape == "null":
            return pa.struct([]), True
        if shape == "single":
            t, _ = self.convert(nn[0], path)
            return t, schema.has_null
        if shape == "long":
            return pa.int64(), schema.has_null
        if shape == "double":
            return pa.float64(), schema.has_null
        members = [pa.field(f"member{i}", self.convert(b, f"{path}.member{i}")[0], nullable=True)
                   for i, b in enumerate(nn)]
        return pa.struct(members), schema.has_null

    def primitive(self, schema: Primitive, path: str) -> pa.DataType:
        kind = schema.type
        if kind == "null":
            return pa.null()
        if kind == "boolean":
            return pa.bool_()
        if kind == "int":
            return pa.date32() if schema.logical == "date" else pa.int32()
        if kind == "long":
            if schema.logical == "time-micros" and self.time_type:
                return pa.time64("us")
            return _MICROS_LOGICAL.get(schema.logical, pa.int64())
        if kind == "float":
            return pa.float32()
        if kind == "double":
            return pa.float64()
        if kind == "bytes":
            return _decimal(schema.precision, schema.scale, path) if schema.logical == "decimal" else pa.binary()
        return pa.string()


def _decimal(precision: int, scale: int, path: str) -> pa.DataType:
    if precision > MAX_SPARK_DECIMAL_PRECISION:
        raise SchemaError(f"decimal({precision},{scale}) has more than {MAX_SPARK_DECIMAL_PRECISION} digits, the most "
                          f"a Spark decimal holds", path)
    return pa.decimal128(precision, scale)


# ---- Arrow (Spark) -> Avro, as spark-avro's toAvroType derives a schema to write with ----

def avro_schema_for(arrow: pa.DataType | pa.Schema, nullable: bool = False, record_name: str = "topLevelRecord",
                    namespace: str = "") -> dict | list | str:
    """The Avro schema (as its JSON value) spark-avro's ``toAvroType`` derives for a Spark type, given here as
    the Arrow type Spark converts it to: structs become records named after their field (the top one
    ``record_name``) in a namespace of the enclosing names, nullable types ``[T, "null"]``, timestamps
    ``timestamp-micros`` (``local-timestamp-micros`` without a time zone), decimals ``fixed`` of the fewest
    bytes that hold their precision, named ``<namespace>.<field>.fixed``."""
    if isinstance(arrow, pa.Schema):
        arrow = pa.struct(list(arrow))
    return _to_avro(arrow, nullable, record_name, namespace, record_name)


def avro_schema_json(arrow: pa.DataType | pa.Schema, **kwargs) -> str:
    """:func:`avro_schema_for` as compact JSON text, e.g. to register with a schema registry."""
    return json.dumps(avro_schema_for(arrow, **kwargs), separators=(",", ":"))


def min_bytes_for_precision(precision: int) -> int:
    """The fewest bytes whose two's complement holds every unscaled value of ``precision`` digits."""
    n = 1
    while 2 ** (8 * n - 1) < 10**precision:
        n += 1
    return n


def _to_avro(t: pa.DataType, nullable: bool, record_name: str, namespace: str, path: str):
    schema = _to_avro_plain(t, record_name, namespace, path)
    if nullable and not pa.types.is_null(t):
        return [schema, "null"]
    return schema


def _to_avro_plain(t: pa.DataType, record_name: str, namespace: str, path: str):
    types = pa.types
    if types.is_boolean(t):
        return "boolean"
    if types.is_int8(t) or types.is_int16(t) or types.is_int32(t):
        return "int"
    if types.is_int64(t):
        return "long"
    if types.is_date32(t):
        return {"type": "int", "logicalType": "date"}
    if types.is_timestamp(t):
        return {"type": "long", "logicalType": "timestamp-micros" if t.tz else "local-timestamp-micros"}
    if types.is_float32(t):
        return "float"
    if types.is_float64(t):
        return "double"
    if types.is_string(t) or types.is_large_string(t) or types.is_string_view(t):
        return "string"
    if types.is_null(t):
        return "null"
    if types.is_decimal(t):
        name = f"{namespace}.{record_name}.fixed" if namespace else f"{record_name}.fixed"
        full_namespace, short = name.rsplit(".", 1)
        return {"type": "fixed", "name": short, "namespace": full_namespace,
                "size": min_bytes_for_precision(t.precision), "logicalType": "decimal",
                "precision": t.precision, "scale": t.scale}
    if types.is_binary(t) or types.is_large_binary(t) or types.is_binary_view(t) or types.is_fixed_size_binary(t):
        return "bytes"
    if types.is_map(t):
        if not (types.is_string(t.key_type) or types.is_large_string(t.key_type)):
            raise SchemaError(f"Avro maps have string keys; this map's keys are {t.key_type}", path)
        return {"type": "map", "values": _to_avro(t.item_type, t.item_field.nullable, record_name, namespace,
                                                  f"{path}{{}}")}
    if types.is_list(t) or types.is_large_list(t) or types.is_fixed_size_list(t) or types.is_list_view(t):
        return {"type": "array", "items": _to_avro(t.value_type, t.value_field.nullable, record_name, namespace,
                                                   f"{path}[]")}
    if types.is_struct(t):
        child_namespace = f"{namespace}.{record_name}" if namespace else record_name
        record = {"type": "record", "name": record_name, **({"namespace": namespace} if namespace else {}),
                  "fields": []}
        for f in t:
            record["fields"].append({"name": f.name, "type": _to_avro(f.type, f.nullable, f.name, child_namespace,
                                                                      f"{path}.{f.name}")})
        return record
    raise SchemaError(f"Arrow type {t} has no Avro counterpart (spark-avro writes boolean, integers, floats, "
                      f"decimal, string, binary, date, timestamp, timestamp_ntz, array, map, struct)", path)
