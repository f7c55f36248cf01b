"""Batch and streaming writes: the columns of Spark's `kafka` sink, partitioned as the Java client does."""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np
import pyarrow as pa
from pyspark.sql import datasource as _api
from pyspark.sql.datasource import DataSourceArrowWriter, DataSourceStreamWriter, WriterCommitMessage
from pyspark.sql.types import ArrayType, BinaryType, DataType, IntegerType, StringType, StructField, StructType

from spark_kwire.client.errors import UnknownTopicError
from spark_kwire.client.producer.producer import Producer
from spark_kwire.protocol.records import from_numpy, numeric_values, partition_for_keys, valid_mask, warming
from spark_kwire.spark.capabilities import ARROW_STREAM_WRITER
from spark_kwire.spark.errors import KwireOptionError, KwireWriteError
from spark_kwire.spark.exactly_once import TaskTransaction, TaskTransactionWriter, abort_all, commit_all
from spark_kwire.spark.options import WriteOptions
from spark_kwire.spark.row_batches import rows_to_batches
from spark_kwire.spark.shared_client import leased_producer, shared_client
from spark_kwire.spark.worker_gc import freeze_loaded_objects, heavy_imports

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


def partitions_for_write(client, topic: str) -> list[int]:
    """Partition ids of `topic`. Like the Java producer under Spark's sink, a write asks for the topic's
    metadata allowing auto-creation: a cluster whose brokers have auto.create.topics.enable (Kafka's
    default) creates a missing topic, and this waits (up to default.api.timeout.ms) until it has
    partitions. Where the brokers refuse, the error says so at once (the Java producer would wait
    max.block.ms and report a timeout)."""
    deadline = time.monotonic() + client.api_budget_ms / 1000.0
    delay = max(client.config.retry_backoff_ms, 10) / 1000.0
    while True:
        missing = client.refresh_metadata([topic], allow_auto_topic_creation=True)
        if topic not in missing:
            try:
                partitions = client.partitions_for(topic)
            except UnknownTopicError:
                partitions = None
            if partitions:
                return partitions
            if time.monotonic() > deadline:
                raise KwireWriteError(
                    f"Topic '{topic}' was being created by the cluster (auto.create.topics.enable) but had no "
                    f"partitions after {client.api_budget_ms} ms (kafka.default.api.timeout.ms)."
                )
            time.sleep(delay)
            delay = min(delay * 2, 1.0)
            continue
        try:
            return client.partitions_for(topic)  # looks again, in case it was created a moment ago
        except UnknownTopicError as e:
            raise KwireWriteError(
                f"Cannot write to topic '{topic}': {e}, and the cluster did not create it (brokers create "
                "topics on first use only with auto.create.topics.enable=true). Create the topic first, e.g. with "
                "spark_kwire.admin.create_topic, or write to an existing one."
            ) from e


@dataclass
class WriteReport(WriterCommitMessage):
    """What one task wrote: records acknowledged per (topic, partition); with exactly-once, the transaction
    the driver is to commit (None when the task had nothing to commit); with KWIRE_PROFILE, where its time went."""
    written: dict = field(default_factory=dict)
    transaction: TaskTransaction | None = None
    profile: dict | None = None


_ARROW_HEADERS = pa.list_(pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())]))


def _canonical_headers(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    """The headers column as list<struct<key, value>>: Spark's sink also takes the field names in other cases."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if column.type == _ARROW_HEADERS or not pa.types.is_list(column.type):
        return column
    return column.view(_ARROW_HEADERS)


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

    def __init__(self, options: WriteOptions, producer: Producer, transaction: TaskTransactionWriter | None = None):
        self.options = options
        self.producer = producer
        self.times = producer.times
        self.transaction = transaction
        self.round_robin: dict[str, int] = {}
        self.partition_counts: dict[str, int] = {}

    def _partition_count(self, topic: str) -> int:
        """Partitions of `topic`, fixed for the task (keys map to the same partitions in all its batches). The
        producer remembers them across the tasks of this process for PARTITION_COUNT_MAX_AGE_MS; when it must
        ask, it asks as the Java producer does, letting the cluster auto-create a missing topic."""
        if topic not in self.partition_counts:
            client = self.producer.client
            self.partition_counts[topic] = self.producer.partition_count(
                topic, lookup=lambda t: partitions_for_write(client, t))
        return self.partition_counts[topic]

    def add(self, batch: pa.RecordBatch) -> None:
        started = time.perf_counter()
        names = sink_columns(batch.schema.names)
        n = batch.num_rows
        if n == 0:
            return
        value = _binary(batch.column(names["value"]))
        key = _binary(batch.column(names["key"])) if "key" in names else None
        headers = _canonical_headers(batch.column(names["headers"])) if "headers" in names else None
        partition_col = batch.column(names["partition"]) if "partition" in names else None
        if self.options.topic is not None:
            groups = [(self.options.topic, None)]
        else:
            topic_col = batch.column(names["topic"])
            if topic_col.null_count:
                raise KwireWriteError(
                    "Null topic present in the data. Set the 'topic' option, or give every row a topic."
                )
            encoded = topic_col.dictionary_encode()  # (no Python scalars: see protocol/records/_arrow.py)
            if isinstance(encoded, pa.ChunkedArray):
                encoded = encoded.combine_chunks()
            unique = encoded.dictionary.to_pylist()
            if len(unique) == 1:
                groups = [(unique[0], None)]
            else:
                codes = numeric_values(encoded.indices)
                groups = [(t, np.flatnonzero(codes == i)) for i, t in enumerate(unique)]
        self.times.since("prepare", started)
        for topic, rows in groups:
            self._add_topic(topic, rows, value, key, headers, partition_col)

    def _partitions(self, topic, value, key, partition_col) -> np.ndarray:
        """The partition of every row: the 'partition' column, else murmur2 of the key, else spread evenly."""
        n = len(value)
        count = self._partition_count(topic)
        partitions = np.empty(n, dtype=np.int32)
        decided = np.zeros(n, dtype=bool)
        if partition_col is not None:
            explicit = numeric_values(partition_col)
            valid = valid_mask(partition_col)
            bad = valid & ((explicit < 0) | (explicit >= count))
            if bad.any() and not (valid & (explicit < 0)).any():
                count = len(self.producer.client.partitions_for(topic))  # partitions may have been added since
                bad = valid & (explicit >= count)
            if bad.any():
                raise KwireWriteError(
                    f"Column 'partition' holds {int(explicit[bad][0])}, but topic '{topic}' has partitions 0..{count - 1}."
                )
            partitions[valid] = explicit[valid]
            decided |= valid
        if key is not None:
            keyed = ~decided & valid_mask(key)
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
        return partitions

    def _add_topic(self, topic, rows, value, key, headers, partition_col) -> None:
        started = time.perf_counter()
        if rows is not None:
            indices = from_numpy(rows)
            value = value.take(indices)
            key = key.take(indices) if key is not None else None
            headers = headers.take(indices) if headers is not None else None
            partition_col = partition_col.take(indices) if partition_col is not None else None
        partitions = self._partitions(topic, value, key, partition_col)
        self.times.since("partition", started)
        self.producer.send_routed(topic, partitions, value, key, headers=headers)

    def finish(self) -> WriteReport:
        acknowledged = self.producer.flush()
        return WriteReport(written={f"{t}:{p}": int(a.records) for (t, p), a in acknowledged.items()},
                           transaction=self.transaction.finish() if self.transaction is not None else None)


def _task_batches(options: WriteOptions, items: Iterator) -> Iterator[pa.RecordBatch]:
    """The task's rows as Arrow batches, typed keys and values encoded (spark/typed/encoding.py)."""
    batches = rows_to_batches(items)
    if options.typed is None:
        return batches
    from spark_kwire.spark.typed.encoding import encode_batches

    return encode_batches(options.typed, batches)


_tasks_in_process = 0


def write_batches(options: WriteOptions, batches: Iterator[pa.RecordBatch]) -> WriteReport:
    """One task's write: every row handed over, flushed, and what the brokers acknowledged."""
    if options.exactly_once:
        return _write_in_transaction(options, batches)
    global _tasks_in_process
    _tasks_in_process += 1
    started = time.perf_counter()
    with leased_producer(options.kafka) as producer:
        writer = _TaskWriter(options, producer)
        times = producer.times
        waited = times.since("lease", started)
        for batch in _task_batches(options, batches):
            waited = times.since("spark_handoff", waited)
            writer.add(batch)
            waited = time.perf_counter()
        times.since("spark_handoff", waited)
        report = writer.finish()
        if times.enabled:
            report.profile = _task_profile(producer, report, time.perf_counter() - started)
    return report


def _write_in_transaction(options: WriteOptions, batches: Iterator[pa.RecordBatch]) -> WriteReport:
    """One task's exactly-once write: its own transaction (never a leased producer), flushed, not committed."""
    transaction = TaskTransactionWriter(shared_client(options.kafka), options.transactional_id_prefix,
                                        options.transaction_timeout_ms, options.topic)
    producer = transaction.producer()
    try:
        if transaction.already_written:
            return WriteReport()  # a replayed micro-batch whose transaction was committed before
        writer = _TaskWriter(options, producer, transaction)
        for batch in _task_batches(options, batches):
            writer.add(batch)
        return writer.finish()
    finally:
        producer.close()  # on failure a background delivery stops instead of going on alone


def _task_profile(producer: Producer, report: WriteReport, seconds: float) -> dict:
    """Where this task's time went, also written as one JSON line to the file KWIRE_PROFILE names."""
    profile = {"task_in_process": _tasks_in_process, "seconds": round(seconds, 6),
               "records": sum(report.written.values()), "partitions": len(report.written),
               "phases": producer.phase_times(), "pid": os.getpid(),
               "kernels": warming.timings(), "imported": heavy_imports()}
    target = os.environ.get("KWIRE_PROFILE", "")
    if os.sep in target or target.endswith(".jsonl"):
        with open(target, "a", encoding="utf-8") as out:
            out.write(json.dumps(profile) + "\n")
    return profile


def _total(messages) -> int:
    return sum(sum(m.written.values()) for m in messages if isinstance(m, WriteReport))


class KwireBatchWriter(DataSourceArrowWriter):
    """df.write.format("kwire"): each task produces its rows and returns what the brokers acknowledged."""

    def __init__(self, options: WriteOptions) -> None:
        self.options = options

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriteReport:
        freeze_loaded_objects()  # before the task's rows arrive: what is alive now stays loaded
        return write_batches(self.options, iterator)

    def commit(self, messages) -> None:
        freeze_loaded_objects()
        if self.options.exactly_once:
            commit_all(shared_client(self.options.kafka), messages, self.options.transaction_timeout_ms)
        log.info("kwire: wrote %d records", _total(messages))

    def abort(self, messages) -> None:
        if self.options.exactly_once:
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
        freeze_loaded_objects()  # before the task's rows arrive: what is alive now stays loaded
        return write_batches(self.options, iterator)

    def commit(self, messages, batchId: int) -> None:
        freeze_loaded_objects()
        if self.options.exactly_once:
            commit_all(shared_client(self.options.kafka), messages, self.options.transaction_timeout_ms, batchId)
        log.info("kwire: micro-batch %d wrote %d records", batchId, _total(messages))

    def abort(self, messages, batchId: int) -> None:
        if self.options.exactly_once:
            abort_all(shared_client(self.options.kafka), messages, self.options.transactional_id_prefix,
                      self.options.transaction_timeout_ms)
        log.warning("kwire: micro-batch %d aborted after %d records were acknowledged", batchId, _total(messages))
