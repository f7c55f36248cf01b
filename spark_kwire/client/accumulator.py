"""The producer's accumulator: Arrow columns in, encoded record batches out, queued per partition.

``append`` cuts the rows of one partition into record batches of at most ``batch.size`` bytes (uncompressed)
and encodes them at once. With the idempotent producer each batch is stamped with the producer id, epoch and
its base sequence here, once, so a retry resends the *same bytes* and the broker deduplicates. ``drain``
hands everything queued to the sender. No network code: the partition must have been checked by the caller.
"""

from __future__ import annotations

import time
from collections import deque

from spark_kwire.client.idempotence import IdempotenceState
from spark_kwire.protocol.records import encode_record_batches

__all__ = ["ProducerBatch", "RecordAccumulator", "batch_record_count"]

TopicPartition = tuple[str, int]


class ProducerBatch:
    """One encoded record batch of one partition, and how its delivery went so far."""

    __slots__ = ("topic", "partition", "payload", "count", "base_sequence", "attempts", "last_error")

    def __init__(self, topic: str, partition: int, payload: bytes, count: int, base_sequence: int) -> None:
        self.topic = topic
        self.partition = partition
        self.payload = payload
        self.count = count
        self.base_sequence = base_sequence
        self.attempts = 0
        self.last_error: BaseException | None = None


def batch_record_count(payload: bytes) -> int:
    """The records field of an encoded v2 record batch."""
    return int.from_bytes(payload[57:61], "big", signed=True)


class RecordAccumulator:
    """Encoded batches per partition, in sequence order, waiting for the sender."""

    def __init__(self, *, compression: str, batch_size: int, idempotence: IdempotenceState) -> None:
        self.compression = compression
        self.batch_size = batch_size
        self.idempotence = idempotence
        self._queues: dict[TopicPartition, deque[ProducerBatch]] = {}
        self._bytes = 0
        self._oldest = 0.0  # time.monotonic() of the first append since the last drain

    @property
    def pending_bytes(self) -> int:
        """Encoded bytes waiting to be handed to the sender."""
        return self._bytes

    @property
    def pending_records(self) -> int:
        return sum(b.count for q in self._queues.values() for b in q)

    def waited_ms(self) -> float:
        """How long the oldest waiting batch has waited (0 when none waits)."""
        return (time.monotonic() - self._oldest) * 1000 if self._queues else 0.0

    def append(self, topic: str, partition: int, values, keys=None, headers=None, timestamps_ms=None) -> None:
        """Encode rows of one partition into batches and queue them (see ``Producer.send_batch`` for the
        column types)."""
        tp = (topic, partition)
        state = self.idempotence
        sequence = state.next_sequence(tp)
        try:
            payloads = encode_record_batches(
                values, keys, timestamps_ms=timestamps_ms, headers=headers, compression=self.compression,
                max_batch_bytes=self.batch_size, producer_id=state.batch_producer_id,
                producer_epoch=state.batch_producer_epoch, base_sequence=sequence,
                transactional=state.transactional_id is not None)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"cannot encode records for {topic}-{partition}: {exc}") from exc
        if not self._queues:
            self._oldest = time.monotonic()
        queue = self._queues.setdefault(tp, deque())
        for payload in payloads:
            count = batch_record_count(payload)
            queue.append(ProducerBatch(topic, partition, payload, count, sequence))
            self._bytes += len(payload)
            sequence = state.advance(tp, count)

    def drain(self) -> dict[TopicPartition, deque[ProducerBatch]]:
        """Everything queued, per partition in sequence order; the accumulator is empty afterwards."""
        drained, self._queues, self._bytes = self._queues, {}, 0
        return drained

    def restore(self, batches: dict[TopicPartition, deque[ProducerBatch]]) -> None:
        """Put back what a failed delivery did not get acknowledged (ahead of anything queued since)."""
        for tp, queue in batches.items():
            if queue:
                self._queues[tp] = deque(list(queue) + list(self._queues.get(tp, ())))
                self._bytes += sum(len(b.payload) for b in queue)

    def clear(self) -> None:
        self._queues.clear()
        self._bytes = 0
