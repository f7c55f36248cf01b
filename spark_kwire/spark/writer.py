"""Batch and streaming writes: the columns of Spark's `kafka` sink, partitioned as the Java client does."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import datasource as _api
from pyspark.sql.datasource import DataSourceArrowWriter, DataSourceStreamWriter, WriterCommitMessage
from pyspark.sql.types import ArrayType, BinaryType, IntegerType, StringType, StructType

from spark_kwire.client.producer import Producer
from spark_kwire.protocol.records import partition_for_keys
from spark_kwire.spark.capabilities import ARROW_STREAM_WRITER
from spark_kwire.spark.errors import KwireOptionError, KwireWriteError
from spark_kwire.spark.options import WriteOptions
from spark_kwire.spark.row_batches import rows_to_batches
from spark_kwire.spark.shared_client import shared_client

log = logging.getLogger("spark_kwire")

_BINARY_OR_STRING = (BinaryType, StringType)


def validate_write_schema(schema: StructType, options: WriteOptions) -> None:
    """Fail before anything is sent when a column is missing or has a type Spark's sink would refuse."""
    columns = {f.name.lower(): f for f in schema.fields}

    def check(name: str, accepted: tuple, described: str, required: bool = False) -> None:
        f = columns.get(name)
        if f is None:
            if required:
                raise KwireOptionError(
                    f"Required column '{name}' is missing; a kwire write needs a '{name}' column ({described}). "
                    f"Columns given: {', '.join(schema.fieldNames()) or 'none'}."
                )
            return
        if not isinstance(f.dataType, accepted) or (name == "headers" and f.dataType != _HEADERS):
            raise KwireOptionError(
                f"Column '{name}' has type {f.dataType.simpleString()}; it must be {described}."
            )

    check("value", _BINARY_OR_STRING, "binary or string", required=True)
    check("key", _BINARY_OR_STRING, "binary or string")
    check("partition", (IntegerType,), "int")
    check("headers", (ArrayType,), "array<struct<key:string,value:binary>>")
    if options.topic is None:
        check("topic", (StringType,), "string (or set the 'topic' option)", required=True)
    else:
        check("topic", (StringType,), "string")


_HEADERS = ArrayType(StructType.fromJson({"type": "struct", "fields": [
    {"name": "key", "type": "string", "nullable": True, "metadata": {}},
    {"name": "value", "type": "binary", "nullable": True, "metadata": {}},
]}))


@dataclass
class WriteReport(WriterCommitMessage):
    """What one task wrote: records acknowledged per (topic, partition)."""
    written: dict = field(default_factory=dict)


def _binary(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        column = column.view(pa.binary() if pa.types.is_string(column.type) else pa.large_binary())
    if pa.types.is_large_binary(column.type):
        column = column.cast(pa.binary())
    return column


class _TaskWriter:
    """Routes Arrow batches of one Spark task to partitions and hands them to the idempotent producer."""

    def __init__(self, options: WriteOptions) -> None:
        self.options = options
        self.client = shared_client(options.kafka)
        self.producer = Producer(self.client)
        self.round_robin: dict[str, int] = {}
        self.partition_counts: dict[str, int] = {}

    def _partition_count(self, topic: str) -> int:
        """Partitions of `topic`, asked once per task (every Arrow batch would otherwise ask the cluster)."""
        if topic not in self.partition_counts:
            self.partition_counts[topic] = len(self.client.partitions_for(topic))
        return self.partition_counts[topic]

    def add(self, batch: pa.RecordBatch) -> None:
        names = {n.lower(): i for i, n in enumerate(batch.schema.names)}
        n = batch.num_rows
        if n == 0:
            return
        value = _binary(batch.column(names["value"]))
        key = _binary(batch.column(names["key"])) if "key" in names else None
        headers = batch.column(names["headers"]) if "headers" in names else None
        partition_col = batch.column(names["partition"]) if "partition" in names else None
        if self.options.topic is not None:
            groups = [(self.options.topic, None)]
        else:
            topic_col = batch.column(names["topic"])
            if topic_col.null_count:
                raise KwireWriteError(
                    "Null topic present in the data. Set the 'topic' option, or give every row a topic."
                )
            unique = pc.unique(topic_col).to_pylist()
            if len(unique) == 1:
                groups = [(unique[0], None)]
            else:
                groups = [(t, np.flatnonzero(pc.equal(topic_col, t).to_numpy(zero_copy_only=False))) for t in unique]
        for topic, rows in groups:
            self._add_topic(topic, rows, value, key, headers, partition_col)

    def _add_topic(self, topic, rows, value, key, headers, partition_col) -> None:
        if rows is not None:
            indices = pa.array(rows)
            value = value.take(indices)
            key = key.take(indices) if key is not None else None
            headers = headers.take(indices) if headers is not None else None
            partition_col = partition_col.take(indices) if partition_col is not None else None
        n = len(value)
        count = self._partition_count(topic)
        partitions = np.empty(n, dtype=np.int32)
        decided = np.zeros(n, dtype=bool)
        if partition_col is not None:
            explicit = partition_col.to_numpy(zero_copy_only=False)
            valid = ~np.asarray(partition_col.is_null().to_numpy(zero_copy_only=False), dtype=bool)
            bad = valid & ((explicit < 0) | (explicit >= count))
            if bad.any():
                raise KwireWriteError(
                    f"Column 'partition' holds {int(explicit[bad][0])}, but topic '{topic}' has partitions 0..{count - 1}."
                )
            partitions[valid] = explicit[valid]
            decided |= valid
        if key is not None:
            keyed = ~decided & ~np.asarray(key.is_null().to_numpy(zero_copy_only=False), dtype=bool)
            if keyed.any():
                hashed = partition_for_keys(key, count)
                partitions[keyed] = hashed[keyed]
                decided |= keyed
        spread = np.flatnonzero(~decided)
        if len(spread):
            # Null keys spread evenly: contiguous runs per partition keep batches large (like Kafka's sticky partitioner).
            first = self.round_robin.get(topic, 0)
            partitions[spread] = (first + (np.arange(len(spread)) * count) // len(spread)) % count
            self.round_robin[topic] = (first + 1) % count
        order = np.argsort(partitions, kind="stable")
        sorted_parts = partitions[order]
        bounds = np.flatnonzero(np.diff(sorted_parts)) + 1
        for chunk in np.split(order, bounds):
            if not len(chunk):
                continue
            p = int(partitions[chunk[0]])
            take = pa.array(chunk)
            self.producer.send_batch(
                topic, p, value.take(take), key.take(take) if key is not None else None,
                headers=headers.take(take) if headers is not None else None,
            )

    def finish(self) -> WriteReport:
        try:
            acknowledged = self.producer.flush()
        finally:
            self.producer.close()
        return WriteReport(written={f"{t}:{p}": int(c) for (t, p), c in _counts(acknowledged).items()})


def _counts(acknowledged) -> dict:
    return {tp: ack.records for tp, ack in acknowledged.items()}


def write_batches(options: WriteOptions, batches: Iterator[pa.RecordBatch]) -> WriteReport:
    writer = _TaskWriter(options)
    try:
        for batch in rows_to_batches(batches):
            writer.add(batch)
    except BaseException:
        writer.producer.close()  # a background flush stops after its current round instead of going on alone
        raise
    return writer.finish()


def _total(messages) -> int:
    return sum(sum(m.written.values()) for m in messages if isinstance(m, WriteReport))


class KwireBatchWriter(DataSourceArrowWriter):
    """df.write.format("kwire"): each task produces its rows and returns what the brokers acknowledged."""

    def __init__(self, options: WriteOptions) -> None:
        self.options = options

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriteReport:
        return write_batches(self.options, iterator)

    def commit(self, messages) -> None:
        log.info("kwire: wrote %d records", _total(messages))

    def abort(self, messages) -> None:
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
        return write_batches(self.options, iterator)

    def commit(self, messages, batchId: int) -> None:
        log.info("kwire: micro-batch %d wrote %d records", batchId, _total(messages))

    def abort(self, messages, batchId: int) -> None:
        log.warning("kwire: micro-batch %d aborted after %d records were acknowledged", batchId, _total(messages))
