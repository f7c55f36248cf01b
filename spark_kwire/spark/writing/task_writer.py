"""One Spark task's write: its rows as Arrow batches, routed to partitions as the Java client does, handed to
the producer and flushed; with exactly-once, in the task's own transaction.

The task side of ``writer``, in a module of its own so that the Python processes in which Spark only creates
the writer or commits the job (``writer``) do not import the producer, numpy and the record kernels.
"""

from __future__ import annotations

import json
import os
import time
from typing import Iterator

import numpy as np
import pyarrow as pa

from spark_kwire.client.errors import UnknownTopicError
from spark_kwire.client.producer.producer import Producer
from spark_kwire.protocol.records import HEADERS_TYPE, from_numpy, numeric_values, partition_for_keys, valid_mask
from spark_kwire.protocol.records.compilation import warming
from spark_kwire.spark.errors import KwireWriteError
from spark_kwire.spark.writing.exactly_once import TaskTransactionWriter
from spark_kwire.spark.options.parsing import WriteOptions
from spark_kwire.spark.writing.row_batches import rows_to_batches
from spark_kwire.spark.shared_client import leased_producer, shared_client
from spark_kwire.spark.workers.garbage_collection import heavy_imports
from spark_kwire.spark.writing.report import WriteReport
from spark_kwire.spark.writing.schema import sink_columns


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


def _canonical_headers(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    """The headers column as list<struct<key, value>>: Spark's sink also takes the field names in other cases."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if column.type == HEADERS_TYPE or not pa.types.is_list(column.type):
        return column
    return column.view(HEADERS_TYPE)


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
                    f"Column 'partition' holds {int(explicit[bad][0])}, but topic '{topic}' has partitions "
                    f"0..{count - 1}."
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
            # Null keys spread evenly: contiguous runs per partition keep batches large (like Kafka's sticky
            # partitioner).
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
