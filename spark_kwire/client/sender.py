"""The producer's sender: delivers encoded batches to partition leaders and reports what was acknowledged.

``deliver(batches)`` sends the batches handed to it grouped per leader (several partitions per request, up to
``max.in.flight.requests.per.connection`` requests in flight per broker, at most one batch per partition per
request so each partition's batches reach the broker in sequence order), in rounds. Retriable errors (leader
moves, NOT_ENOUGH_REPLICAS, timeouts, connection loss...) refresh metadata and resend from the partition's
first unacknowledged batch, within ``delivery.timeout.ms``:

* Until a partition's first batch is acknowledged it is the only one of that partition in flight: a broker
  with no state for the producer accepts any first sequence number, so pipelining there could reorder.
* DUPLICATE_SEQUENCE_NUMBER counts as success. OUT_OF_ORDER_SEQUENCE_NUMBER (when not caused by an earlier
  failed batch of the same partition) and UNKNOWN_PRODUCER_ID mean the broker lost acknowledged state: the
  sender raises :class:`ProduceError` rather than risk silent loss or duplication.
* ``acks=0`` sends without waiting; what it sent counts with base offset -1 and ``acknowledged=False``.
* A delivery gives up when ``delivery.timeout.ms`` passes without an acknowledgement (counted from its start or
  from the last acknowledgement), and every wait in it (connecting, metadata, responses) ends by that
  deadline. It then raises :class:`ProduceError` naming the topic, partition, leader and last error.

What was acknowledged accumulates in :attr:`Sender.acknowledged` until the producer takes it
(:meth:`Sender.take_acknowledged`); a ProduceError's ``acknowledged`` holds the same, so nothing is reported
that a leader did not acknowledge. ``deliver_in_background`` runs one delivery in a thread while the caller
encodes more; the next hand-off, and ``wait``, first wait for it (and raise what it failed with).
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from spark_kwire.client.accumulator import ProducerBatch
from spark_kwire.client.errors import (ConfigError, KwireError, ProduceError, RequestTimeoutError,
                                       RetriesExhaustedError, UnknownTopicError, is_retriable_error)
from spark_kwire.client.idempotence import IdempotenceState
from spark_kwire.client.retry import Backoff
from spark_kwire.protocol import messages as m
from spark_kwire.protocol.errors import KafkaApiError, error_for

__all__ = ["Sender", "PartitionAck"]

log = logging.getLogger(__name__)

TopicPartition = tuple[str, int]
Batches = dict[TopicPartition, deque[ProducerBatch]]

NONE = 0
MESSAGE_TOO_LARGE = 10
RECORD_LIST_TOO_LARGE = 18
OUT_OF_ORDER_SEQUENCE_NUMBER = 45
DUPLICATE_SEQUENCE_NUMBER = 46
UNKNOWN_PRODUCER_ID = 59


@dataclass
class PartitionAck:
    """What was acknowledged for one partition."""

    records: int = 0
    batches: int = 0
    base_offset: int = -1  # offset of the first acknowledged record (-1: unknown, e.g. duplicate or acks=0)
    last_offset: int = -1  # offset of the last acknowledged record when known
    acknowledged: bool = True  # False for acks=0


class Sender:
    """Sends what it is handed to the leaders; see the module docstring. One delivery runs at a time."""

    def __init__(self, client, idempotence: IdempotenceState, *, acks: int, max_in_flight: int, batch_size: int,
                 delivery_timeout_ms: int, request_timeout_ms: int, max_request_size: int) -> None:
        self.client = client
        self.idempotence = idempotence
        self.acks = acks
        self.max_in_flight = max_in_flight
        self.batch_size = batch_size  # only to say how to fix a batch the broker finds too large
        self.delivery_timeout_ms = delivery_timeout_ms
        self.request_timeout_ms = request_timeout_ms
        self.max_request_size = max_request_size
        #: acknowledged since the producer last took it (written by one delivery at a time)
        self.acknowledged: dict[TopicPartition, PartitionAck] = {}
        self._background: threading.Thread | None = None
        self._background_error: BaseException | None = None
        self._closing = threading.Event()

    @property
    def idempotent(self) -> bool:
        return self.idempotence.enabled

    # -- hand-offs -----------------------------------------------------------------------------------------
    def deliver(self, batches: Batches, timeout_ms: int | None = None) -> None:
        """Deliver every batch of ``batches`` (delivered ones are removed from it); raises :class:`ProduceError`."""
        acks = self.acknowledged
        try:
            self._rounds(timeout_ms, acks, batches)
        except (ProduceError, UnknownTopicError, ConfigError):
            raise
        except KwireError as exc:  # anything else: name the partition it happened to, and what was acknowledged
            tp = next((tp for tp, q in batches.items() if q), ("?", -1))
            raise self.produce_error(tp, "unexpected error", error=exc) from exc

    def deliver_in_background(self, batches: Batches) -> None:
        """Deliver ``batches`` in a thread, after the previous background delivery ended (raising its failure)."""
        self.wait()

        def run() -> None:
            try:
                self.deliver(batches)
            except BaseException as exc:  # raised in the caller's thread by wait()
                self._background_error = exc

        self._background = threading.Thread(target=run, name="kwire-producer-send", daemon=True)
        self._background.start()

    @property
    def busy(self) -> bool:
        """True while a background delivery runs."""
        return self._background is not None and self._background.is_alive()

    @property
    def background_ended(self) -> bool:
        """True when a background delivery ended and ``wait`` has not collected it yet."""
        return self._background is not None and not self._background.is_alive()

    def wait(self) -> None:
        """Wait for the background delivery, if any; raise what it failed with."""
        background = self._background
        if background is None:
            return
        background.join()
        self._background = None
        error, self._background_error = self._background_error, None
        if error is not None:
            raise error

    def take_acknowledged(self) -> dict[TopicPartition, PartitionAck]:
        """What was acknowledged since the last call (call when no delivery runs)."""
        taken, self.acknowledged = self.acknowledged, {}
        return taken

    def close(self) -> None:
        """Make a running delivery stop after its current round (waits at most 5 s for it)."""
        self._closing.set()
        if self._background is not None:
            self._background.join(timeout=5)  # a daemon thread: never waits longer than its current round

    # -- errors --------------------------------------------------------------------------------------------
    def produce_error(self, tp, message: str, *, broker=None, error=None, code=None) -> ProduceError:
        """A :class:`ProduceError` about ``tp`` carrying everything acknowledged so far."""
        address = self.client.broker_address(broker)
        if address is None and error is not None:
            address = getattr(error, "address", None)
        return ProduceError(tp[0], tp[1], message, broker=broker, error=error, code=code, broker_address=address,
                            acknowledged={k: a.records for k, a in self.acknowledged.items()})

    # -- delivery rounds -------------------------------------------------------------------------------
    def _rounds(self, timeout_ms: int | None, acks: dict, queues: Batches) -> None:
        client = self.client
        budget_ms = self.delivery_timeout_ms if timeout_ms is None else timeout_ms
        started = time.monotonic()
        deadline = started + budget_ms / 1000.0
        backoff = Backoff(client.config)
        window = min(self.max_in_flight, 5) if self.idempotent else self.max_in_flight
        rounds = 0
        while any(queues.values()):
            if self._closing.is_set():
                raise KwireError("the producer was closed while it was flushing")
            rounds += 1
            failures: dict[tuple[str, int], tuple[BaseException, int | None]] = {}
            plan = self._plan(window, failures, queues)
            results = self._send_round(plan, failures, deadline) if plan else {}
            progressed = self._apply_results(plan, results, failures, acks, queues)
            if progressed:
                # delivery.timeout.ms counts from the last acknowledgement: a long flush that keeps making
                # progress is not cut short, one that makes none ends within the timeout.
                deadline = max(deadline, time.monotonic() + budget_ms / 1000.0)
            if not failures:
                backoff.reset()
                continue
            # Retriable failures: check budgets, back off, refresh metadata, go again.
            for tp, (error, broker) in failures.items():
                queue = queues.get(tp)
                head = queue[0] if queue else None
                if head is not None:
                    head.last_error = error
                    if head.attempts > client.config.retries:
                        raise self.produce_error(tp, f"gave up after {head.attempts} attempts (retries="
                                                  f"{client.config.retries})", broker=broker, error=error)
            if progressed:
                backoff.reset()
            delay = backoff.next_delay()
            if time.monotonic() + delay > deadline:
                tp, (error, broker) = next(iter(failures.items()))
                unacked = sum(b.count for q in queues.values() for b in q)
                raise self.produce_error(
                    tp,
                    f"delivery timeout of {budget_ms} ms (delivery.timeout.ms) expired after {rounds} round(s); "
                    f"{unacked} record(s) in {sum(1 for q in queues.values() if q)} partition(s) were not "
                    f"acknowledged",
                    broker=broker, error=error)
            log.debug("produce round %d: %d partition(s) to retry in %.3fs (e.g. %s)", rounds, len(failures), delay,
                      next(iter(failures.values()))[0])
            time.sleep(delay)
            try:
                client.refresh_metadata(sorted({t for t, _ in failures}), deadline=deadline)
            except UnknownTopicError:
                raise
            except KwireError as exc:  # no broker answered: the next round finds out again, within the deadline
                if not (is_retriable_error(exc) or isinstance(exc, RetriesExhaustedError)):
                    raise
                log.debug("metadata refresh failed while producing: %s", exc)

    def _plan(self, window: int, failures, queues: dict) -> dict[int, list[list[ProducerBatch]]]:
        """Requests per leader: each a list of batches, at most one per partition, in sequence order."""
        client = self.client
        plan: dict[int, list[list[ProducerBatch]]] = {}
        sizes: dict[int, list[int]] = {}
        for tp, queue in queues.items():
            if not queue:
                continue
            try:
                leader = client.leader_for(*tp)
            except UnknownTopicError:
                raise
            except KafkaApiError as exc:
                if not exc.retriable:
                    raise self.produce_error(tp, "no usable leader", error=exc) from exc
                failures[tp] = (exc, None)
                queue[0].attempts += 1
                continue
            except RetriesExhaustedError as exc:  # the metadata could not be refreshed: retried next round
                failures[tp] = (exc.last_error, None)
                queue[0].attempts += 1
                continue
            requests = plan.setdefault(leader, [])
            req_sizes = sizes.setdefault(leader, [])
            index = -1
            # A broker without state for this producer accepts *any* first sequence number, so until the first
            # batch of a partition is acknowledged only that batch may be in flight: otherwise a retried first
            # batch could land behind a later one.
            limit = window if (not self.idempotent or self.idempotence.is_confirmed(tp)) else 1
            for batch in itertools.islice(queue, limit):
                index += 1
                while index < len(requests) and requests[index] and \
                        req_sizes[index] + len(batch.payload) > self.max_request_size:
                    index += 1
                if index == len(requests):
                    requests.append([])
                    req_sizes.append(0)
                requests[index].append(batch)
                req_sizes[index] += len(batch.payload)
        return plan

    def _request_body(self, batches: list[ProducerBatch], version: int) -> dict:
        by_topic: dict[str, list] = {}
        for batch in batches:
            by_topic.setdefault(batch.topic, []).append({"index": batch.partition, "records": batch.payload})
        topic_data = []
        for topic, parts in by_topic.items():
            entry = {"name": topic, "partition_data": parts}
            if version >= 13:
                entry["topic_id"] = self.client.topic_info(topic).topic_id
            topic_data.append(entry)
        return {"transactional_id": self.idempotence.transactional_id, "acks": self.acks, "timeout_ms": self.request_timeout_ms,
                "topic_data": topic_data}

    def _send_round(self, plan, failures, deadline: float) -> dict[int, dict[tuple[str, int], tuple[int, Any, int]]]:
        """Send the planned requests with a window per broker; returns per batch id: (code, ack info, broker).

        No wait goes beyond ``deadline`` (time.monotonic()): what is unanswered by then counts as failed."""
        client = self.client
        results: dict[int, tuple] = {}
        queued = {leader: deque(reqs) for leader, reqs in plan.items()}
        inflight: dict[int, deque] = {leader: deque() for leader in plan}

        def fail_request(leader, batches, error):
            for batch in batches:
                # out of time before sending: the error of the batch's previous attempt says more
                cause = batch.last_error if getattr(error, "out_of_time", False) and batch.last_error else error
                results[id(batch)] = ("error", cause, leader)

        while any(queued.values()) or any(inflight.values()):
            for leader in plan:
                while queued[leader] and len(inflight[leader]) < self.max_in_flight:
                    batches = queued[leader].popleft()
                    for batch in batches:
                        batch.attempts += 1
                    try:
                        remaining_ms = int((deadline - time.monotonic()) * 1000)
                        if remaining_ms <= 0:
                            late = RequestTimeoutError(client.broker_address(leader) or "?", "delivery.timeout.ms expired "
                                                       "before the request was sent", node_id=leader)
                            late.out_of_time = True
                            raise late
                        conn = client.connection(leader, deadline)
                        version = conn.version_for(m.PRODUCE)
                        if version >= 13 and any(client.topic_info(b.topic).topic_id is None for b in batches):
                            version = conn.version_for(m.PRODUCE, 12)
                        pending = conn.send(m.PRODUCE, self._request_body(batches, version), version,
                                            expect_response=self.acks != 0,
                                            timeout_ms=max(1, min(self.request_timeout_ms + 5000, remaining_ms)))
                    except KwireError as exc:
                        if not is_retriable_error(exc):
                            raise
                        fail_request(leader, batches, exc)
                        # the connection is gone: everything queued for this broker fails this round
                        while queued[leader]:
                            fail_request(leader, queued[leader].popleft(), exc)
                        continue
                    inflight[leader].append((batches, version, pending))
            for leader in plan:
                if not inflight[leader]:
                    continue
                batches, version, pending = inflight[leader].popleft()
                try:
                    body = pending.result(timeout=max(0.0, deadline - time.monotonic()))
                except KwireError as exc:
                    if not is_retriable_error(exc):
                        raise
                    fail_request(leader, batches, exc)
                    while inflight[leader]:
                        fail_request(leader, inflight[leader].popleft()[0], exc)
                    continue
                if self.acks == 0:
                    for batch in batches:
                        results[id(batch)] = ("ok", None, leader)
                    continue
                self._read_response(body, version, batches, leader, results)
        return results

    def _read_response(self, body, version, batches, leader, results) -> None:
        by_key = {}
        for topic in body.get("responses") or ():
            name = topic.get("name")
            if version >= 13:
                info = self.client.metadata.topic_by_id(topic.get("topic_id"))
                name = info.name if info is not None else name
            for part in topic.get("partition_responses") or ():
                by_key[(name, part["index"])] = part
        for batch in batches:
            part = by_key.get((batch.topic, batch.partition))
            if part is None:
                results[id(batch)] = ("error", KafkaApiError(5, topic=batch.topic, partition=batch.partition,
                                      broker=leader, error_message="partition missing from the Produce response"),
                                      leader)
                continue
            code = part.get("error_code", 0)
            if code == NONE:
                results[id(batch)] = ("ok", part.get("base_offset", -1), leader)
            elif code == DUPLICATE_SEQUENCE_NUMBER and self.idempotent:
                results[id(batch)] = ("ok", -1, leader)
            else:
                message = part.get("error_message")
                record_errors = part.get("record_errors") or ()
                if record_errors:
                    detail = "; ".join(f"record {e.get('batch_index')}: {e.get('batch_index_error_message')}"
                                       for e in record_errors[:3])
                    message = f"{message or ''} ({detail})".strip()
                results[id(batch)] = ("error", error_for(code, topic=batch.topic, partition=batch.partition,
                                                         broker=leader, error_message=message), leader)

    def _apply_results(self, plan, results, failures, acks, queues: dict) -> bool:
        """Pop acknowledged batches; record retriable failures; raise ProduceError for fatal ones."""
        progressed = False
        seen = {id(b) for reqs in plan.values() for req in reqs for b in req}
        for tp, queue in queues.items():
            earlier_failed = tp in failures
            kept: deque[ProducerBatch] = deque()
            sent = [b for b in queue if id(b) in seen]
            unsent = [b for b in queue if id(b) not in seen]
            for batch in sent:
                kind, info, broker = results.get(id(batch), ("error", None, None))
                if kind == "ok" and (not earlier_failed or not self.idempotent):
                    self.idempotence.confirm(tp)
                    ack = acks.setdefault(tp, PartitionAck(acknowledged=self.acks != 0))
                    ack.records += batch.count
                    ack.batches += 1
                    if info is not None and info >= 0:
                        if ack.base_offset < 0:
                            ack.base_offset = info
                        ack.last_offset = info + batch.count - 1
                    progressed = True
                    continue
                if kind == "ok":  # acknowledged after an earlier failure: resend, the broker deduplicates
                    kept.append(batch)
                    continue
                error = info if info is not None else KafkaApiError(
                    7, topic=tp[0], partition=tp[1], error_message="no response")
                code = getattr(error, "code", None)
                if earlier_failed and self.idempotent and code == OUT_OF_ORDER_SEQUENCE_NUMBER:
                    kept.append(batch)  # follows a failed batch of the same partition
                    continue
                if code in (MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE):
                    raise self.produce_error(tp, f"a batch of {len(batch.payload)} bytes ({batch.count} records) "
                                       f"was rejected as too large; lower batch.size (now {self.batch_size}) or raise "
                                       f"the topic's max.message.bytes", broker=broker, error=error, code=code)
                if code == OUT_OF_ORDER_SEQUENCE_NUMBER:
                    raise self.produce_error(tp, f"the broker expected another sequence number than "
                                       f"{batch.base_sequence} for producer id {self.idempotence.producer_id}: acknowledged "
                                       f"records may have been lost by the broker (e.g. unclean leader election)",
                                       broker=broker, error=error, code=code)
                if code == UNKNOWN_PRODUCER_ID:
                    raise self.produce_error(tp, f"the broker no longer knows producer id {self.idempotence.producer_id} "
                                       f"(its state expired or was lost)", broker=broker, error=error, code=code)
                if isinstance(error, KafkaApiError) and error.code == 3:
                    self.client.check_unknown_topic(error, tp[0], tp[1])
                if not is_retriable_error(error):
                    raise self.produce_error(tp, "non-retriable error", broker=broker, error=error, code=code)
                failures.setdefault(tp, (error, broker))
                earlier_failed = True
                kept.append(batch)
            kept.extend(unsent)
            queues[tp] = kept
        return progressed
