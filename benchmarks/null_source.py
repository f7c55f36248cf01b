"""A Python data source that reads nothing: Spark's floor for any Python source's read, batch or stream.

Its reader yields, per partition, one Arrow batch of ``rows / partitions`` rows whose ``value`` is
``value_bytes`` zero bytes each, made from two numpy buffers (no Python object per row), so that a summary
query (``count(*)``, ``sum(length(value))``) gives the same answer as over the Kafka topic it stands in for.
Its stream reader (``spark.readStream.format("null_source").option("rate", R)``) offers, at each trigger, the
rows that R rows/s would have brought since the last one, in ``partitions`` tasks: what Spark costs a Python
stream source per micro-batch when the source itself costs nothing (benchmarks/stream_latency.py). With
``.option("columns", "kafka")`` its rows have the columns of Spark's ``kafka`` source (8-byte keys), so that
Spark moves as much per row as it does for a Kafka source.

It lives in a module of its own so that Spark's Python workers import it (``_common.spark_session`` and
``cold_session.py`` put this folder on their PYTHONPATH), as they import an installed connector.
"""

from __future__ import annotations

import time

from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition

from null_sink import freeze_loaded_objects


class _Slice(InputPartition):
    def __init__(self, rows: int) -> None:
        self.rows = rows


class NullReader(DataSourceReader):
    def __init__(self, rows: int, partition_count: int, value_bytes: int) -> None:
        self.rows, self.partition_count, self.value_bytes = rows, partition_count, value_bytes

    def partitions(self):
        return _slices(self.rows, self.partition_count)

    def read(self, partition):
        yield _zero_values(partition.rows, self.value_bytes)


def _slices(rows: int, count: int) -> list[_Slice]:
    return [_Slice(rows // count + (1 if i < rows % count else 0)) for i in range(count)]


def _zeros(n: int, size: int):
    import numpy as np
    import pyarrow as pa

    offsets = pa.py_buffer((np.arange(n + 1, dtype=np.int32) * size).tobytes())
    return pa.Array.from_buffers(pa.binary(), n, [None, offsets, pa.py_buffer(bytes(n * size))])


def _zero_values(n: int, value_bytes: int):
    import pyarrow as pa

    return pa.RecordBatch.from_arrays([_zeros(n, value_bytes)], names=["value"])


KAFKA_COLUMNS = ("key binary, value binary, topic string, partition int, offset bigint, timestamp timestamp, "
                 "timestampType int")


def _kafka_rows(n: int, value_bytes: int):
    """`n` rows in the columns of Spark's kafka source, built from buffers as kwire builds its own."""
    import numpy as np
    import pyarrow as pa

    ints = pa.array(np.zeros(n, dtype=np.int32))
    micros = pa.array(np.full(n, int(time.time() * 1e6), dtype=np.int64)).cast(pa.timestamp("us", tz="UTC"))
    columns = [_zeros(n, 8), _zeros(n, value_bytes), pa.array(["null"] * n, pa.string()), ints,
               pa.array(np.arange(n, dtype=np.int64)), micros, ints]
    return pa.RecordBatch.from_arrays(columns, names=["key", "value", "topic", "partition", "offset", "timestamp",
                                                      "timestampType"])


class NullStreamReader(DataSourceStreamReader):
    """Offsets count the rows `rate` rows/s bring from the epoch on; a micro-batch gets those since the last one.
    latestOffset takes no arguments, the signature every release accepts."""

    def __init__(self, rate: float, partition_count: int, value_bytes: int, kafka_columns: bool) -> None:
        self.rate, self.partition_count, self.value_bytes = rate, partition_count, value_bytes
        self.kafka_columns = kafka_columns

    def _now(self) -> dict:
        return {"rows": int(time.time() * self.rate)}

    def initialOffset(self):
        return self._now()

    def latestOffset(self):
        return self._now()

    def partitions(self, start, end):
        rows = end["rows"] - start["rows"]
        return _slices(rows, self.partition_count) if rows > 0 else []

    def read(self, partition):
        freeze_loaded_objects()  # as kwire's reads do
        rows = _kafka_rows if self.kafka_columns else _zero_values
        yield rows(partition.rows, self.value_bytes)

    def commit(self, end):
        pass


class NullSource(DataSource):
    """``spark.read.format("null_source").option("rows", N).option("partitions", P)``: N rows in P tasks."""

    @classmethod
    def name(cls):
        return "null_source"

    def schema(self):
        return KAFKA_COLUMNS if self.options.get("columns") == "kafka" else "value binary"

    def reader(self, schema):
        return NullReader(int(self.options.get("rows", 0)), int(self.options.get("partitions", 1)),
                          int(self.options.get("value_bytes", 100)))

    def streamReader(self, schema):
        return NullStreamReader(float(self.options.get("rate", 1000)), int(self.options.get("partitions", 1)),
                                int(self.options.get("value_bytes", 100)), self.options.get("columns") == "kafka")

