"""The producer's sender: one thread that keeps Produce requests in flight while the caller appends more.

There are no rounds: whenever a request slot to a leader is free (``max.in.flight.requests.per.connection``
per broker) and batches of that leader's partitions are ready, a request goes out with at most one batch per
partition (so a partition's batches reach the broker in sequence order) and at most ``max.request.size``
bytes; whenever an answer arrives it is applied at once and the freed slot is filled again. The thread waits
in ``select()`` on the connections with requests in flight and on a wake-up socket that the accumulator pokes
when batches become ready, so it sleeps when there is nothing to do and reacts at once when there is.

The ordering and retry rules per partition are in :mod:`~spark_kwire.client.producer.partition_delivery`:

* Until a partition's first batch is acknowledged it is the only one of that partition in flight: a broker
  with no state for the producer accepts any first sequence number, so pipelining there could reorder.
* Retriable errors (leader moves, NOT_ENOUGH_REPLICAS, timeouts, connection loss...) put the batch back; once
  every batch of the partition that was in flight is back, and after a backoff and fresh metadata, it is
  sent again, to the partition's current leader, one batch at a time until the partition recovers.
* DUPLICATE_SEQUENCE_NUMBER counts as success. OUT_OF_ORDER_SEQUENCE_NUMBER (when not caused by an earlier
  failed batch of the same partition) and UNKNOWN_PRODUCER_ID mean the broker lost acknowledged state: the
  sender fails with :class:`ProduceError` rather than risk silent loss or duplication.
* ``acks=0`` sends without waiting; what it sent counts with base offset -1 and ``acknowledged=False``.
* A partition fails when ``delivery.timeout.ms`` passes without an acknowledgement, counted from its last
  acknowledgement or from the creation of its oldest unacknowledged batch, whichever is later.
* ``linger.ms``, when set, closes an open batch that long after its first row, even when no append comes.

A failure ends the thread; it is kept in :attr:`Sender.failure` (a :class:`ProduceError` naming the topic,
partition, leader and last error, with what was acknowledged) and raised by the producer's next call. What
was acknowledged accumulates in :attr:`Sender.acknowledged` until the producer takes it.

For transactions: :attr:`Sender.before_first_batch`, when set, is called (in the sender thread) with the
partitions about to receive their first batch since :meth:`Sender.forget_admitted_partitions`, and must return
once they may be written to (AddPartitionsToTxn) or raise; ``IdempotenceState.transactional_id`` goes into
every Produce request.
"""

from __future__ import annotations

import logging
import select
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Callable

from spark_kwire.client.producer.accumulator import ProducerBatch, RecordAccumulator
from spark_kwire.client.errors import (ConfigError, KwireError, ProduceError, RequestTimeoutError,
                                       RetriesExhaustedError, UnknownTopicError, is_retriable_error)
from spark_kwire.client.producer.idempotence import IdempotenceState
from spark_kwire.client.producer.partition_delivery import PartitionDelivery
from spark_kwire.client.producer.phase_times import PhaseTimes
from spark_kwire.client.producer.produce_exchange import (DUPLICATE_SEQUENCE_NUMBER, MESSAGE_TOO_LARGE, NONE,
                                                 OUT_OF_ORDER_SEQUENCE_NUMBER, RECORD_LIST_TOO_LARGE,
                                                 UNKNOWN_PRODUCER_ID, BatchOutcome, read_response, request_body)
from spark_kwire.client.retry import Backoff
from spark_kwire.protocol import messages as m
from spark_kwire.protocol.errors import KafkaApiError

__all__ = ["Sender", "PartitionAck"]

log = logging.getLogger(__name__)

TopicPartition = tuple[str, int]
UNKNOWN_TOPIC_OR_PARTITION = 3
INVALID_PRODUCER_EPOCH = 47
PRODUCER_FENCED = 90
RESPONSE_SLACK_MS = 5000  # how much longer than request.timeout.ms (the broker's own wait) an answer may take
EXPIRY_CHECK_S = 0.05  # how often delivery budgets are checked
MAX_SLEEP_S = 1.0


@dataclass
class PartitionAck:
    """What was acknowledged for one partition."""

    records: int = 0
    batches: int = 0
    base_offset: int = -1  # offset of the first acknowledged record (-1: unknown, e.g. duplicate or acks=0)
    last_offset: int = -1  # offset of the last acknowledged record when known
    acknowledged: bool = True  # False for acks=0


class _Request:
    __slots__ = ("conn", "pending", "batches", "version")

    def __init__(self, conn, pending, batches: list[ProducerBatch], version: int) -> None:
        self.conn = conn
        self.pending = pending
        self.batches = batches
        self.version = version


class Sender:
    """Delivers what the accumulator makes ready; see the module docstring."""

    def __init__(self, client, idempotence: IdempotenceState, accumulator: RecordAccumulator, *, acks: int,
                 max_in_flight: int, batch_size: int, delivery_timeout_ms: int, request_timeout_ms: int,
                 max_request_size: int, linger_ms: int | None = None, times: PhaseTimes | None = None) -> None:
        self.client = client
        self.idempotence = idempotence
        self.accumulator = accumulator
        self.acks = acks
        self.max_in_flight = max_in_flight
        self.window = min(max_in_flight, 5) if idempotence.enabled else max_in_flight
        self.batch_size = batch_size  # only to say how to fix a batch the broker finds too large
        self.delivery_timeout_ms = delivery_timeout_ms
        self.request_timeout_ms = request_timeout_ms
        self.max_request_size = max_request_size
        self.linger_ms = linger_ms
        self.times = times if times is not None else PhaseTimes(False)
        #: acknowledged since the producer last took it
        self.acknowledged: dict[TopicPartition, PartitionAck] = {}
        self.failure: BaseException | None = None
        self.before_first_batch: Callable[[list[TopicPartition]], None] | None = None
        self._admitted: set[TopicPartition] = set()
        self._states: dict[TopicPartition, PartitionDelivery] = {}
        self._retrying: set[TopicPartition] = set()
        self._inflight: dict[int, deque[_Request]] = {}
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._stopping = False
        self._wake_r = self._wake_w = None
        self._sleeping = False
        self._work_hint = False
        self._rotation = 0
        self._next_expiry_check = 0.0

    @property
    def idempotent(self) -> bool:
        return self.idempotence.enabled

    # -- the caller's side -----------------------------------------------------------------------------
    def wake(self) -> None:
        """Batches became ready (or a flush began): make sure the thread runs and looks at once."""
        if self._thread is None:
            self._start()
        self._work_hint = True
        if self._sleeping and self._wake_w is not None:
            try:
                self._wake_w.send(b"\0")
            except OSError:  # full (a wake-up is pending anyway) or closed
                pass

    def _start(self) -> None:
        with self._start_lock:
            if self._thread is not None or self._stopping:
                return
            self._wake_r, self._wake_w = socket.socketpair()
            self._wake_r.setblocking(False)
            self._wake_w.setblocking(False)
            self._thread = threading.Thread(target=self._run, name="kwire-producer-sender", daemon=True)
            self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def busy(self) -> bool:
        """True while batches are in flight, wait to be sent again, or are ready to go."""
        return (any(self._inflight.values()) or bool(self._retrying) or self.accumulator.ready_records > 0)

    def take_acknowledged(self) -> dict[TopicPartition, PartitionAck]:
        """What was acknowledged since the last call (call when nothing is in flight)."""
        taken, self.acknowledged = self.acknowledged, {}
        return taken

    @property
    def tracked_partitions(self) -> int:
        """Partitions whose delivery state (in flight, retries, backoff, budget) the thread keeps."""
        return len(self._states)

    def forget_idle_partitions(self) -> None:
        """Drop the delivery state of every partition with nothing in flight or to send again (call between
        writes). A producer reused for write after write (Spark's tasks in one Python worker, into new topics)
        otherwise checked the budget of every partition it ever wrote to, every 50 ms while it sent: 18 ms a
        check after 24 writes of 512 partitions. The sequence numbers stay (they are the IdempotenceState's)."""
        self._states = {tp: st for tp, st in self._states.items() if st.busy}

    def forget_admitted_partitions(self) -> None:
        """The next batch of every partition passes ``before_first_batch`` again (a new transaction)."""
        self._admitted.clear()

    def abort(self, error: BaseException) -> None:
        """Fail with ``error`` (e.g. a flush that ran out of time): nothing more is sent."""
        if self.failure is None:
            self.failure = error
        self._stopping = True
        self.wake()
        self.accumulator.wake_waiters()

    def close(self) -> None:
        """Stop the thread (batches not sent are forgotten); waits at most 5 s for it."""
        self._stopping = True
        thread = self._thread
        if thread is not None:
            self.wake()
            thread.join(timeout=5)
        for sock in (self._wake_r, self._wake_w):
            if sock is not None:
                sock.close()
        self.accumulator.wake_waiters()

    # -- errors --------------------------------------------------------------------------------------------
    def produce_error(self, tp, message: str, *, broker=None, error=None, code=None) -> ProduceError:
        """A :class:`ProduceError` about ``tp`` carrying everything acknowledged so far."""
        address = self.client.broker_address(broker)
        if address is None and error is not None:
            address = getattr(error, "address", None)
        return ProduceError(tp[0], tp[1], message, broker=broker, error=error, code=code, broker_address=address,
                            acknowledged={k: a.records for k, a in self.acknowledged.items()})

    def _fail(self, error: BaseException) -> None:
        if not isinstance(error, (ProduceError, UnknownTopicError, ConfigError)) and isinstance(error, KwireError):
            tp = next((tp for tp, st in self._states.items() if st.busy), None) or \
                next(iter(self.accumulator.ready_partitions()), ("?", -1))
            error = self.produce_error(tp, "unexpected error", error=error)
        if self.failure is None:
            self.failure = error
        log.debug("producer sender failed: %s", error)
        self.accumulator.wake_waiters()

    # -- the thread ----------------------------------------------------------------------------------------
    def _run(self) -> None:
        try:
            while not self._stopping:
                self._iterate()
        except BaseException as exc:  # raised in the caller's thread by the producer
            self._fail(exc)
        finally:
            self._stopping = True

    def _iterate(self) -> None:
        self._work_hint = False
        now = time.monotonic()
        if now >= self._next_expiry_check:
            self._check_delivery_budgets(now)
        if self.linger_ms is not None:
            lingering = self.accumulator.open_partitions(opened_before=now - self.linger_ms / 1000.0)
            if lingering:
                self.accumulator.close_open(lingering, times=self.times)
        if self._retrying:
            self._refresh_metadata_when_due(now)
        self._send_ready(now)
        for leader in self._wait(self._sleep_time(time.monotonic())):
            self._read(leader)

    # -- sending -----------------------------------------------------------------------------------------
    def _state(self, tp: TopicPartition) -> PartitionDelivery:
        st = self._states.get(tp)
        if st is None:
            st = self._states[tp] = PartitionDelivery(tp, Backoff(self.client.config))
            st.last_ack = time.monotonic()
        return st

    def _pipelined(self, tp: TopicPartition) -> bool:
        return not self.idempotent or self.idempotence.is_confirmed(tp)

    def _send_ready(self, now: float) -> None:
        candidates = self.accumulator.ready_partitions()
        if self._retrying:
            candidates = list(dict.fromkeys([tp for tp in self._retrying if self._states[tp].retries] + candidates))
        if not candidates:
            return
        started = time.perf_counter()
        self._rotation = (self._rotation + 1) % len(candidates)
        candidates = candidates[self._rotation:] + candidates[:self._rotation]  # no partition always goes first
        by_leader: dict[int, list[PartitionDelivery]] = {}
        for tp in candidates:
            st = self._state(tp)
            if not st.may_send(now, self.window, self._pipelined(tp)):
                continue
            leader = self._leader(st, now)
            if leader is None or (st.in_flight and st.leader != leader):
                continue  # no leader yet, or answers from the previous leader are still awaited
            by_leader.setdefault(leader, []).append(st)
        if self.before_first_batch is not None:
            self._admit([st.tp for states in by_leader.values() for st in states])
        for leader, states in by_leader.items():
            while states and len(self._inflight.setdefault(leader, deque())) < self.max_in_flight:
                batches, size, still = [], 0, []
                for st in states:
                    if not st.may_send(now, self.window, self._pipelined(st.tp)):
                        continue
                    retry = st.next_retry()
                    batch = retry or self.accumulator.peek_ready(st.tp)
                    if batch is None:
                        continue
                    if batches and size + len(batch.payload) > self.max_request_size:
                        still.append(st)
                        continue
                    if batch is not retry:
                        self.accumulator.pop_ready(st.tp)
                    st.sent(batch, leader)
                    batches.append(batch)
                    size += len(batch.payload)
                    still.append(st)
                states = still
                if not batches or not self._send_request(leader, batches, now):
                    break
        self.times.since("send", started)

    def _admit(self, tps: list[TopicPartition]) -> None:
        new = [tp for tp in tps if tp not in self._admitted]
        if new:
            self.before_first_batch(new)
            self._admitted.update(new)

    def _leader(self, st: PartitionDelivery, now: float) -> int | None:
        try:
            return self.client.leader_for(*st.tp)
        except UnknownTopicError:
            raise
        except KafkaApiError as exc:
            if not exc.retriable:
                raise self.produce_error(st.tp, "no usable leader", error=exc) from exc
            error = exc
        except RetriesExhaustedError as exc:  # the metadata could not be refreshed: tried again after a backoff
            error = exc.last_error or exc
        st.note_error(error, None)
        st.retry_at = now + st.backoff.next_delay()
        st.needs_metadata = True
        self._retrying.add(st.tp)
        return None

    def _deadline(self, st: PartitionDelivery) -> float:
        oldest = st.oldest_unacknowledged()
        start = max(st.last_ack, oldest.created) if oldest is not None else st.last_ack
        return start + self.delivery_timeout_ms / 1000.0

    def _send_request(self, leader: int, batches: list[ProducerBatch], now: float) -> bool:
        """Send one request (False when it could not be sent: its batches go again after a backoff)."""
        client = self.client
        deadline = min(self._deadline(self._states[b.tp]) for b in batches)
        try:
            if deadline <= now:
                raise RequestTimeoutError(client.broker_address(leader) or "?", "delivery.timeout.ms expired "
                                          "before the request was sent", node_id=leader)
            conn = client.connection(leader, deadline)
            version = conn.version_for(m.PRODUCE)
            if version >= 13 and any(client.topic_info(b.topic).topic_id is None for b in batches):
                version = conn.version_for(m.PRODUCE, 12)
            body = request_body(batches, version, acks=self.acks, timeout_ms=self.request_timeout_ms,
                                transactional_id=self.idempotence.transactional_id,
                                topic_ids=lambda topic: client.topic_info(topic).topic_id)
            pending = conn.send(m.PRODUCE, body, version, expect_response=self.acks != 0,
                                timeout_ms=self.request_timeout_ms + RESPONSE_SLACK_MS)
        except KwireError as exc:
            if not is_retriable_error(exc):
                raise
            for batch in batches:
                self._retriable_failure(batch, exc, leader, time.monotonic())
            return False
        if self.acks == 0:
            for batch in batches:
                self._states[batch.tp].answered(batch)
                self._acknowledge(batch, -1, now)
            return True
        self._inflight.setdefault(leader, deque()).append(_Request(conn, pending, batches, version))
        return True

    # -- waiting ---------------------------------------------------------------------------------------
    def _sleep_time(self, now: float) -> float:
        until = now + MAX_SLEEP_S
        if self.linger_ms is not None:
            oldest = self.accumulator.oldest_open_since()
            if oldest is not None:
                until = min(until, oldest + self.linger_ms / 1000.0)
        for tp in self._retrying:
            st = self._states[tp]
            if not st.in_flight:
                until = min(until, max(st.retry_at, now))
        if self._retrying or self.accumulator.ready_records or any(self._inflight.values()):
            until = min(until, self._next_expiry_check)
        for requests in self._inflight.values():
            if requests:
                until = min(until, requests[0].pending.deadline)
        return max(0.0, until - now)

    def _wait(self, timeout: float) -> list[int]:
        """Leaders whose oldest request in flight can be read now, after waiting at most ``timeout`` s."""
        heads = [(leader, requests[0]) for leader, requests in self._inflight.items() if requests]
        readable = [leader for leader, request in heads if request.pending.done]
        if readable:
            return readable
        sockets = {}
        now = time.monotonic()
        for leader, request in heads:
            sock, buffered = request.conn.readable_socket() if request.conn is not None else (None, False)
            if sock is None or buffered or request.pending.deadline <= now:
                readable.append(leader)  # reading it now gives its answer or its error
            else:
                sockets[sock] = leader
        if readable:
            return readable
        started = time.perf_counter()
        self._sleeping = True
        try:
            if self._work_hint or self._stopping:
                return []
            try:
                ready, _, _ = select.select([self._wake_r, *sockets], [], [], timeout)
            except (OSError, ValueError):  # a socket was closed meanwhile: look again
                return []
        finally:
            self._sleeping = False
            if heads:  # waiting for answers; sleeping with nothing in flight costs the task nothing
                self.times.since("wait", started)
        if self._wake_r in ready:
            try:
                while self._wake_r.recv(4096):
                    pass
            except OSError:
                pass
        return [sockets[s] for s in ready if s in sockets]

    # -- answers ---------------------------------------------------------------------------------------
    def _read(self, leader: int) -> None:
        requests = self._inflight.get(leader)
        if not requests:
            return
        started = time.perf_counter()
        request = requests[0]
        try:
            body = request.pending.result()
        except KwireError as exc:
            requests.popleft()
            if not is_retriable_error(exc):
                raise
            now = time.monotonic()
            for batch in request.batches:
                self._retriable_failure(batch, exc, leader, now)
            return
        finally:
            started = self.times.since("receive", started)
        requests.popleft()
        now = time.monotonic()
        for outcome in read_response(body, request.version, request.batches, leader,
                                     self.client.metadata.topic_by_id):
            self._apply(outcome, leader, now)
        self.times.since("apply", started)

    def _apply(self, outcome: BatchOutcome, leader: int, now: float) -> None:
        batch = outcome.batch
        tp = batch.tp
        st = self._states[tp]
        stale = st.answered(batch)  # sent before a later failure of the partition: it goes again
        code = outcome.code
        if code == NONE or (code == DUPLICATE_SEQUENCE_NUMBER and self.idempotent):
            if stale and self.idempotent:
                self._put_back(st, batch)  # the broker deduplicates it
            else:
                self._acknowledge(batch, outcome.base_offset if code == NONE else -1, now)
            return
        error = outcome.error
        if stale and self.idempotent and code == OUT_OF_ORDER_SEQUENCE_NUMBER:
            self._put_back(st, batch)  # follows a failed batch of the same partition
            return
        if code in (MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE):
            raise self.produce_error(tp, f"a batch of {len(batch.payload)} bytes ({batch.count} records) was "
                                     f"rejected as too large; lower batch.size (now {self.batch_size}) or raise the "
                                     f"topic's max.message.bytes", broker=leader, error=error, code=code)
        if code == OUT_OF_ORDER_SEQUENCE_NUMBER:
            raise self.produce_error(tp, f"the broker expected another sequence number than {batch.base_sequence} "
                                     f"for producer id {self.idempotence.producer_id}: acknowledged records may "
                                     f"have been lost by the broker (e.g. unclean leader election)",
                                     broker=leader, error=error, code=code)
        if code == UNKNOWN_PRODUCER_ID:
            raise self.produce_error(tp, f"the broker no longer knows producer id {self.idempotence.producer_id} "
                                     f"(its state expired or was lost)", broker=leader, error=error, code=code)
        if code in (INVALID_PRODUCER_EPOCH, PRODUCER_FENCED) and self.idempotence.transactional:
            raise self.produce_error(
                tp, f"this writer of transactional id {self.idempotence.transactional_id!r} (producer id "
                f"{self.idempotence.producer_id}, epoch {self.idempotence.producer_epoch}) was fenced: a newer producer "
                f"took over the same id (a retried or speculative attempt of the same task, a restarted query, or "
                f"another query with the same transactionalIdPrefix). Its open transaction was aborted and nothing it "
                f"wrote will be visible to read_committed readers", broker=leader, error=error, code=code)
        if code == UNKNOWN_TOPIC_OR_PARTITION:
            self.client.check_unknown_topic(error, tp[0], tp[1])
        if not is_retriable_error(error):
            raise self.produce_error(tp, "non-retriable error", broker=leader, error=error, code=code)
        if stale:
            self._put_back(st, batch)
            st.note_error(error, leader)
            return
        self._retriable_failure(batch, error, leader, now, answered=True)

    def _put_back(self, st: PartitionDelivery, batch: ProducerBatch) -> None:
        st.put_back(batch)
        self._retrying.add(st.tp)

    def _retriable_failure(self, batch: ProducerBatch, error: BaseException, leader: int | None, now: float,
                           answered: bool = False) -> None:
        st = self._states[batch.tp]
        if not answered and st.answered(batch):
            self._put_back(st, batch)
            st.note_error(error, leader)
            return
        if batch.attempts > self.client.config.retries:
            raise self.produce_error(batch.tp, f"gave up after {batch.attempts} attempts (retries="
                                     f"{self.client.config.retries})", broker=leader, error=error)
        st.failed(batch, error, leader, now)
        self._retrying.add(batch.tp)
        log.debug("produce to %s-%d failed (attempt %d), again in %.3fs: %s", batch.topic, batch.partition,
                  batch.attempts, st.retry_at - now, error)

    def _acknowledge(self, batch: ProducerBatch, base_offset: int, now: float) -> None:
        tp = batch.tp
        self.idempotence.confirm(tp)
        ack = self.acknowledged.get(tp)
        if ack is None:
            ack = self.acknowledged[tp] = PartitionAck(acknowledged=self.acks != 0)
        ack.records += batch.count
        ack.batches += 1
        if base_offset >= 0:
            if ack.base_offset < 0:
                ack.base_offset = base_offset
            ack.last_offset = base_offset + batch.count - 1
        st = self._states[tp]
        st.acknowledged(now)
        if not st.retries:
            self._retrying.discard(tp)
        self.accumulator.release(len(batch.payload))

    # -- retries and budgets ---------------------------------------------------------------------------
    def _refresh_metadata_when_due(self, now: float) -> None:
        due = [self._states[tp] for tp in self._retrying
               if self._states[tp].needs_metadata and self._states[tp].retry_at <= now]
        if not due:
            return
        for st in due:
            st.needs_metadata = False
        deadline = min(self._deadline(st) for st in due)
        try:
            self.client.refresh_metadata(sorted({st.tp[0] for st in due}), deadline=deadline)
        except UnknownTopicError:
            raise
        except KwireError as exc:  # no broker answered: sending finds out again, within the deadline
            if not (is_retriable_error(exc) or isinstance(exc, RetriesExhaustedError)):
                raise
            log.debug("metadata refresh failed while producing: %s", exc)

    def _check_delivery_budgets(self, now: float) -> None:
        self._next_expiry_check = now + EXPIRY_CHECK_S
        budget_s = self.delivery_timeout_ms / 1000.0
        for tp in self.accumulator.ready_partitions():
            self._state(tp)
        for tp, st in self._states.items():
            oldest = st.oldest_unacknowledged() or self.accumulator.peek_ready(tp)
            if oldest is None:
                continue
            start = max(st.last_ack, oldest.created)
            if now - start > budget_s:
                raise self._delivery_timeout(st, now - start)
            self._next_expiry_check = min(self._next_expiry_check, start + budget_s + 0.001)

    def _delivery_timeout(self, st: PartitionDelivery, waited: float) -> ProduceError:
        unacked = sum(s.unacknowledged_records() for s in self._states.values()) + self.accumulator.ready_records
        partitions = {tp for tp, s in self._states.items() if s.busy} | set(self.accumulator.ready_partitions())
        broker = st.leader if st.leader is not None else st.last_broker
        if broker is None:
            try:
                broker = self.client.leader_for(*st.tp)
            except KwireError:
                broker = None
        error = st.last_error
        if error is None:
            error = RequestTimeoutError(self.client.broker_address(broker) or "?",
                                        f"no complete Produce response after {waited:.1f}s "
                                        f"(request.timeout.ms={self.request_timeout_ms})", node_id=broker)
        return self.produce_error(
            st.tp, f"delivery timeout of {self.delivery_timeout_ms} ms (delivery.timeout.ms) expired; "
                   f"{unacked} record(s) in {len(partitions)} partition(s) were not acknowledged",
            broker=broker, error=error)
