"""Batch and streaming writes: the columns of Spark's `kafka` sink, partitioned as the Java client does.

This module is what Spark's planning and commit processes load: the writer objects and the commit. The schema
check is in ``write_schema``; the task's work in ``task_writer``, imported by the first ``write`` of a process;
the exactly-once commit in ``exactly_once``, imported only by exactly-once writes.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Iterator

from pyspark.sql import datasource as _api
from pyspark.sql.datasource import DataSourceArrowWriter, DataSourceStreamWriter

from spark_kwire.spark.capabilities import ARROW_STREAM_WRITER
from spark_kwire.spark.options.parsing import WriteOptions
from spark_kwire.spark.workers.stream_kernels import load_stream_kernels
from spark_kwire.spark.workers.garbage_collection import freeze_loaded_objects
from spark_kwire.spark.writing.report import WriteReport
from spark_kwire.spark.workers.zip_imports import keep_zip_imports_cheap

keep_zip_imports_cheap()  # Spark's Python workers running this stop re-reading pyspark.zip at each call

if TYPE_CHECKING:
    import pyarrow as pa

log = logging.getLogger("spark_kwire")


def _total(messages) -> int:
    return sum(sum(m.written.values()) for m in messages if isinstance(m, WriteReport))


class KwireBatchWriter(DataSourceArrowWriter):
    """df.write.format("kwire"): each task produces its rows and returns what the brokers acknowledged."""

    def __init__(self, options: WriteOptions) -> None:
        self.options = options

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriteReport:
        freeze_loaded_objects()  # before the task's rows arrive: what is alive now stays loaded
        from spark_kwire.spark.writing.task_writer import write_batches

        return write_batches(self.options, iterator)

    def commit(self, messages) -> None:
        freeze_loaded_objects()
        if self.options.exactly_once:
            from spark_kwire.spark.writing.exactly_once import commit_all
            from spark_kwire.spark.shared_client import shared_client

            commit_all(shared_client(self.options.kafka), messages, self.options.transaction_timeout_ms)
        log.info("kwire: wrote %d records", _total(messages))

    def abort(self, messages) -> None:
        if self.options.exactly_once:
            from spark_kwire.spark.writing.exactly_once import abort_all
            from spark_kwire.spark.shared_client import shared_client

            abort_all(shared_client(self.options.kafka), messages, self.options.transactional_id_prefix,
                      self.options.transaction_timeout_ms)
            log.warning("kwire: write aborted; its transactions were aborted (%d records are not visible to "
                        "read_committed readers)", _total(messages))
            return
        log.warning("kwire: write aborted after %d records were acknowledged (they stay in Kafka)", _total(messages))


# Spark 4.1+ has an Arrow stream writer. Spark 4.0's write worker hands Arrow batches to any writer that is a
# DataSourceArrowWriter, streaming or not, so there the stream writer is both; write_batches also takes Rows.
_STREAM_WRITER_BASES = ((_api.DataSourceStreamArrowWriter,) if ARROW_STREAM_WRITER
                        else (DataSourceStreamWriter, DataSourceArrowWriter))


class KwireStreamWriter(*_STREAM_WRITER_BASES):
    """writeStream.format("kwire"): the batch writer's columns, partitioning and guarantees per micro-batch."""

    def __init__(self, options: WriteOptions) -> None:
        self.options = options

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriteReport:
        from spark_kwire.spark.writing.task_writer import write_batches

        load_stream_kernels("partition", "encode")
        freeze_loaded_objects()  # before the task's rows arrive: what is alive now stays loaded
        return write_batches(self.options, iterator)

    def commit(self, messages, batchId: int) -> None:
        freeze_loaded_objects()
        if self.options.exactly_once:
            from spark_kwire.spark.writing.exactly_once import commit_all
            from spark_kwire.spark.shared_client import shared_client

            commit_all(shared_client(self.options.kafka), messages, self.options.transaction_timeout_ms, batchId)
        log.info("kwire: micro-batch %d wrote %d records", batchId, _total(messages))

    def abort(self, messages, batchId: int) -> None:
        if self.options.exactly_once:
            from spark_kwire.spark.writing.exactly_once import abort_all
            from spark_kwire.spark.shared_client import shared_client

            abort_all(shared_client(self.options.kafka), messages, self.options.transactional_id_prefix,
                      self.options.transaction_timeout_ms)
        log.warning("kwire: micro-batch %d aborted after %d records were acknowledged", batchId, _total(messages))
