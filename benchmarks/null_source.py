"""A Python data source that reads nothing: Spark's floor for any Python source's read.

Its reader yields, per partition, one Arrow batch of ``rows / partitions`` rows whose ``value`` is
``value_bytes`` zero bytes each, made from two numpy buffers (no Python object per row), so that a summary
query (``count(*)``, ``sum(length(value))``) gives the same answer as over the Kafka topic it stands in for.
It lives in a module of its own so that Spark's Python workers import it (``_common.spark_session`` and
``cold_session.py`` put this folder on their PYTHONPATH), as they import an installed connector.
"""

from __future__ import annotations

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition


class _Slice(InputPartition):
    def __init__(self, rows: int) -> None:
        self.rows = rows


class NullReader(DataSourceReader):
    def __init__(self, rows: int, partition_count: int, value_bytes: int) -> None:
        self.rows, self.partition_count, self.value_bytes = rows, partition_count, value_bytes

    def partitions(self):
        rows, count = self.rows, self.partition_count
        return [_Slice(rows // count + (1 if i < rows % count else 0)) for i in range(count)]

    def read(self, partition):
        import numpy as np
        import pyarrow as pa

        n = partition.rows
        offsets = pa.py_buffer((np.arange(n + 1, dtype=np.int32) * self.value_bytes).tobytes())
        values = pa.Array.from_buffers(pa.binary(), n, [None, offsets, pa.py_buffer(bytes(n * self.value_bytes))])
        yield pa.RecordBatch.from_arrays([values], names=["value"])


class NullSource(DataSource):
    """``spark.read.format("null_source").option("rows", N).option("partitions", P)``: N rows in P tasks."""

    @classmethod
    def name(cls):
        return "null_source"

    def schema(self):
        return "value binary"

    def reader(self, schema):
        return NullReader(int(self.options.get("rows", 0)), int(self.options.get("partitions", 1)),
                          int(self.options.get("value_bytes", 100)))
