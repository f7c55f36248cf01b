"""The sender's view of one partition: its batches in flight and to send again, its backoff, and the time
its delivery budget counts from. The rules that keep a partition's records in order live here:

* Up to ``window`` batches of a partition are in flight (one per request), all to the same leader; until the
  partition's first batch is acknowledged (the broker holds no state for the producer there and would accept
  any first sequence number) only one is, and only one while batches wait to be sent again.
* A retriable failure puts the batch back, in order, ahead of everything not sent yet; batches that were in
  flight when it failed come back whatever the broker said about them (a success is sent again and the
  broker deduplicates it; OUT_OF_ORDER_SEQUENCE_NUMBER is the expected consequence of the failure). Sending
  resumes, one batch at a time, after all of them are back and the backoff has passed.
* The delivery budget (``delivery.timeout.ms``) of a partition counts from its last acknowledgement, or from
  the creation of its oldest unacknowledged batch when that is later.
"""

from __future__ import annotations

import bisect
from collections import deque

from spark_kwire.client.producer.accumulator import ProducerBatch
from spark_kwire.client.retry import Backoff

__all__ = ["PartitionDelivery"]

TopicPartition = tuple[str, int]


class PartitionDelivery:
    """Delivery state of one partition (owned by the sender thread)."""

    __slots__ = ("tp", "in_flight", "leader", "retries", "failures", "retry_at", "backoff", "last_ack",
                 "last_error", "last_broker", "needs_metadata")

    def __init__(self, tp: TopicPartition, backoff: Backoff) -> None:
        self.tp = tp
        self.in_flight: deque[tuple[ProducerBatch, int]] = deque()  # (batch, failures when it was sent)
        self.leader: int | None = None  # where the batches in flight went
        self.retries: list[ProducerBatch] = []  # to send again, in creation (sequence) order
        self.failures = 0  # retriable failures so far; batches sent before the latest one come back
        self.retry_at = 0.0  # time.monotonic() before which nothing is sent (backoff)
        self.backoff = backoff
        self.last_ack = 0.0
        self.last_error: BaseException | None = None
        self.last_broker: int | None = None
        self.needs_metadata = False

    # -- sending ---------------------------------------------------------------------------------------
    def may_send(self, now: float, window: int, pipelined: bool) -> bool:
        """Whether another batch may go now (``pipelined``: the partition is confirmed, or not idempotent)."""
        if now < self.retry_at:
            return False
        limit = window if pipelined and not self.retries else 1
        return len(self.in_flight) < limit

    def next_retry(self) -> ProducerBatch | None:
        return self.retries[0] if self.retries else None

    def sent(self, batch: ProducerBatch, leader: int) -> None:
        if self.retries and self.retries[0] is batch:
            self.retries.pop(0)
        self.in_flight.append((batch, self.failures))
        self.leader = leader
        batch.attempts += 1

    # -- answers ---------------------------------------------------------------------------------------
    def answered(self, batch: ProducerBatch) -> bool:
        """Take ``batch`` out of flight; True when it was sent before the latest failure (it must go again)."""
        for i, (b, failures_then) in enumerate(self.in_flight):
            if b is batch:
                del self.in_flight[i]
                break
        else:
            failures_then = self.failures
        if not self.in_flight:
            self.leader = None
        return failures_then < self.failures

    def acknowledged(self, now: float) -> None:
        self.last_ack = now
        self.backoff.reset()
        if not self.retries:
            self.last_error = None

    def put_back(self, batch: ProducerBatch) -> None:
        """``batch`` goes again, in its place in sequence order."""
        index = bisect.bisect_right([b.number for b in self.retries], batch.number)
        self.retries.insert(index, batch)

    def failed(self, batch: ProducerBatch, error: BaseException, broker: int | None, now: float) -> None:
        """A retriable failure of ``batch``: back off, send it again later (after fresh metadata)."""
        self.failures += 1
        self.put_back(batch)
        self.note_error(error, broker)
        self.retry_at = now + self.backoff.next_delay()
        self.needs_metadata = True

    def note_error(self, error: BaseException | None, broker: int | None) -> None:
        if error is not None:
            self.last_error = error
            batch = self.retries[0] if self.retries else None
            if batch is not None:
                batch.last_error = error
        if broker is not None:
            self.last_broker = broker

    # -- budget ----------------------------------------------------------------------------------------
    def oldest_unacknowledged(self) -> ProducerBatch | None:
        candidates = ([self.in_flight[0][0]] if self.in_flight else []) + self.retries[:1]
        return min(candidates, key=lambda b: b.number) if candidates else None

    def unacknowledged_records(self) -> int:
        return sum(b.count for b, _ in self.in_flight) + sum(b.count for b in self.retries)

    @property
    def busy(self) -> bool:
        return bool(self.in_flight or self.retries)
