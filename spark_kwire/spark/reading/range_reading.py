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
        return read_planned(self.options, partition)


def read_planned(options: ReadOptions, partition: OffsetRange | PackedRanges | TokenAuthenticated
                 ) -> Iterator[pa.RecordBatch]:
    """The rows of one planned partition with the read's columns: fetched, decoded, typed when keys or values are."""
    # imported here: the reader brings in the record kernels (numba), which only executors need
    from spark_kwire.spark.reading.reader import read_partition

    kafka = options.kafka
    if isinstance(partition, TokenAuthenticated):  # delegationToken=true: the task logs in with the token
        kafka, partition = partition.kafka, partition.partition
    batches = read_partition(kafka, partition, include_headers=options.include_headers,
                             read_committed=options.read_committed, fail_on_data_loss=options.fail_on_data_loss)
    return typed_batches(options, batches)


def typed_batches(options: ReadOptions, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """`batches` as the read's columns: unchanged when keys and values are binary, decoded when they are typed."""
    if options.typed is None:
        return batches
    from spark_kwire.spark.typed.decoding import decode_batches  # typed keys or values, per batch

    return decode_batches(options.typed, batches)
