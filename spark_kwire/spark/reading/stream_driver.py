"""Streaming reads on the driver (streamReadMode=driver, or auto's choice): small micro-batches read in Spark's
long-lived source process, with no Python worker in the micro-batch's task.

Spark's `SimpleDataSourceStreamReader` (PySpark 4.0+) runs `read(start)` in the driver's source process while it
asks for the latest offsets; Spark keeps the rows in the driver's block manager and the micro-batch's task reads
them from there. What Spark does with such a reader (pyspark.sql.datasource_internal._SimpleStreamReaderWrapper,
the same on 4.0.5 to 4.3):

* `read(start)` returns the batch's rows and its end offsets; the rows are kept until Spark commits a later batch
  (and `copy.copy`-ed when planned, so they are returned as a list's iterator of Arrow batches). A non-empty batch
  whose end equals its start is an error (SIMPLE_STREAM_READER_OFFSET_DID_NOT_ADVANCE); an empty one is an idle
  poll, kept nowhere (older patch releases kept each one until the next commit: stream_mode.py declines them).
* `readBetweenOffsets(start, end)` reads a batch again when its rows are not there: a batch replayed after a
  restart. Spark runs it in a task, through the stream reader it planned the read with, which kwire makes the
  tasks' reader: KwireStreamReaderBase.read sends those batches here (`read_between_offsets`).
* No ReadLimit reaches the reader and `reportLatestOffset` is not called: maxOffsetsPerTrigger,
  minOffsetsPerTrigger and maxTriggerDelay are applied here, from `start`, as the tasks' readers apply them.
* Trigger.AvailableNow: Spark 4.2+ asks a reader that is `SupportsTriggerAvailableNow` for its target and runs
  batches until it is reached; 4.0 and 4.1 run one batch, indistinguishable from a first processing-time batch.

Every batch is capped at DRIVER_BOUND (rows and bytes, stream_mode.py), so the driver's process never holds more
than a few bounded batches; a stream that outgrows the bound is told to read with tasks.

Offsets, limits and data-loss checks are StreamOffsets' (stream_offsets.py), the ranges the tasks' reader would
plan: the checkpoint is the same in both modes, and a query restarts in either.
"""

from __future__ import annotations

import logging
import time
from typing import Iterator

import pyarrow as pa
from pyspark.sql.datasource import SimpleDataSourceStreamReader

from spark_kwire.spark.capabilities import READ_LIMIT_API
from spark_kwire.spark.options.parsing import ReadOptions
from spark_kwire.spark.reading.packing import PackedRanges
from spark_kwire.spark.reading.planner import OffsetRange
from spark_kwire.spark.reading.range_reading import read_planned, typed_batches
from spark_kwire.spark.reading.stream_mode import DRIVER_BOUND, DriverBound, ModeChoice
from spark_kwire.spark.reading.stream_offsets import Offsets, StreamOffsets, from_json_offsets, to_json_offsets
from spark_kwire.spark.workers.stream_kernels import load_stream_kernels

log = logging.getLogger("spark_kwire")

# While batches keep being capped by the bound, the warning is repeated at most this often.
CAPPED_WARNING_EVERY_S = 300.0


def is_driver_batch(partition) -> bool:
    """True for the partition Spark plans for a batch of the driver's read mode (SimpleInputPartition)."""
    try:
        from pyspark.sql.datasource_internal import SimpleInputPartition
    except ImportError:  # a PySpark without the simple reader never plans one
        return False
    return isinstance(partition, SimpleInputPartition)


def read_between_offsets(offsets: StreamOffsets, start: dict, end: dict) -> Iterator[pa.RecordBatch]:
    """Every record of the batch (start, end), as the tasks' reader reads a planned batch: a replay reads what the
    first run read."""
    ranges = tuple(offsets._ranges(start, end))
    return read_planned(offsets.options, PackedRanges(ranges))


class DriverStreamReader(StreamOffsets, SimpleDataSourceStreamReader):
    """Reads each micro-batch in the driver's source process; see the module docstring."""

    def __init__(self, options: ReadOptions, choice: ModeChoice, bound: DriverBound = DRIVER_BOUND) -> None:
        super().__init__(options)
        self.choice = choice
        self.bound = bound
        self._capped_warned_at: float | None = None
        self._single_batch_warned = False
        self._byte_capped = False

    # -- SimpleDataSourceStreamReader -----------------------------------------------------------------------
    def read(self, start: dict) -> tuple[Iterator[pa.RecordBatch], dict]:
        begin = from_json_offsets(start)
        user_cap = self.options.max_offsets_per_trigger
        row_cap = min(user_cap, self.bound.rows) if user_cap else self.bound.rows
        end = self._end_offsets(begin, row_cap, self.options.min_offsets_per_trigger)
        if end == begin:  # nothing new, or held back by minOffsetsPerTrigger: an idle poll
            return iter(()), start
        ranges = self._ranges(start, to_json_offsets(end))
        batches, end = self._read_capped(ranges, end)
        self._tell_when_capped(begin, end, capped_by_bound=not user_cap or self.bound.rows < user_cap)
        return iter(list(typed_batches(self.options, iter(batches)))), to_json_offsets(end)

    def readBetweenOffsets(self, start: dict, end: dict) -> Iterator[pa.RecordBatch]:
        self._load_kernels()
        return read_between_offsets(self, start, end)

    # -- reading --------------------------------------------------------------------------------------------
    def _load_kernels(self) -> None:
        import spark_kwire.spark.reading.reader  # noqa: F401 -- registers the decoding kernels

        load_stream_kernels("decode_headers" if self.options.include_headers else "decode")

    def _read_capped(self, ranges: list[OffsetRange], end: Offsets) -> tuple[list[pa.RecordBatch], Offsets]:
        """The records of `ranges`, read in turn until the bound's bytes are reached (at least one Arrow batch, so
        that a stream always moves on), and the batch's end offsets: `end`, moved back to where reading stopped."""
        from spark_kwire.spark.reading.reader import coalesce_small_batches, read_ranges

        self._load_kernels()
        options = self.options
        kept: list[pa.RecordBatch] = []
        size = 0
        reached: Offsets = {}  # per partition read from: the offset after its last row kept
        stopped_at: int | None = None  # the index of the range reading stopped in
        read = read_ranges(options.kafka, ranges, include_headers=options.include_headers,
                           read_committed=options.read_committed, fail_on_data_loss=options.fail_on_data_loss)
        for rng, batch in read:
            if kept and size + batch.nbytes > self.bound.bytes:
                stopped_at = ranges.index(rng)
                break
            kept.append(batch)
            size += batch.nbytes
            reached[(rng.topic, rng.partition)] = int(batch.column("offset")[-1].as_py()) + 1
        read.close()
        self._byte_capped = stopped_at is not None
        if stopped_at is not None:
            end = dict(end)
            for rng in ranges[stopped_at:]:  # the rest is the next batch's: from where reading got to
                end[(rng.topic, rng.partition)] = reached.get((rng.topic, rng.partition), rng.start)
        return list(coalesce_small_batches(iter(kept))), end

    # -- telling the user ---------------------------------------------------------------------------------
    def _tell_when_capped(self, begin: Offsets, end: Offsets, *, capped_by_bound: bool) -> None:
        latest = self.latest_seen or {}
        waiting = sum(max(0, latest[tp] - end.get(tp, latest[tp])) for tp in latest)
        if not waiting:
            return
        if not READ_LIMIT_API and not self._single_batch_warned:
            self._single_batch_warned = True
            log.warning(
                "kwire: this micro-batch, read on the driver (%s), is capped (%d more records wait). This Spark has "
                "no %s (%s brings it): it runs Trigger.AvailableNow and Trigger.Once as a single batch and does not "
                "tell the source which trigger runs it, so such a query stops after this batch and leaves the rest "
                "for its next run; a processing-time query reads them in the next batches. To read everything "
                "available in one batch, set streamReadMode=tasks (and no maxOffsetsPerTrigger).",
                self.choice.describe(), waiting, READ_LIMIT_API.name, READ_LIMIT_API.since,
            )
        if not (capped_by_bound or self._byte_capped):
            return  # capped by maxOffsetsPerTrigger, as the user asked
        now = time.monotonic()
        if self._capped_warned_at is not None and now - self._capped_warned_at < CAPPED_WARNING_EVERY_S:
            return
        self._capped_warned_at = now
        log.warning(
            "kwire: the stream outgrows reading on the driver (%s): this micro-batch was capped at the driver's "
            "bound of %d records / %s and %d more records wait. Micro-batches stay capped until the stream has "
            "caught up, so it falls behind while more arrives than that per micro-batch. For this stream, restart "
            "the query with the option streamReadMode=tasks (same checkpoint): tasks read batches of any size, in "
            "parallel.",
            self.choice.describe(), self.bound.rows, self.bound.describe_bytes(), waiting,
        )


if READ_LIMIT_API:
    from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow

    class DriverStreamReaderAvailableNow(DriverStreamReader, SupportsTriggerAvailableNow):
        """The driver's reader on Spark 4.2+, which runs Trigger.AvailableNow in batches up to a target."""

        def prepareForTriggerAvailableNow(self) -> None:
            """Fix the offsets to read up to: the latest of every partition when the query starts."""
            self.available_now_target = self._latest()


def driver_stream_reader_class():
    """The driver's stream reader for this PySpark."""
    return DriverStreamReaderAvailableNow if READ_LIMIT_API else DriverStreamReader
