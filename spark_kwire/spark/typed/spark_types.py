"""Spark types of the Arrow types the format layer decodes into, and the exact Arrow types Spark expects back.

The format layer gives each reader schema an Arrow type that Spark's Arrow conversion (the JVM's ArrowUtils)
turns into the Spark type spark-avro gives it. The data source must declare that Spark type at load(), so it is
computed here, as ArrowUtils reads Arrow types: PySpark 4.0's own ``from_arrow_type`` cannot serve (it drops the
nullability of list and map items and reads a timestamp without a time zone as TIMESTAMP, not TIMESTAMP_NTZ).

Going back, PySpark checks (4.3) that a reader's Arrow batches have exactly the Arrow schema it derives from the
declared Spark schema; :func:`expected_arrow_type` asks the running PySpark for it, and :func:`conform` casts a
decoded column to it where the two spell the same values differently (e.g. TIME as time64[us] or [ns]).
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import types as T

from spark_kwire.spark.capabilities import TIME_TYPE

__all__ = ["spark_type", "expected_arrow_type", "conform", "arrow_type_for_write", "for_encoder"]


_SIMPLE = (
    (pa.types.is_null, T.NullType), (pa.types.is_boolean, T.BooleanType), (pa.types.is_int8, T.ByteType),
    (pa.types.is_int16, T.ShortType), (pa.types.is_int32, T.IntegerType), (pa.types.is_int64, T.LongType),
    (pa.types.is_float32, T.FloatType), (pa.types.is_float64, T.DoubleType), (pa.types.is_string, T.StringType),
    (pa.types.is_large_string, T.StringType), (pa.types.is_binary, T.BinaryType),
    (pa.types.is_large_binary, T.BinaryType), (pa.types.is_date32, T.DateType),
)


def spark_type(t: pa.DataType) -> T.DataType:
    """The Spark type Spark's Arrow conversion gives ``t`` (nullability of fields, list items and map values
    kept)."""
    for test, kind in _SIMPLE:
        if test(t):
            return kind()
    if pa.types.is_decimal(t):
        return T.DecimalType(t.precision, t.scale)
    if pa.types.is_timestamp(t):
        return T.TimestampType() if t.tz else T.TimestampNTZType()
    if pa.types.is_duration(t):  # ArrowUtils: duration[us] is a day-time interval (Protobuf's Duration)
        return T.DayTimeIntervalType(T.DayTimeIntervalType.DAY, T.DayTimeIntervalType.SECOND)
    if pa.types.is_time64(t):
        if not TIME_TYPE:
            raise TypeError(f"Arrow {t} needs Spark's TIME type, which this PySpark lacks ({TIME_TYPE.since})")
        return T.TimeType(6)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return T.ArrayType(spark_type(t.value_type), t.value_field.nullable)
    if pa.types.is_map(t):
        return T.MapType(spark_type(t.key_type), spark_type(t.item_type), t.item_field.nullable)
    if pa.types.is_struct(t):
        return T.StructType([T.StructField(f.name, spark_type(f.type), f.nullable) for f in t])
    raise TypeError(f"Arrow type {t} has no Spark counterpart")


def _to_arrow_schema(schema: T.StructType) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema

    try:  # what the read worker compares batches with (PySpark 4.1+ passes the session time zone, UTC)
        return to_arrow_schema(schema, timezone="UTC")
    except TypeError:  # PySpark 4.0: no time zone argument
        return to_arrow_schema(schema)


def expected_arrow_type(t: T.DataType) -> pa.DataType:
    """The Arrow type the running PySpark derives from Spark type ``t``: what a column of it must be."""
    return _to_arrow_schema(T.StructType([T.StructField("c", t)])).field("c").type


def conform(column: pa.Array, target: pa.DataType) -> pa.Array:
    """``column`` as ``target`` (the same values): unchanged when the types are equal, else cast (names of list
    items, nullability of children, units of TIME differ between the format layer and PySpark releases)."""
    if column.type.equals(target):
        return column
    return column.cast(target, safe=False)


def arrow_type_for_write(t: T.DataType) -> pa.DataType:
    """The Arrow type an encoder gets for a column of Spark type ``t``: the batches Spark hands a writer, with
    TIME in microseconds (the format layer's unit; PySpark 4.3 sends nanoseconds). Checked before any write."""
    return _micro_times(expected_arrow_type(t))


def _micro_times(t: pa.DataType) -> pa.DataType:
    if pa.types.is_time(t):
        return pa.time64("us")
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(t.value_field.with_type(_micro_times(t.value_type)))
    if pa.types.is_map(t):
        return pa.map_(t.key_field, t.item_field.with_type(_micro_times(t.item_type)))
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(_micro_times(f.type)) for f in t])
    return t


def for_encoder(column: pa.Array) -> pa.Array:
    """A column Spark handed a writer, in the Arrow type :func:`arrow_type_for_write` promised."""
    return conform(column, _micro_times(column.type))
