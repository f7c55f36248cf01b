"""The columns of Spark's built-in `kafka` source and sink, in Spark and Arrow terms.

pyarrow is imported only by the Arrow half, which the tasks use: the Python processes in which Spark creates
the data source and plans its reads and writes need the Spark half alone, and start quicker without pyarrow.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Mapping

from pyspark.sql.types import (
    ArrayType, BinaryType, DataType, IntegerType, LongType, StringType, StructField, StructType, TimestampType,
)

if TYPE_CHECKING:
    import pyarrow as pa

HEADERS_TYPE = ArrayType(StructType([StructField("key", StringType()), StructField("value", BinaryType())]))


def read_schema(include_headers: bool) -> StructType:
    """key, value, topic, partition, offset, timestamp, timestampType (+ headers), exactly as Spark's source."""
    fields = [
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
        StructField("timestampType", IntegerType()),
    ]
    if include_headers:
        fields.append(StructField("headers", HEADERS_TYPE))
    return StructType(fields)


def write_view_schema(types: Mapping[str, DataType], *, with_topic: bool) -> StructType:
    """The columns of a view that is only written (it names no topics to read): those of Spark's `kafka` sink in
    its documentation's order, 'topic' when the view names none. Key and value are strings (SQL's INSERT casts
    binary to string keeping its bytes, not string to binary), or of their schema's type when typed."""
    fields = [StructField(name, types.get(name, StringType())) for name in ("key", "value")]
    fields.append(StructField("headers", HEADERS_TYPE))
    if with_topic:
        fields.append(StructField("topic", StringType()))
    return StructType(fields + [StructField("partition", IntegerType())])

@lru_cache(maxsize=None)
def arrow_read_schema(include_headers: bool) -> pa.Schema:
    """:func:`read_schema` as the Arrow schema of the batches the tasks yield."""
    import pyarrow as pa

    from spark_kwire.protocol.records import HEADERS_TYPE

    fields = [
        pa.field("key", pa.binary()),
        pa.field("value", pa.binary()),
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("offset", pa.int64()),
        pa.field("timestamp", pa.timestamp("us", tz="UTC")),
        pa.field("timestampType", pa.int32()),
    ]
    if include_headers:
        fields.append(pa.field("headers", HEADERS_TYPE))
    return pa.schema(fields)


# The corrupt-record column of a PERMISSIVE typed read: the raw key and value of a record that did not decode,
# and why; null for records that decoded.
CORRUPT_RECORD_TYPE = StructType([StructField("key", BinaryType()), StructField("value", BinaryType()),
                                  StructField("error", StringType())])


def typed_read_schema(include_headers: bool, typed) -> StructType:
    """:func:`read_schema` with typed key and value columns (``typed``: spark/typed/'s resolved options) and, in
    PERMISSIVE mode, the corrupt-record column last."""
    types = {resolved.spec.side: resolved.spark_type for resolved in typed.resolved}
    fields = [StructField(f.name, types.get(f.name, f.dataType)) for f in read_schema(include_headers).fields]
    if typed.corrupt_column is not None:
        fields.append(StructField(typed.corrupt_column, CORRUPT_RECORD_TYPE))
    return StructType(fields)
