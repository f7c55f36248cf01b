"""Producer: append Arrow columns per partition; a sender thread delivers them while you append more.

Three parts, each in its own module: the :class:`~spark_kwire.client.producer.accumulator.RecordAccumulator` gathers
appended rows into record batches per partition and encodes them; the :class:`~spark_kwire.client.producer.sender.Sender`
thread keeps requests to the partition leaders in flight, with retries; the
:class:`~spark_kwire.client.producer.idempotence.IdempotenceState` holds the producer id, epoch and sequence numbers
both use. This class ties them together:

* ``send_batch`` checks the partition exists, gets a producer id (idempotent producer, on by default) and
  appends; rows without a partition are partitioned as Kafka's default partitioner does. A partition's rows
  wait in its open batch until they fill ``batch.size``; full batches go to the sender at once, so sending
  overlaps appending from the first full batch on.
* ``linger.ms`` (Kafka's meaning): how long an open batch may wait for more rows before it is sent anyway; the
  sender enforces it even when no append comes. Unset (kwire's default), open batches wait for ``flush()`` or
  for ``buffer.memory``, which suits Spark tasks that write a bounded set of rows.
* ``buffer.memory`` bounds the bytes held (open, ready and unacknowledged batches): an append that finds it
  reached closes every open batch and waits until acknowledgements make room (or the delivery fails).
* ``flush()`` closes the open batches, waits until every batch is acknowledged and returns what was
  acknowledged since the previous ``flush()``; the producer stays open. A failed delivery raises
  :class:`ProduceError` (from ``flush()`` or the next ``send_batch``) naming the topic, partition, leader and
  last error, with ``acknowledged`` holding what the brokers did acknowledge before the failure; the producer
  is then unusable.
* ``reusable`` says whether nothing is in doubt (no failure, nothing unacknowledged), so that the next write
  (e.g. the next Spark task in the same Python worker) may use the same producer id and sequence numbers
  instead of asking for new ones; ``prepare_for_reuse()`` makes each partition's next batch go alone again.

Delivery guarantees (first batch of a partition alone in flight until acknowledged, DUPLICATE_SEQUENCE_NUMBER
as success, OUT_OF_ORDER_SEQUENCE_NUMBER / UNKNOWN_PRODUCER_ID raised, ``delivery.timeout.ms``, ``acks=0``)
are the sender's; see :mod:`spark_kwire.client.producer.sender`. ``KWIRE_PROFILE=1`` counts where the time goes
(:meth:`Producer.phase_times`).
"""

from __future__ import annotations

import itertools
import time

import numpy as np

from spark_kwire.client.producer.accumulator import RecordAccumulator
from spark_kwire.client.settings.values import ACKS, COMPRESSION_TYPES
from spark_kwire.client.errors import ConfigError, KafkaApiError, KwireError, RetriesExhaustedError, UnknownTopicError
from spark_kwire.client.producer.idempotence import IdempotenceState
from spark_kwire.client.producer.phase_times import PhaseTimes, merge
from spark_kwire.client.producer.sender import PartitionAck, Sender
from spark_kwire.protocol.records import from_numpy, numeric_values, partition_for_keys, timestamp_column, valid_mask

__all__ = ["Producer", "PartitionAck", "PARTITION_COUNT_MAX_AGE_MS"]

# How long a topic's partition count is used before it is asked again (or metadata.max.age.ms when lower). A
# partition added meanwhile is seen this much later, as the Java producer sees it after metadata.max.age.ms.
PARTITION_COUNT_MAX_AGE_MS = 30_000
WAIT_SLICE_S = 0.2  # how often a waiting caller looks at the sender thread


class Producer:
    """Writes Arrow columns to partitions; see the module docstring. Call it from one thread at a time (its
    sender thread aside)."""

    def __init__(self, client, *, acks: int | str | None = None, compression: str | None = None,
                 idempotent: bool | None = None, batch_size: int | None = None, max_in_flight: int | None = None,
                 delivery_timeout_ms: int | None = None, request_timeout_ms: int | None = None,
                 max_request_size: int | None = None, buffer_memory: int | None = None,
                 linger_ms: int | None = None, transaction=None) -> None:
        config = client.config
        self.client = client
        #: a TransactionManager (transactions.py) whose transaction this producer writes in, or None
        self._transaction = transaction
        if transaction is not None:
            if acks not in (None, -1, "all", "-1") or idempotent is False:
                raise ConfigError("acks", acks, "all", reason="a transactional producer requires acks=all")
            acks, idempotent = -1, True
        if acks is None:
            self.acks = config.acks
        elif isinstance(acks, int) and not isinstance(acks, bool) and acks in (-1, 0, 1):
            self.acks = acks
        elif str(acks).lower() in ACKS:
            self.acks = ACKS[str(acks).lower()]
        else:
            raise ConfigError("acks", acks, "all, -1, 0, 1")
        self.compression = (compression or config.compression_type).lower()
        if self.compression not in COMPRESSION_TYPES:
            raise ConfigError("compression.type", compression, ", ".join(COMPRESSION_TYPES))
        self.max_in_flight = int(max_in_flight or config.max_in_flight_requests_per_connection)
        if idempotent is None:
            idempotent = config.enable_idempotence
            if idempotent is None:
                idempotent = self.acks == -1 and self.max_in_flight <= 5
        if idempotent and self.acks != -1:
            raise ConfigError("acks", self.acks, "all", reason="the idempotent producer requires acks=all")
        if idempotent and self.max_in_flight > 5:
            raise ConfigError("max.in.flight.requests.per.connection", self.max_in_flight, "1..5",
                              reason="the idempotent producer allows at most 5")
        self.idempotent = bool(idempotent)
        self.batch_size = int(batch_size or config.batch_size) or 16384
        self.batch_size = max(self.batch_size, 1024)
        self.delivery_timeout_ms = int(delivery_timeout_ms or config.delivery_timeout_ms)
        self.request_timeout_ms = int(request_timeout_ms or config.request_timeout_ms)
        self.max_request_size = int(max_request_size or config.max_request_size)
        self.buffer_memory = int(buffer_memory if buffer_memory is not None else config.buffer_memory)
        self.linger_ms = linger_ms if linger_ms is not None else config.linger_ms
        self.times = PhaseTimes()
        self._idempotence = transaction.state if transaction is not None else IdempotenceState(self.idempotent)
        self._accumulator = RecordAccumulator(compression=self.compression, batch_size=self.batch_size,
                                              idempotence=self._idempotence, times=self.times)
        self._sender = Sender(client, self._idempotence, self._accumulator, acks=self.acks,
                              max_in_flight=self.max_in_flight, batch_size=self.batch_size,
                              delivery_timeout_ms=self.delivery_timeout_ms, request_timeout_ms=self.request_timeout_ms,
                              max_request_size=self.max_request_size, linger_ms=self.linger_ms,
                              times=PhaseTimes(self.times.enabled))
        self._accumulator.on_ready = self._sender.wake
        if transaction is not None:  # partitions join the transaction before their first batch is sent
            self._sender.before_first_batch = transaction.add_partitions
        self._round_robin: dict[str, itertools.count] = {}
        self._partition_counts: dict[str, tuple[int, float]] = {}
        self._failed: BaseException | None = None
        self._closed = False
        self.last_used = time.monotonic()

    # -- state -----------------------------------------------------------------------------------------
    @property
    def producer_id(self) -> int:
        return self._idempotence.producer_id

    @property
    def producer_epoch(self) -> int:
        return self._idempotence.producer_epoch

    @property
    def idempotence(self) -> IdempotenceState:
        """The producer id, epoch and sequence numbers (a transaction manager owns them too)."""
        return self._idempotence

    @property
    def sender(self) -> Sender:
        return self._sender

    @property
    def pending_records(self) -> int:
        """Records appended and not yet handed to the sender (waiting in open batches)."""
        return self._accumulator.pending_records

    @property
    def pending_bytes(self) -> int:
        """Bytes appended and not yet handed to the sender (open batches, estimated before encoding)."""
        return self._accumulator.pending_bytes

    @property
    def held_bytes(self) -> int:
        """Bytes held: open, ready and unacknowledged batches (what buffer.memory bounds)."""
        return self._accumulator.held_bytes

    @property
    def sending_in_background(self) -> bool:
        """True while batches are ready or in flight."""
        return self._sender.busy

    @property
    def reusable(self) -> bool:
        """True when nothing is in doubt: open, not failed, nothing unacknowledged or waiting."""
        return (self._transaction is None and not self._closed and self._failed is None
                and self._sender.failure is None and self._accumulator.held_bytes == 0)

    def prepare_for_reuse(self) -> None:
        """Start a new write with the same producer id and sequences: every partition's next batch goes alone
        until acknowledged (the broker may have dropped its state for this producer meanwhile)."""
        self._check_usable()
        self._idempotence.forget_confirmations()
        self._sender.forget_idle_partitions()
        self.times.reset()
        self._sender.times.reset()

    def phase_times(self) -> dict:
        """Where the time went since the producer was made or reused (``KWIRE_PROFILE``; empty otherwise)."""
        return merge([self.times.snapshot(), self._sender.times.snapshot()])

    def _check_usable(self) -> None:
        if self._closed:
            raise KwireError("the producer is closed")
        if self._failed is not None:
            raise KwireError(f"the producer failed earlier and cannot be used: {self._failed}")
        failure = self._sender.failure
        if failure is not None:
            self._failed = failure
            raise failure

    # -- appending -------------------------------------------------------------------------------------
    def send_batch(self, topic: str, partition, values, keys=None, headers=None, timestamps_ms=None) -> int:
        """Queue rows for ``topic``; returns how many were queued. They are sent once their partition's open
        batch is full, when linger.ms passes, at flush() or when buffer.memory fills up.

        ``values``/``keys``: Arrow binary/string arrays (None = null); ``headers``:
        list<struct<key, value>> array or None; ``timestamps_ms``: None (now), an int or one int64 per row.
        ``partition``: an int for all rows, or one partition per row (Arrow/numpy int array; null or negative
        = choose), or None (choose for every row). Choosing works like Kafka's default partitioner: murmur2
        of the key; rows without a key go to one partition per call, round robin.
        """
        self._check_usable()
        n = len(values)
        if n == 0:
            return 0
        if partition is None or not isinstance(partition, (int, np.integer)):
            return self._send_partitioned(topic, values, keys, headers, timestamps_ms, partition)
        partition = int(partition)
        try:
            self.client.partition_info(topic, partition)  # UnknownTopicError early, naming the topic
        except RetriesExhaustedError as exc:
            raise self._sender.produce_error((topic, partition), "the cluster metadata could not be read",
                                             error=exc.last_error) from exc
        if self._idempotence.needs_producer_id:
            self._init_producer_id(topic, partition)
        self._wait_for_room()
        opened = self._accumulator.append(topic, partition, values, keys, headers, timestamps_ms)
        self.last_used = now = time.monotonic()
        if self.linger_ms is not None:
            # Batches that waited linger.ms are closed here when rows keep coming (one time comparison when
            # none did), and by the sender's timer when they stop coming.
            expired = self._accumulator.open_partitions(opened_before=now - self.linger_ms / 1000.0)
            if expired:
                self._accumulator.close_open(expired)
            if opened:
                self._sender.wake()  # its timer must know the new batch's deadline
        return n

    def _init_producer_id(self, topic: str, partition: int) -> None:
        started = time.perf_counter()
        try:
            self._idempotence.init_producer_id(self.client, self.delivery_timeout_ms)
        except (RetriesExhaustedError, KafkaApiError) as exc:
            raise self._sender.produce_error(
                (topic, partition), "could not get a producer id (InitProducerId) for the idempotent producer "
                "within delivery.timeout.ms", error=exc) from exc
        self.times.since("init_producer_id", started)

    def _wait_for_room(self) -> None:
        """Block while buffer.memory bytes are held, after closing the open batches so they can be sent."""
        accumulator = self._accumulator
        if self.buffer_memory <= 0 or accumulator.held_bytes < self.buffer_memory:
            return
        started = time.perf_counter()
        accumulator.close_open()
        with accumulator.condition:
            while accumulator.held_bytes >= self.buffer_memory and self._sender.failure is None:
                if not self._sender.running and not self._sender.busy:
                    break  # nothing is on its way that could make room (e.g. every byte is still open)
                accumulator.condition.wait(WAIT_SLICE_S)
        self.times.since("wait_for_room", started)
        self._check_usable()

    def partition_count(self, topic: str, lookup=None) -> int:
        """Partitions of ``topic``, asked again after PARTITION_COUNT_MAX_AGE_MS (or metadata.max.age.ms).

        ``lookup(topic)`` returns the partition ids when they must be asked (default: the client's metadata;
        a writer passes one that lets the cluster auto-create a missing topic)."""
        known = self._partition_counts.get(topic)
        now = time.monotonic()
        max_age_ms = min(PARTITION_COUNT_MAX_AGE_MS, self.client.config.metadata_max_age_ms)
        if known is None or (now - known[1]) * 1000 > max_age_ms:
            started = time.perf_counter()
            count = len((lookup or self.client.partitions_for)(topic))
            self._partition_counts[topic] = known = (count, now)
            self.times.since("metadata", started)
        return known[0]

    def _send_partitioned(self, topic, values, keys, headers, timestamps_ms, partitions=None) -> int:
        import pyarrow as pa

        n = len(values)
        num = self.partition_count(topic)
        rr = self._round_robin.setdefault(topic, itertools.count())
        sticky = next(rr) % num
        if partitions is not None:
            if isinstance(partitions, (pa.Array, pa.ChunkedArray)):
                partitions = np.where(valid_mask(partitions), numeric_values(partitions), -1)
            parts = np.asarray(partitions, dtype=np.int64).reshape(-1)
            if parts.shape[0] != n:
                raise ValueError(f"partition has {parts.shape[0]} rows, values has {n}")
            if (parts >= num).any():
                num = len(self.client.partitions_for(topic))  # partitions may have been added since
                self._partition_counts[topic] = (num, time.monotonic())
                bad = parts >= num
                if bad.any():
                    raise UnknownTopicError(topic, None, partition=int(parts[bad][0]))
            choose = parts < 0
            if choose.any():
                if keys is not None:
                    hashed = np.asarray(partition_for_keys(keys, num), dtype=np.int64)
                    parts = np.where(choose, hashed, parts)
                parts = np.where(parts < 0, sticky, parts)
        elif keys is None:
            return self.send_batch(topic, sticky, values, None, headers, timestamps_ms)
        else:
            parts = np.asarray(partition_for_keys(keys, num), dtype=np.int64)
            parts = np.where(parts < 0, sticky, parts)
        return self.send_routed(topic, parts, values, keys, headers, timestamps_ms)

    def send_routed(self, topic: str, partitions: np.ndarray, values, keys=None, headers=None,
                    timestamps_ms=None) -> int:
        """Queue rows whose partitions are already decided (``partitions``: one valid partition per row).

        Rows are grouped per partition with one stable sort and one take per column; each partition then gets
        a zero-copy slice, in the rows' order."""
        import pyarrow as pa

        n = len(values)
        if n and (partitions == partitions[0]).all():
            return self.send_batch(topic, int(partitions[0]), values, keys, headers, timestamps_ms)
        started = time.perf_counter()
        order = np.argsort(partitions, kind="stable")
        sorted_parts = partitions[order]
        bounds = np.flatnonzero(np.diff(sorted_parts)) + 1
        starts = np.concatenate(([0], bounds)).tolist()
        ends = np.concatenate((bounds, [n])).tolist()
        take = from_numpy(order)
        values = values.take(take)
        keys = None if keys is None else keys.take(take)
        headers = None if headers is None else headers.take(take)
        ts = timestamps_ms
        if ts is not None and not isinstance(ts, (int, np.integer)):
            ts = timestamp_column(ts, n)[order]
        self.times.since("route", started)
        for s, e in zip(starts, ends):
            self.send_batch(topic, int(sorted_parts[s]), values.slice(s, e - s),
                            None if keys is None else keys.slice(s, e - s),
                            None if headers is None else headers.slice(s, e - s),
                            ts if ts is None or isinstance(ts, (int, np.integer)) else ts[s:e])
        return n

    # -- flushing --------------------------------------------------------------------------------------
    def flush(self, timeout_ms: int | None = None) -> dict[tuple[str, int], PartitionAck]:
        """Send everything queued and wait for the acknowledgements (``acks``).

        Returns ``{(topic, partition): PartitionAck}`` of everything acknowledged since the previous flush.
        Raises :class:`ProduceError` on a non-retriable error or when ``delivery.timeout.ms`` (or ``timeout_ms``)
        runs out; batches not acknowledged by then stay unacknowledged (and the producer becomes unusable).
        """
        self._check_usable()
        started = time.perf_counter()
        accumulator = self._accumulator
        accumulator.close_open()
        deadline = None if timeout_ms is None else time.monotonic() + timeout_ms / 1000.0
        with accumulator.condition:
            while accumulator.held_bytes > 0 and self._sender.failure is None:
                if deadline is not None and time.monotonic() >= deadline:
                    break
                if not self._sender.running:
                    self._sender.wake()  # e.g. the first batches were made ready by this flush
                accumulator.condition.wait(WAIT_SLICE_S if deadline is None else
                                           max(0.0, min(WAIT_SLICE_S, deadline - time.monotonic())))
        self.times.since("flush_wait", started)
        if self._sender.failure is not None:
            self._failed = self._sender.failure
            raise self._failed
        if accumulator.held_bytes > 0:
            tp = next(iter(accumulator.ready_partitions()), None) or ("?", -1)
            error = self._sender.produce_error(tp, f"flush did not complete within {timeout_ms} ms; "
                                               f"unacknowledged records stay unacknowledged")
            self._failed = error
            self._sender.abort(error)
            raise error
        self.last_used = time.monotonic()
        return self._sender.take_acknowledged()

    # -- life cycle ------------------------------------------------------------------------------------
    def close(self) -> None:
        """Stop the sender and forget unsent batches (call flush() first to deliver them)."""
        self._closed = True
        self._sender.close()
        self._accumulator.clear()

    def __enter__(self) -> "Producer":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type is None and not self._closed and self._failed is None:
                self.flush()
        finally:
            self.close()
