"""The producer's accumulator: Arrow columns in, encoded record batches out, per partition.

Rows appended to a partition first join its *open batch*: Arrow slices not encoded yet, so that the rows of
several appends share one record batch (a Spark task hands over a few thousand rows at a time, spread over
all partitions). As soon as the open batch holds ``batch.size`` bytes (estimated, uncompressed) its full batches
are encoded and become *ready* for the sender; the rest stays open. An open batch is also closed (encoded,
made ready) on request: ``linger.ms`` after its first row, at a flush, or when ``buffer.memory`` is reached;
such a closing shows the sender what it encoded in groups of ``batch.size`` bytes, as each group is ready.
With the idempotent producer each batch is stamped once, when it is encoded, with the producer id, epoch and
its base sequence, so a retry resends the *same bytes* and the broker deduplicates. Rows without timestamps
get the time of their append.

Thread safety: the appending thread and the sender thread share an accumulator. Each partition has a lock,
held while its rows are encoded, so its batches become ready in sequence order whoever encodes them; one
condition guards the ready queues and the byte counts, and wakes whoever waits for room or for delivery.
The bytes held (open estimates, then encoded sizes until the sender releases them on acknowledgement) are what
``buffer.memory`` bounds. No network code: the partition must have been checked by the caller.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from typing import Callable, Iterable

import numpy as np
import pyarrow as pa

from spark_kwire.client.producer.idempotence import IdempotenceState
from spark_kwire.client.producer.phase_times import PhaseTimes
from spark_kwire.protocol.records import encode_record_batches
from spark_kwire.protocol.records._arrow import timestamp_column

__all__ = ["ProducerBatch", "RecordAccumulator", "batch_record_count"]

TopicPartition = tuple[str, int]
RECORD_OVERHEAD_BYTES = 12  # a record's varints (length, attributes, deltas, lengths, header count), roughly
_batch_numbers = itertools.count()  # creation order of batches (a partition's batches are numbered in order)


class ProducerBatch:
    """One encoded record batch of one partition, and how its delivery went so far."""

    __slots__ = ("topic", "partition", "payload", "count", "base_sequence", "attempts", "last_error", "created",
                 "number")

    def __init__(self, topic: str, partition: int, payload: bytes, count: int, base_sequence: int) -> None:
        self.topic = topic
        self.partition = partition
        self.payload = payload
        self.count = count
        self.base_sequence = base_sequence
        self.attempts = 0
        self.last_error: BaseException | None = None
        self.created = time.monotonic()
        self.number = next(_batch_numbers)

    @property
    def tp(self) -> TopicPartition:
        return (self.topic, self.partition)

    def __repr__(self) -> str:
        return (f"ProducerBatch({self.topic}-{self.partition}, {self.count} records, {len(self.payload)} bytes, "
                f"sequence {self.base_sequence}, attempts {self.attempts})")


def batch_record_count(payload: bytes) -> int:
    """The records field of an encoded v2 record batch."""
    return int.from_bytes(payload[57:61], "big", signed=True)


def _binary_column(column, what: str, tp: TopicPartition):
    """``column`` as a binary or string Arrow array (view types are cast); ValueError for other types."""
    if column is None:
        return None
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    kind = column.type
    if pa.types.is_binary_view(kind) or pa.types.is_string_view(kind):
        return column.cast(pa.large_binary())
    if not (pa.types.is_binary(kind) or pa.types.is_string(kind) or pa.types.is_large_binary(kind)
            or pa.types.is_large_string(kind)):
        raise ValueError(f"cannot encode records for {tp[0]}-{tp[1]}: {what} must be a binary or string Arrow "
                         f"array, not {kind}")
    return column


def _data_bytes(column) -> int:
    """Bytes of data in a binary/string Arrow array (its slice only)."""
    if column is None or len(column) == 0:
        return 0
    offsets = column.buffers()[1]
    kind = np.int64 if pa.types.is_large_binary(column.type) or pa.types.is_large_string(column.type) else np.int32
    view = np.frombuffer(offsets, dtype=kind)
    return int(view[column.offset + len(column)] - view[column.offset])


class _Rows:
    """Appended rows of one partition, not encoded yet."""

    __slots__ = ("values", "keys", "headers", "timestamps", "count", "nbytes")

    def __init__(self, values, keys, headers, timestamps, nbytes: int) -> None:
        self.values = values
        self.keys = keys
        self.headers = headers
        self.timestamps = timestamps  # int (every row) or np.int64 array
        self.count = len(values)
        self.nbytes = nbytes

    @classmethod
    def of(cls, tp: TopicPartition, values, keys, headers, timestamps_ms) -> "_Rows":
        values = _binary_column(values, "values", tp)
        keys = _binary_column(keys, "keys", tp)
        if isinstance(headers, pa.ChunkedArray):
            headers = headers.combine_chunks()
        n = len(values)
        if keys is not None and len(keys) != n:
            raise ValueError(f"keys has {len(keys)} rows, values has {n}")
        if headers is not None and len(headers) != n:
            raise ValueError(f"headers has {len(headers)} rows, values has {n}")
        timestamps = _timestamps(timestamps_ms, n)
        nbytes = _data_bytes(values) + _data_bytes(keys) + RECORD_OVERHEAD_BYTES * n
        if headers is not None:
            nbytes += headers.nbytes
        return cls(values, keys, headers, timestamps, nbytes)

    def slice(self, start: int, stop: int | None = None) -> "_Rows":
        stop = self.count if stop is None else stop
        n = stop - start
        part = _Rows(self.values.slice(start, n), None if self.keys is None else self.keys.slice(start, n),
                     None if self.headers is None else self.headers.slice(start, n),
                     self.timestamps if isinstance(self.timestamps, int) else self.timestamps[start:stop], 0)
        part.nbytes = self.nbytes * n // max(1, self.count)
        return part

    def joins(self, other: "_Rows") -> bool:
        """Whether ``other`` can be concatenated after these rows (same column types)."""
        if self.values.type != other.values.type:
            return False
        for mine, theirs in ((self.keys, other.keys), (self.headers, other.headers)):
            if mine is not None and theirs is not None and mine.type != theirs.type:
                return False
        return True


def _timestamps(timestamps_ms, n: int):
    if timestamps_ms is None:
        return int(time.time() * 1000)
    if isinstance(timestamps_ms, (int, np.integer)):
        return int(timestamps_ms)
    return timestamp_column(timestamps_ms, n)


def _joined(rows: list[_Rows]) -> _Rows:
    """One set of columns from several appends (copies; a single append is passed through)."""
    if len(rows) == 1:
        return rows[0]
    values = pa.concat_arrays([r.values for r in rows])
    keys = headers = None
    if any(r.keys is not None for r in rows):
        key_type = next(r.keys.type for r in rows if r.keys is not None)
        keys = pa.concat_arrays([r.keys if r.keys is not None else pa.nulls(r.count, key_type) for r in rows])
    if any(r.headers is not None for r in rows):
        header_type = next(r.headers.type for r in rows if r.headers is not None)
        headers = pa.concat_arrays([r.headers if r.headers is not None else pa.nulls(r.count, header_type)
                                    for r in rows])
    stamps = {r.timestamps for r in rows if isinstance(r.timestamps, int)}
    if len(stamps) == 1 and all(isinstance(r.timestamps, int) for r in rows):
        timestamps = stamps.pop()
    else:
        timestamps = np.concatenate([np.full(r.count, r.timestamps, np.int64) if isinstance(r.timestamps, int)
                                     else r.timestamps for r in rows])
    return _Rows(values, keys, headers, timestamps, sum(r.nbytes for r in rows))


class _Partition:
    """One partition's rows on their way to the sender."""

    __slots__ = ("tp", "lock", "open", "open_rows", "open_bytes", "open_since", "ready", "full_at")

    def __init__(self, tp: TopicPartition) -> None:
        self.tp = tp
        self.lock = threading.Lock()  # held while this partition's rows are encoded
        self.open: list[_Rows] = []
        self.open_rows = 0
        self.open_bytes = 0
        self.open_since = 0.0  # time.monotonic() of the open batch's first row
        self.ready: deque[ProducerBatch] = deque()
        self.full_at = 0  # open_bytes at which to look for full batches (later when the estimate ran ahead)


class RecordAccumulator:
    """Open and ready batches per partition; see the module docstring."""

    def __init__(self, *, compression: str, batch_size: int, idempotence: IdempotenceState,
                 on_ready: Callable[[], None] | None = None, times: PhaseTimes | None = None,
                 wake_bytes: int | None = None) -> None:
        self.compression = compression
        self.batch_size = batch_size
        #: close_open shows its batches to the sender in groups of this many bytes (batch.size by default)
        self.wake_bytes = batch_size if wake_bytes is None else wake_bytes
        self.idempotence = idempotence
        self.on_ready = on_ready  # called (without locks held) when batches became ready
        self.times = times if times is not None else PhaseTimes(False)
        self.condition = threading.Condition(threading.Lock())
        self._partitions: dict[TopicPartition, _Partition] = {}
        self._open_order: dict[TopicPartition, None] = {}  # partitions with an open batch, oldest first
        self._ready_order: dict[TopicPartition, None] = {}  # partitions with ready batches
        self._open_bytes = 0
        self._open_rows = 0
        self._ready_records = 0
        self.held_bytes = 0  # open (estimated) + encoded bytes not yet released by the sender

    # -- state -----------------------------------------------------------------------------------------
    @property
    def pending_bytes(self) -> int:
        """Bytes appended and not yet handed to the sender (open batches, estimated)."""
        return self._open_bytes

    @property
    def pending_records(self) -> int:
        """Records appended and not yet handed to the sender (in open batches)."""
        return self._open_rows

    @property
    def ready_records(self) -> int:
        """Records encoded and waiting for the sender."""
        return self._ready_records

    def waited_ms(self) -> float:
        """How long the oldest open batch has waited (0 when none is open)."""
        with self.condition:
            first = next(iter(self._open_order), None)
            since = self._partitions[first].open_since if first is not None else None
        return (time.monotonic() - since) * 1000 if since is not None else 0.0

    def oldest_open_since(self) -> float | None:
        """time.monotonic() of the oldest open batch's first row, None when no batch is open."""
        with self.condition:
            first = next(iter(self._open_order), None)
            return self._partitions[first].open_since if first is not None else None

    def open_partitions(self, opened_before: float | None = None) -> list[TopicPartition]:
        """Partitions with an open batch (opened before ``opened_before``, a time.monotonic() value, when given)."""
        with self.condition:
            if opened_before is None:
                return list(self._open_order)
            out = []
            for tp in self._open_order:
                if self._partitions[tp].open_since >= opened_before:
                    break
                out.append(tp)
            return out

    def _partition(self, tp: TopicPartition) -> _Partition:
        part = self._partitions.get(tp)
        if part is None:
            with self.condition:
                part = self._partitions.setdefault(tp, _Partition(tp))
        return part

    # -- appending -------------------------------------------------------------------------------------
    def append(self, topic: str, partition: int, values, keys=None, headers=None, timestamps_ms=None) -> bool:
        """Add rows of one partition to its open batch; encode the batches that became full (see
        ``Producer.send_batch`` for the column types). True when the rows opened a new batch."""
        tp = (topic, partition)
        rows = _Rows.of(tp, values, keys, headers, timestamps_ms)
        if rows.count == 0:
            return False
        opened = False
        part = self._partition(tp)
        with part.lock:
            if part.open and not part.open[0].joins(rows):
                self._encode(part, everything=True)
            part.open.append(rows)
            part.open_rows += rows.count
            part.open_bytes += rows.nbytes
            with self.condition:
                if tp not in self._open_order:
                    part.open_since = time.monotonic()
                    self._open_order[tp] = None
                    opened = True
                self._open_rows += rows.count
                self._open_bytes += rows.nbytes
                self.held_bytes += rows.nbytes
            if part.open_bytes >= max(self.batch_size, part.full_at):
                self._encode(part, everything=False)
        return opened

    def close_open(self, partitions: Iterable[TopicPartition] | None = None, times: PhaseTimes | None = None) -> int:
        """Encode the open batches of ``partitions`` (all when None) and make them ready; returns how many
        partitions had one. ``times``: the calling thread's timer (the appending thread's by default).

        The sender sees them in groups of at least ``wake_bytes`` (the last group smaller), each shown to it
        and the sender woken as soon as it is encoded. So a flush of a few small partitions leaves as one
        request per leader (shown one by one, a stream's micro-batch of 4 partitions took 1.9-2.3 requests),
        and a flush of many is sent group by group while the rest is encoded, instead of the sender idling
        until the last partition is ready (which made 64-partition writes slower, issue 45)."""
        tps = self.open_partitions() if partitions is None else list(partitions)
        closed = 0
        group: list[TopicPartition] = []  # made ready here, not shown to the sender yet
        group_bytes = 0
        try:
            for tp in tps:
                part = self._partitions.get(tp)
                if part is None:
                    continue
                with part.lock:
                    if not part.open:
                        continue
                    group_bytes += self._encode(part, everything=True, times=times, hold=True)
                    group.append(tp)
                    closed += 1
                if group_bytes >= self.wake_bytes:
                    self._show(group)
                    group, group_bytes = [], 0
        finally:
            if group:
                self._show(group)
        return closed

    def _show(self, tps: list[TopicPartition]) -> None:
        """Let the sender see the ready batches that close_open held back for ``tps``, and wake it."""
        with self.condition:
            for tp in tps:
                if self._partitions[tp].ready:
                    self._ready_order[tp] = None
        if self.on_ready is not None:
            self.on_ready()

    def _encode(self, part: _Partition, *, everything: bool, times: PhaseTimes | None = None,
                hold: bool = False) -> int:
        """Encode the open rows of ``part`` (caller holds ``part.lock``): all of them, or only whole batches.
        Returns the bytes made ready. ``hold``: the caller shows them to the sender later (:meth:`_show`)."""
        started = time.perf_counter()
        topic, partition = part.tp
        rows = _joined(part.open)
        state = self.idempotence
        sequence = state.next_sequence(part.tp)
        try:
            payloads = encode_record_batches(
                rows.values, rows.keys, timestamps_ms=rows.timestamps, headers=rows.headers,
                compression=self.compression, max_batch_bytes=self.batch_size, producer_id=state.batch_producer_id,
                producer_epoch=state.batch_producer_epoch, base_sequence=sequence,
                transactional=state.transactional, leave_last=not everything)
        except (ValueError, TypeError, pa.ArrowException) as exc:
            self._drop_open(part)
            raise ValueError(f"cannot encode records for {topic}-{partition}: {exc}") from exc
        if not payloads and not everything:  # the estimate ran ahead of the real size: look again later
            part.open = [rows]
            part.full_at = part.open_bytes + self.batch_size // 4
            return 0
        batches = []
        cut = 0
        for payload in payloads:
            count = batch_record_count(payload)
            batches.append(ProducerBatch(topic, partition, payload, count, sequence))
            sequence = state.advance(part.tp, count)
            cut += count
        remainder = rows.slice(cut) if cut < rows.count else None
        self._make_ready(part, batches, remainder, shown=not hold)
        (times or self.times).since("encode", started)
        if not hold and self.on_ready is not None:
            self.on_ready()
        return sum(len(b.payload) for b in batches)

    def _make_ready(self, part: _Partition, batches: list[ProducerBatch], remainder: _Rows | None,
                    shown: bool = True) -> None:
        encoded_bytes = sum(len(b.payload) for b in batches)
        encoded_records = sum(b.count for b in batches)
        left_bytes = remainder.nbytes if remainder is not None else 0
        released = part.open_bytes - left_bytes
        part.open = [remainder] if remainder is not None else []
        part.full_at = 0
        part.open_rows -= encoded_records
        part.open_bytes = left_bytes
        with self.condition:
            part.ready.extend(batches)
            if batches and shown:
                self._ready_order[part.tp] = None
            self._ready_records += encoded_records
            self._open_rows -= encoded_records
            self._open_bytes -= released
            self.held_bytes += encoded_bytes - released
            if remainder is None:
                self._open_order.pop(part.tp, None)
            self.condition.notify_all()

    def _drop_open(self, part: _Partition) -> None:
        """Forget rows that cannot be encoded (the caller raises)."""
        with self.condition:
            self._open_rows -= part.open_rows
            self._open_bytes -= part.open_bytes
            self.held_bytes -= part.open_bytes
            self._open_order.pop(part.tp, None)
        part.open, part.open_rows, part.open_bytes = [], 0, 0

    # -- the sender's side -------------------------------------------------------------------------------
    def ready_partitions(self) -> list[TopicPartition]:
        """Partitions with ready batches, in the order they first had some."""
        with self.condition:
            return list(self._ready_order)

    def peek_ready(self, tp: TopicPartition) -> ProducerBatch | None:
        """The next ready batch of ``tp`` without taking it."""
        part = self._partitions.get(tp)
        try:
            return part.ready[0] if part is not None else None
        except IndexError:
            return None

    def pop_ready(self, tp: TopicPartition) -> ProducerBatch | None:
        """The next ready batch of ``tp`` (in sequence order), None when there is none."""
        with self.condition:
            part = self._partitions.get(tp)
            if part is None or not part.ready:
                return None
            batch = part.ready.popleft()
            if not part.ready:
                self._ready_order.pop(tp, None)
            self._ready_records -= batch.count
            return batch

    def release(self, nbytes: int) -> None:
        """``nbytes`` of encoded batches were acknowledged (or given up): room for more."""
        with self.condition:
            self.held_bytes -= nbytes
            self.condition.notify_all()

    def wake_waiters(self) -> None:
        with self.condition:
            self.condition.notify_all()

    # -- what is left ------------------------------------------------------------------------------------
    def unsent(self) -> dict[TopicPartition, deque[ProducerBatch]]:
        """The ready batches (encoded, never handed to the sender), per partition."""
        with self.condition:
            return {tp: deque(part.ready) for tp, part in self._partitions.items() if part.ready}

    def clear(self) -> None:
        """Forget every open and ready batch."""
        with self.condition:
            for part in self._partitions.values():
                part.open, part.open_rows, part.open_bytes = [], 0, 0
                part.ready.clear()
            self._open_order.clear()
            self._ready_order.clear()
            self._open_bytes = self._open_rows = self._ready_records = 0
            self.held_bytes = 0
            self.condition.notify_all()

