"""Producer: append Arrow columns per partition, then ``flush()`` them as Produce requests.

Three parts, each in its own module: the :class:`~spark_kwire.client.accumulator.RecordAccumulator` encodes
appended rows into record batches per partition; the :class:`~spark_kwire.client.sender.Sender` delivers
batches to the partition leaders, with retries; the :class:`~spark_kwire.client.idempotence.IdempotenceState`
holds the producer id, epoch and sequence numbers both use. This class ties them together:

* ``send_batch`` checks the partition exists, gets a producer id (idempotent producer, on by default) and
  appends; rows without a partition are partitioned as Kafka's default partitioner does.
* Sending overlaps encoding: once ``buffer.memory`` bytes of encoded batches wait, ``send_batch`` hands them
  to a background delivery and goes on encoding while they are sent (what they got acknowledged is carried into
  the result of the next ``flush()``). One background delivery runs at a time: the next hand-off, and
  ``flush()``, first wait for it, so a partition's batches still reach the broker in sequence order and at
  most 2 x ``buffer.memory`` bytes are held. A failure of the background delivery is raised by the next
  ``send_batch`` or ``flush()``. (Handing off smaller amounts as soon as the sender is idle was measured
  slower: each delivery pays a round trip, so big ones with 5 requests in flight carry more per wait.)
* ``linger.ms``, when set, bounds how long appended records wait before they are handed to the sender: an
  append finding the oldest waiting batch at least that old hands everything over as soon as no delivery
  runs (it is checked on appends; ``flush()`` sends the rest). Unset (kwire's default), records wait for
  ``buffer.memory`` or ``flush()``, which suits Spark tasks that write a bounded set of rows.
* ``flush()`` delivers what waits and returns what was acknowledged since the previous ``flush()``. A failed
  delivery raises :class:`ProduceError` naming the topic, partition, leader and last error, with
  ``acknowledged`` holding what the brokers did acknowledge before the failure; the producer is then unusable.

Delivery guarantees (first batch of a partition alone in flight until acknowledged, DUPLICATE_SEQUENCE_NUMBER
as success, OUT_OF_ORDER_SEQUENCE_NUMBER / UNKNOWN_PRODUCER_ID raised, ``delivery.timeout.ms``, ``acks=0``)
are the sender's; see :mod:`spark_kwire.client.sender`.
"""

from __future__ import annotations

import itertools

import numpy as np

from spark_kwire.client.accumulator import RecordAccumulator
from spark_kwire.client.config import ACKS, COMPRESSION_TYPES
from spark_kwire.client.errors import ConfigError, KafkaApiError, KwireError, RetriesExhaustedError, UnknownTopicError
from spark_kwire.client.idempotence import IdempotenceState
from spark_kwire.client.sender import PartitionAck, Sender
from spark_kwire.protocol.records import partition_for_keys

__all__ = ["Producer", "PartitionAck"]


class Producer:
    """Writes Arrow columns to partitions; see the module docstring. Not thread-safe (its own background
    delivery aside): call it from one thread."""

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
        self._idempotence = transaction.state if transaction is not None else IdempotenceState(self.idempotent)
        self._accumulator = RecordAccumulator(compression=self.compression, batch_size=self.batch_size,
                                              idempotence=self._idempotence)
        self._sender = Sender(client, self._idempotence, acks=self.acks, max_in_flight=self.max_in_flight,
                              batch_size=self.batch_size, delivery_timeout_ms=self.delivery_timeout_ms,
                              request_timeout_ms=self.request_timeout_ms, max_request_size=self.max_request_size)
        self._round_robin: dict[str, itertools.count] = {}
        self._failed: BaseException | None = None
        self._closed = False

    # -- state -----------------------------------------------------------------------------------------
    @property
    def producer_id(self) -> int:
        return self._idempotence.producer_id

    @property
    def producer_epoch(self) -> int:
        return self._idempotence.producer_epoch

    @property
    def pending_records(self) -> int:
        return self._accumulator.pending_records

    @property
    def pending_bytes(self) -> int:
        """Encoded bytes queued and not yet handed to the sender (more than buffer.memory are handed off)."""
        return self._accumulator.pending_bytes

    @property
    def sending_in_background(self) -> bool:
        """True while a background delivery of earlier batches runs."""
        return self._sender.busy

    def _check_usable(self) -> None:
        if self._closed:
            raise KwireError("the producer is closed")
        if self._failed is not None:
            raise KwireError(f"the producer failed earlier and cannot be used: {self._failed}")
        if self._sender.background_ended:
            self._wait_for_sender()  # raises what the background delivery failed with, at the first chance

    def _wait_for_sender(self) -> None:
        try:
            self._sender.wait()
        except BaseException as exc:
            self._failed = exc
            raise

    # -- appending -------------------------------------------------------------------------------------
    def send_batch(self, topic: str, partition, values, keys=None, headers=None, timestamps_ms=None) -> int:
        """Queue rows for ``topic``; returns how many were queued. Nothing is sent before flush() unless
        buffer.memory fills up (or linger.ms passes).

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
        self._accumulator.append(topic, partition, values, keys, headers, timestamps_ms)
        self._maybe_hand_off()
        return n

    def _init_producer_id(self, topic: str, partition: int) -> None:
        try:
            self._idempotence.init_producer_id(self.client, self.delivery_timeout_ms)
        except (RetriesExhaustedError, KafkaApiError) as exc:
            raise self._sender.produce_error(
                (topic, partition), "could not get a producer id (InitProducerId) for the idempotent producer "
                "within delivery.timeout.ms", error=exc) from exc

    def _maybe_hand_off(self) -> None:
        waiting = self._accumulator
        if self.buffer_memory > 0 and waiting.pending_bytes >= self.buffer_memory:
            self._hand_off()  # waits for the running background delivery first: memory stays bounded
        elif self.linger_ms is not None and not self._sender.busy and waiting.waited_ms() >= self.linger_ms:
            self._hand_off()

    def _hand_off(self) -> None:
        """Give what waits to a background delivery (after the previous one ended)."""
        self._wait_for_sender()
        batches = self._accumulator.drain()
        self._join_transaction(batches)
        self._sender.deliver_in_background(batches)

    def _join_transaction(self, batches) -> None:
        """Add the partitions of ``batches`` to the transaction (if any) before their first batch is sent."""
        if self._transaction is not None:
            try:
                self._transaction.add_partitions(tp for tp, queue in batches.items() if queue)
            except BaseException as exc:
                self._failed = exc
                raise

    def _send_partitioned(self, topic, values, keys, headers, timestamps_ms, partitions=None) -> int:
        import pyarrow as pa

        n = len(values)
        num = len(self.client.partitions_for(topic))
        rr = self._round_robin.setdefault(topic, itertools.count())
        sticky = next(rr) % num
        if partitions is not None:
            if isinstance(partitions, (pa.Array, pa.ChunkedArray)):
                partitions = partitions.fill_null(-1).to_numpy(zero_copy_only=False)
            parts = np.asarray(partitions, dtype=np.int64).reshape(-1)
            if parts.shape[0] != n:
                raise ValueError(f"partition has {parts.shape[0]} rows, values has {n}")
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
        if parts.shape[0] and (parts == parts[0]).all():
            return self.send_batch(topic, int(parts[0]), values, keys, headers, timestamps_ms)
        order = np.argsort(parts, kind="stable")
        sorted_parts = parts[order]
        bounds = np.flatnonzero(np.diff(sorted_parts)) + 1
        starts = np.concatenate(([0], bounds))
        ends = np.concatenate((bounds, [n]))
        ts = timestamps_ms
        if ts is not None and not isinstance(ts, (int, np.integer)):
            ts = np.asarray(ts.to_numpy(zero_copy_only=False) if hasattr(ts, "to_numpy") else ts)
        for s, e in zip(starts.tolist(), ends.tolist()):
            idx = order[s:e]
            take = pa.array(idx)
            self.send_batch(
                topic, int(sorted_parts[s]), values.take(take), None if keys is None else keys.take(take),
                None if headers is None else headers.take(take),
                ts if ts is None or isinstance(ts, (int, np.integer)) else ts[idx])
        return n

    # -- flushing --------------------------------------------------------------------------------------
    def flush(self, timeout_ms: int | None = None) -> dict[tuple[str, int], PartitionAck]:
        """Send everything queued and wait for the acknowledgements (``acks``).

        Returns ``{(topic, partition): PartitionAck}`` of everything acknowledged since the previous flush.
        Raises :class:`ProduceError` on a non-retriable error or when ``delivery.timeout.ms`` (or ``timeout_ms``)
        runs out; batches not acknowledged by then stay unacknowledged (and the producer becomes unusable).
        """
        self._check_usable()
        batches = {}
        try:
            self._wait_for_sender()
            batches = self._accumulator.drain()
            self._join_transaction(batches)
            self._sender.deliver(batches, timeout_ms)
        except BaseException as exc:
            self._failed = exc
            self._accumulator.restore(batches)  # what was not acknowledged still counts as pending
            raise
        return self._sender.take_acknowledged()

    # -- life cycle ------------------------------------------------------------------------------------
    def close(self) -> None:
        """Forget unsent batches (call flush() first to deliver them); a background delivery stops after its
        round."""
        self._sender.close()
        self._accumulator.clear()
        self._closed = True

    def __enter__(self) -> "Producer":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type is None and not self._closed and self._failed is None:
                self.flush()
        finally:
            self.close()
