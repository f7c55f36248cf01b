"""Executor-side reading: fetch one offset range and yield Arrow record batches with the `kafka` source's columns."""

from __future__ import annotations

import gc
import json
import logging
import os
import sys
import time
from typing import Iterator

import numpy as np
import pyarrow as pa

from spark_kwire.client.errors import OffsetOutOfRangeError, UnknownTopicError
from spark_kwire.client.consumer.fetcher import fetch_range
from spark_kwire.client.consumer.packed_fetch import PackedFetch
from spark_kwire.client.settings.config import ClientConfig
from spark_kwire.protocol.records import from_numpy
from spark_kwire.protocol.records.compilation import warming
from spark_kwire.spark.errors import DataLossError
from spark_kwire.spark.reading.packing import PackedRanges
from spark_kwire.spark.reading.planner import OffsetRange
from spark_kwire.spark.schema import arrow_read_schema
from spark_kwire.spark.shared_client import shared_client
from spark_kwire.spark.workers.garbage_collection import freeze_loaded_objects, heavy_imports

log = logging.getLogger("spark_kwire")

def _constant_strings(value: str, n: int) -> pa.Array:
    encoded = value.encode()
    offsets = np.arange(n + 1, dtype=np.int32) * len(encoded)
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(encoded * n))


_TIMESTAMP_US_UTC = pa.timestamp("us", tz="UTC")


def _timestamps_us(millis) -> pa.Array:
    """Kafka timestamps (ms) as Spark's timestamp column. Built from the buffer: pa.array(..., type=<a type
    with a time zone>) loads pyarrow's time zone database on its first call, a quarter second of every new
    Python worker's first task."""
    micros = np.asarray(millis, dtype=np.int64) * 1000
    return pa.Array.from_buffers(_TIMESTAMP_US_UTC, len(micros), [None, pa.py_buffer(micros)])


def to_record_batch(decoded, topic: str, partition: int, include_headers: bool) -> pa.RecordBatch:
    """Columns of one decoded chunk, in the schema of Spark's `kafka` source."""
    n = len(decoded.offset)
    columns = [
        decoded.key,
        decoded.value,
        _constant_strings(topic, n),
        from_numpy(np.full(n, partition, dtype=np.int32)),
        from_numpy(np.asarray(decoded.offset, dtype=np.int64)),
        _timestamps_us(decoded.timestamp),
        from_numpy(np.asarray(decoded.timestamp_type, dtype=np.int32)),
    ]
    if include_headers:
        columns.append(decoded.headers)
    return pa.RecordBatch.from_arrays(columns, schema=arrow_read_schema(include_headers))


def read_partition(kafka: ClientConfig, partition, *, include_headers: bool, read_committed: bool,
                   fail_on_data_loss: bool) -> Iterator[pa.RecordBatch]:
    """Read one Spark partition: an OffsetRange, or PackedRanges whose ranges are read one after the other
    (each in offset order), their first Fetches batched per leader."""
    freeze_loaded_objects()  # before the task's data exists: what is alive now stays loaded
    settings = {"include_headers": include_headers, "read_committed": read_committed,
                "fail_on_data_loss": fail_on_data_loss}
    if isinstance(partition, PackedRanges):
        yield from coalesce_small_batches(_read_packed(kafka, partition, **settings))
    else:
        yield from coalesce_small_batches(read_range(kafka, partition, **settings))


def _read_packed(kafka: ClientConfig, packed: PackedRanges, *, include_headers: bool, read_committed: bool,
                 fail_on_data_loss: bool) -> Iterator[pa.RecordBatch]:
    for _rng, batch in read_ranges(kafka, packed.ranges, include_headers=include_headers,
                                   read_committed=read_committed, fail_on_data_loss=fail_on_data_loss):
        yield batch


def read_ranges(kafka: ClientConfig, ranges, *, include_headers: bool, read_committed: bool,
                fail_on_data_loss: bool) -> Iterator[tuple[OffsetRange, pa.RecordBatch]]:
    """The non-empty ones of `ranges` read one after the other, each in offset order, their first Fetches
    batched per leader; every batch given with the range it belongs to."""
    ranges = [r for r in ranges if r.size > 0]
    if not ranges:
        return
    client = shared_client(kafka)
    isolation = "read_committed" if read_committed else "read_uncommitted"
    batched = PackedFetch(client, ranges, isolation_level=isolation)
    for index, rng in enumerate(ranges):
        for batch in read_range(kafka, rng, include_headers=include_headers, read_committed=read_committed,
                                fail_on_data_loss=fail_on_data_loss, prefetched=batched.first_fetch(index)):
            yield rng, batch


# Spark pays a fixed cost for every Arrow batch a Python source yields: what a task reads (a packed task's small
# ranges, or one range's 1 MiB fetches) is handed over in batches of at least this many rows (or bytes), in the
# order it was read.
COALESCE_ROWS = 32_768
COALESCE_BYTES = 4 * 1024 * 1024


def coalesce_small_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """`batches` in the same order, consecutive small ones concatenated (up to COALESCE_ROWS/BYTES)."""
    pending: list[pa.RecordBatch] = []
    rows = size = 0
    for batch in batches:
        if batch.num_rows >= COALESCE_ROWS or batch.nbytes >= COALESCE_BYTES:
            if pending:
                yield _concatenated(pending)
                pending, rows, size = [], 0, 0
            yield batch
            continue
        pending.append(batch)
        rows += batch.num_rows
        size += batch.nbytes
        if rows >= COALESCE_ROWS or size >= COALESCE_BYTES:
            yield _concatenated(pending)
            pending, rows, size = [], 0, 0
    if pending:
        yield _concatenated(pending)


def _concatenated(batches: list[pa.RecordBatch]) -> pa.RecordBatch:
    if len(batches) == 1:
        return batches[0]
    return pa.Table.from_batches(batches).combine_chunks().to_batches()[0]


def read_range(kafka: ClientConfig, rng: OffsetRange, *, include_headers: bool, read_committed: bool,
               fail_on_data_loss: bool, prefetched=None) -> Iterator[pa.RecordBatch]:
    """Fetch [rng.start, rng.end) of one partition. Offsets that vanished meanwhile follow failOnDataLoss.
    `prefetched` is the answer to the range's first Fetch when it was sent along with others."""
    # A plan with no ranges reaches the reader as Spark's placeholder InputPartition(None).
    if not isinstance(rng, OffsetRange) or rng.size <= 0:
        return
    client = shared_client(kafka)
    isolation = "read_committed" if read_committed else "read_uncommitted"
    stats = _Stats(rng)
    position = rng.start
    while position < rng.end:
        try:
            fetched = fetch_range(client, rng.topic, rng.partition, position, rng.end,
                                  isolation_level=isolation, include_headers=include_headers, prefetched=prefetched)
            prefetched = None
            for decoded in fetched:
                stats.add(decoded)
                position = max(position, decoded.next_offset)
                if len(decoded.offset):
                    yield to_record_batch(decoded, rng.topic, rng.partition, include_headers)
            if getattr(fetched, "stopped_early", False):
                # The partition now ends before the planned end (truncated after a leader change, or
                # records deleted): never return fewer rows without saying so.
                message = (f"{rng.topic}-{rng.partition} ends at offset {position}, before the planned end "
                           f"{rng.end} ({fetched.stop_reason}). Some data may have been lost.")
                if fail_on_data_loss:
                    raise DataLossError(message + " Set the option 'failOnDataLoss' to 'false' to go on with what is there.")
                log.warning("kwire: %s Continuing (failOnDataLoss=false).", message)
            break
        except OffsetOutOfRangeError as e:
            log_start = getattr(e, "log_start_offset", None)
            message = (
                f"Offsets [{position}, {rng.end}) of {rng.topic}-{rng.partition} are no longer all available "
                f"({e}). Some data may have been lost."
            )
            if fail_on_data_loss or log_start is None or log_start <= position:
                raise DataLossError(message + " Set the option 'failOnDataLoss' to 'false' to go on with what is there.") from e
            log.warning("kwire: %s Skipping to %s (failOnDataLoss=false).", message, log_start)
            position = log_start
        except UnknownTopicError as e:
            message = f"Topic '{rng.topic}' was deleted while offsets [{position}, {rng.end}) were being read."
            if fail_on_data_loss:
                raise DataLossError(message + " Set the option 'failOnDataLoss' to 'false' to go on without them.") from e
            log.warning("kwire: %s Skipping the rest of the range (failOnDataLoss=false).", message)
            break
    stats.write()


class _Stats:
    """Per-task fetch statistics, written as one JSON line to $KWIRE_STATS_DIR when that is set.

    Tests use it to prove what a read really fetched (e.g. that pushed-down filters narrowed the ranges)."""

    def __init__(self, rng: OffsetRange) -> None:
        self.rng, self.records, self.bytes, self.started = rng, 0, 0, time.time()

    def add(self, decoded) -> None:
        self.records += int(getattr(decoded, "record_count", len(decoded.offset)))
        self.bytes += int(getattr(decoded, "bytes_decoded", 0))

    def write(self) -> None:
        folder = os.environ.get("KWIRE_STATS_DIR")
        if not folder:
            return
        line = json.dumps({
            "topic": self.rng.topic, "partition": self.rng.partition, "start": self.rng.start, "end": self.rng.end,
            "records_fetched": self.records, "bytes_fetched": self.bytes, "seconds": round(time.time() - self.started, 3),
            "worker_objects_frozen": gc.get_freeze_count(),  # see worker_gc.py
            "pid": os.getpid(), "program": os.path.basename(sys.argv[0]) if sys.argv else "",  # which Python process
            "kernels": warming.timings(), "imported": heavy_imports(),  # how this worker got its record kernels (see protocol/records/compilation/warming.py)
        })
        with open(os.path.join(folder, f"reads-{os.getpid()}.jsonl"), "a") as f:
            f.write(line + "\n")
