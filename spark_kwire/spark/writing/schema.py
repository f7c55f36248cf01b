"""The columns a kwire write accepts, checked against the DataFrame's schema before anything is written: those
of Spark's `kafka` sink, with its types and its case-sensitive names."""

from __future__ import annotations

import logging

from pyspark.sql.types import ArrayType, BinaryType, DataType, IntegerType, StringType, StructField, StructType

from spark_kwire.spark.errors import KwireOptionError
from spark_kwire.spark.options.parsing import WriteOptions

log = logging.getLogger("spark_kwire")

# The columns a write uses, with the types Spark's `kafka` sink accepts for them. Like that sink, a column
# is found by its exact (case-sensitive) name, and any other column is not written.
_SINK_COLUMNS = ("topic", "key", "value", "headers", "partition")
_BINARY = BinaryType()
_STRING = StringType()
_HEADERS = ArrayType(StructType([StructField("key", StringType()), StructField("value", BinaryType())]))
_ACCEPTED = {
    "topic": ([_STRING], "string"),
    "key": ([_STRING, _BINARY], "string or binary"),
    "value": ([_STRING, _BINARY], "string or binary"),
    "headers": ([_HEADERS], "array<struct<key:string,value:binary>>"),
    "partition": ([IntegerType()], "int"),
}


def same_type_as_spark(actual: DataType, expected: DataType) -> bool:
    """Spark's DataTypeUtils.sameType under its default case-insensitive analysis: nullability (of
    fields and of array elements) is ignored, struct field names compare without case, string
    collations must match."""
    if isinstance(expected, ArrayType):
        return isinstance(actual, ArrayType) and same_type_as_spark(actual.elementType, expected.elementType)
    if isinstance(expected, StructType):
        return (isinstance(actual, StructType) and len(actual.fields) == len(expected.fields)
                and all(a.name.lower() == e.name.lower() and same_type_as_spark(a.dataType, e.dataType)
                        for a, e in zip(actual.fields, expected.fields)))
    return actual == expected


def sink_columns(names: list[str]) -> dict[str, int]:
    """Position of each column the sink uses: the first column with exactly that name, as Spark's sink."""
    found: dict[str, int] = {}
    for i, name in enumerate(names):
        if name in _SINK_COLUMNS:
            found.setdefault(name, i)
    return found


def validate_write_schema(schema: StructType, options: WriteOptions) -> None:
    """Fail before anything is sent when a column has a type Spark's sink refuses, or 'value' (or, without the
    'topic' option, 'topic') is missing. Accepts exactly what Spark's sink accepts."""
    columns = {name: schema.fields[i] for name, i in sink_columns(schema.fieldNames()).items()}
    if options.topic is None and "topic" not in columns:
        raise KwireOptionError(
            "Required column 'topic' is missing: give the rows a string 'topic' column or set the 'topic' "
            f"option.{_case_hint(schema, 'topic')} Columns given: {', '.join(schema.fieldNames()) or 'none'}."
        )
    if "value" not in columns:
        raise KwireOptionError(
            f"Required column 'value' is missing; a kwire write needs a string or binary 'value' column."
            f"{_case_hint(schema, 'value')} Columns given: {', '.join(schema.fieldNames()) or 'none'}."
        )
    for name, f in columns.items():
        if name == "topic" and options.topic is not None:
            continue  # the option overrides the column, whatever its type (as in Spark's sink)
        if options.typed is not None and name in options.typed.columns:
            continue  # a typed key or value: checked against its schema (spark/typed/schemas.py)
        accepted, described = _ACCEPTED[name]
        if not any(same_type_as_spark(f.dataType, t) for t in accepted):
            raise KwireOptionError(
                f"Column '{name}' has unsupported type {f.dataType.simpleString()}; {name} must be {described}"
                + (" (nullability is not checked)." if name == "headers" else ".")
            )
    for name in schema.fieldNames():
        if name not in _SINK_COLUMNS and name.lower() in _SINK_COLUMNS:
            log.warning("kwire: column '%s' is not written: column names are case-sensitive, as in Spark's kafka "
                        "sink, which writes only %s", name, ", ".join(_SINK_COLUMNS))


def _case_hint(schema: StructType, name: str) -> str:
    near = [n for n in schema.fieldNames() if n.lower() == name and n != name]
    return f" (Column names are case-sensitive, as in Spark's kafka sink: '{near[0]}' is not '{name}'.)" if near else ""
