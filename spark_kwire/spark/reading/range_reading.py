"""What every read task runs, for batch and stream readers alike: read one planned Spark partition."""

from __future__ import annotations

from typing import Iterator

import pyarrow as pa

from spark_kwire.spark.delegation import TokenAuthenticated
from spark_kwire.spark.options.parsing import ReadOptions
from spark_kwire.spark.reading.packing import PackedRanges
from spark_kwire.spark.reading.planner import OffsetRange
from spark_kwire.spark.workers.zip_imports import keep_zip_imports_cheap

keep_zip_imports_cheap()  # Spark's Python workers running this stop re-reading pyspark.zip at each call


class ReadsPlannedRanges:
    """Gives a reader Spark's ``read(partition)``: the partition is an offset range or packed ranges that the
    reader's planning made, read with the reader's ``options``."""

    options: ReadOptions

    def read(self, partition: OffsetRange | PackedRanges | TokenAuthenticated) -> Iterator[pa.RecordBatch]:
        # imported here: the reader brings in the record kernels (numba), which only executors need
        from spark_kwire.spark.reading.reader import read_partition

        kafka = self.options.kafka
        if isinstance(partition, TokenAuthenticated):  # delegationToken=true: the task logs in with the token
            kafka, partition = partition.kafka, partition.partition
        batches = read_partition(kafka, partition, include_headers=self.options.include_headers,
                                 read_committed=self.options.read_committed,
                                 fail_on_data_loss=self.options.fail_on_data_loss)
        if self.options.typed is None:
            return batches
        from spark_kwire.spark.typed.decoding import decode_batches  # typed keys or values, per batch

        return decode_batches(self.options.typed, batches)
