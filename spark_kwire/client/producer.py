"""Producer: append Arrow columns per partition, then ``flush()`` them as Produce requests.

* ``send_batch`` cuts the rows into record batches of at most ``batch.size`` bytes (uncompressed) and
  encodes them right away -- with the idempotent producer, each batch gets its producer id/epoch and
  per-partition sequence numbers once, so a retry resends the *same bytes* and the broker deduplicates.
* ``flush`` sends the queued batches grouped per leader (several partitions per request, up to
  ``max.in.flight.requests.per.connection`` requests in flight per broker, at most one batch per partition
  per request so each partition's batches reach the broker in sequence order). Retriable errors
  (leader moves, NOT_ENOUGH_REPLICAS, timeouts, connection loss...) refresh metadata and resend from the
  partition's first unacknowledged batch, within ``delivery.timeout.ms``.
* Until a partition's first batch is acknowledged it is the only one of that partition in flight: a broker
  with no state for the producer accepts any first sequence number, so pipelining there could reorder.
* DUPLICATE_SEQUENCE_NUMBER counts as success. OUT_OF_ORDER_SEQUENCE_NUMBER (when not caused by an earlier
  failed batch of the same partition) and UNKNOWN_PRODUCER_ID mean the broker lost acknowledged state: the
  producer raises :class:`ProduceError` rather than risk silent loss or duplication (the task retries).
* Success is only reported for acknowledged batches; ``acks=0`` sends without waiting and reports base
  offset -1 with ``acknowledged=False``.
* Sending overlaps encoding: once ``buffer.memory`` bytes of encoded batches wait, ``send_batch`` hands them
  to a background flush and goes on encoding while they are sent (what they got acknowledged is carried into
  the result of the next ``flush()``). One background flush runs at a time: the next hand-off, and
  ``flush()``, first wait for it, so a partition's batches still reach the broker in sequence order and at
  most 2 x ``buffer.memory`` bytes are held. A failure of the background flush is raised by the next
  ``send_batch`` or ``flush()``. (Handing off smaller amounts as soon as the sender is idle was measured
  slower: each flush pays a round trip, so big flushes with 5 requests in flight carry more per wait.)
  A flush gives up when ``delivery.timeout.ms`` passes without an acknowledgement (counted from its start or from the last
  acknowledgement), and every wait in it (connecting, metadata, responses) ends by that deadline, so it
  fails within the timeout even when a broker accepts connections and never answers. A failed flush raises
  :class:`ProduceError` naming the topic, partition, leader and last error, with ``acknowledged`` holding
  what the brokers did acknowledge before the failure.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np

from spark_kwire.client.config import COMPRESSION_TYPES, ACKS
from spark_kwire.client.errors import (ConfigError, KwireError, ProduceError, RequestTimeoutError,
                                       RetriesExhaustedError, UnknownTopicError, is_retriable_error)
from spark_kwire.client.retry import Backoff
from spark_kwire.protocol import messages as m
from spark_kwire.protocol.errors import KafkaApiError, error_for
from spark_kwire.protocol.records import encode_record_batches, partition_for_keys

__all__ = ["Producer", "PartitionAck"]

log = logging.getLogger(__name__)

NONE = 0
MESSAGE_TOO_LARGE = 10
RECORD_LIST_TOO_LARGE = 18
OUT_OF_ORDER_SEQUENCE_NUMBER = 45
DUPLICATE_SEQUENCE_NUMBER = 46
UNKNOWN_PRODUCER_ID = 59


@dataclass
class PartitionAck:
    """What ``flush()`` got acknowledged for one partition."""

    records: int = 0
    batches: int = 0
    base_offset: int = -1  # offset of the first acknowledged record (-1: unknown, e.g. duplicate or acks=0)
    last_offset: int = -1  # offset of the last acknowledged record when known
    acknowledged: bool = True  # False for acks=0


class _Batch:
    __slots__ = ("topic", "partition", "payload", "count", "base_sequence", "attempts", "last_error")

    def __init__(self, topic: str, partition: int, payload: bytes, count: int, base_sequence: int) -> None:
        self.topic = topic
        self.partition = partition
        self.payload = payload
        self.count = count
        self.base_sequence = base_sequence
        self.attempts = 0
        self.last_error: BaseException | None = None


def _batch_record_count(payload: bytes) -> int:
    return int.from_bytes(payload[57:61], "big", signed=True)


class Producer:
    """Writes Arrow columns to partitions; see the module docstring. Not thread-safe (its own background
    flush aside): call it from one thread."""

    def __init__(self, client, *, acks: int | str | None = None, compression: str | None = None,
                 idempotent: bool | None = None, batch_size: int | None = None, max_in_flight: int | None = None,
                 delivery_timeout_ms: int | None = None, request_timeout_ms: int | None = None,
                 max_request_size: int | None = None, buffer_memory: int | None = None) -> None:
        config = client.config
        self.client = client
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
        self._queued_bytes = 0
        self._carried: dict[tuple[str, int], PartitionAck] = {}  # acknowledged by automatic flushes
        self.producer_id = -1
        self.producer_epoch = -1
        self._sequences: dict[tuple[str, int], int] = {}
        self._confirmed: set[tuple[str, int]] = set()  # partitions with an acknowledged batch of this producer id
        self._queues: dict[tuple[str, int], deque[_Batch]] = {}
        self._round_robin: dict[str, itertools.count] = {}
        self._failed: BaseException | None = None
        self._closed = False
        # the background flush of batches handed off by _auto_flush (one at a time)
        self._flusher: threading.Thread | None = None
        self._flusher_acks: dict[tuple[str, int], PartitionAck] = {}
        self._flusher_error: BaseException | None = None
        self._closing = threading.Event()

    # -- appending -------------------------------------------------------------------------------------
    @property
    def pending_records(self) -> int:
        return sum(b.count for q in self._queues.values() for b in q)

    def _check_usable(self) -> None:
        if self._closed:
            raise KwireError("the producer is closed")
        if self._failed is not None:
            raise KwireError(f"the producer failed earlier and cannot be used: {self._failed}")
        if self._flusher is not None and not self._flusher.is_alive():
            self._join_flusher()  # raises what the background flush failed with, at the first chance

    def _init_producer_id(self, topic: str, partition: int) -> None:
        client = self.client

        def body(version: int) -> dict:
            return {"transactional_id": None, "transaction_timeout_ms": client.config.transaction_timeout_ms,
                    "producer_id": -1, "producer_epoch": -1}

        def attempt():
            response = client.send_to(None, m.INIT_PRODUCER_ID, body, what="InitProducerId")
            code = response.get("error_code", 0)
            if code:
                raise error_for(code, error_message="InitProducerId for the idempotent producer")
            return response

        try:
            response = client.call_with_retry("InitProducerId", attempt, budget_ms=self.delivery_timeout_ms)
        except (RetriesExhaustedError, KafkaApiError) as exc:
            raise self._produce_error((topic, partition), "could not get a producer id (InitProducerId) for the "
                                      "idempotent producer within delivery.timeout.ms", error=exc) from exc
        self.producer_id = response["producer_id"]
        self.producer_epoch = response["producer_epoch"]
        log.debug("idempotent producer id %d epoch %d", self.producer_id, self.producer_epoch)

    def send_batch(self, topic: str, partition, values, keys=None, headers=None, timestamps_ms=None) -> int:
        """Queue rows for ``topic``; returns how many were queued. Nothing is sent before flush().

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
            raise self._produce_error((topic, partition), "the cluster metadata could not be read",
                                      error=exc.last_error) from exc
        if self.idempotent and self.producer_id < 0:
            self._init_producer_id(topic, partition)
        tp = (topic, partition)
        seq = self._sequences.get(tp, 0) if self.idempotent else -1
        try:
            payloads = encode_record_batches(
                values, keys, timestamps_ms=timestamps_ms, headers=headers, compression=self.compression,
                max_batch_bytes=self.batch_size, producer_id=self.producer_id if self.idempotent else -1,
                producer_epoch=self.producer_epoch if self.idempotent else -1, base_sequence=seq)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"cannot encode records for {topic}-{partition}: {exc}") from exc
        queue = self._queues.setdefault(tp, deque())
        for payload in payloads:
            count = _batch_record_count(payload)
            queue.append(_Batch(topic, partition, payload, count, seq))
            self._queued_bytes += len(payload)
            if self.idempotent:
                seq = (seq + count) & 0x7FFFFFFF
        if self.idempotent:
            self._sequences[tp] = seq
        if self.buffer_memory > 0 and self._queued_bytes >= self.buffer_memory:
            self._auto_flush()  # waits for the running background flush first: memory stays bounded
        return n

    def _auto_flush(self) -> None:
        """Hand what waits to a background flush (after the previous one ended)."""
        self._join_flusher()
        handoff, self._queues, self._queued_bytes = self._queues, {}, 0
        acks: dict[tuple[str, int], PartitionAck] = {}
        self._flusher_acks = acks

        def deliver() -> None:
            try:
                self._flush(None, acks, handoff)
            except BaseException as exc:  # raised in the caller's thread by _join_flusher
                self._flusher_error = exc

        self._flusher = threading.Thread(target=deliver, name="kwire-producer-flush", daemon=True)
        self._flusher.start()

    def _join_flusher(self) -> None:
        """Wait for the background flush; carry what it got acknowledged; raise what it failed with."""
        flusher = self._flusher
        if flusher is None:
            return
        flusher.join()
        self._flusher = None
        self._carried = self._merged_acks(self._flusher_acks)
        self._flusher_acks = {}
        error, self._flusher_error = self._flusher_error, None
        if error is not None:
            self._failed = error
            raise error

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
                from spark_kwire.client.errors import UnknownTopicError
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

    @property
    def pending_bytes(self) -> int:
        """Encoded bytes queued and not yet sent (more than buffer.memory hands them to a background flush)."""
        return self._queued_bytes

    def _merged_acks(self, acks: dict) -> dict[tuple[str, int], PartitionAck]:
        """What automatic flushes carried, followed by ``acks``."""
        merged = {tp: PartitionAck(a.records, a.batches, a.base_offset, a.last_offset, a.acknowledged)
                  for tp, a in self._carried.items()}
        for tp, ack in acks.items():
            into = merged.get(tp)
            if into is None:
                merged[tp] = PartitionAck(ack.records, ack.batches, ack.base_offset, ack.last_offset,
                                          ack.acknowledged)
                continue
            into.records += ack.records
            into.batches += ack.batches
            if into.base_offset < 0:
                into.base_offset = ack.base_offset
            if ack.last_offset >= 0:
                into.last_offset = ack.last_offset
        return merged

    # -- flushing --------------------------------------------------------------------------------------
    def flush(self, timeout_ms: int | None = None) -> dict[tuple[str, int], PartitionAck]:
        """Send everything queued and wait for the acknowledgements (``acks``).

        Returns ``{(topic, partition): PartitionAck}``. Raises :class:`ProduceError` on a non-retriable
        error or when ``delivery.timeout.ms`` (or ``timeout_ms``) runs out; batches not acknowledged by then
        stay unacknowledged (and the producer becomes unusable).
        """
        self._check_usable()
        acks: dict[tuple[str, int], PartitionAck] = {}
        try:
            self._join_flusher()
            self._flush(timeout_ms, acks, self._queues)
        except BaseException as exc:
            self._failed = exc
            raise
        finally:
            self._queued_bytes = sum(len(b.payload) for q in self._queues.values() for b in q)
        result = self._merged_acks(acks)
        self._carried = {}
        return result

    def _produce_error(self, tp, message: str, *, broker=None, error=None, code=None, acks=None) -> ProduceError:
        address = self.client.broker_address(broker)
        if address is None and error is not None:
            address = getattr(error, "address", None)
        return ProduceError(tp[0], tp[1], message, broker=broker, error=error, code=code, broker_address=address,
                            acknowledged={k: a.records for k, a in self._merged_acks(acks or {}).items()})

    def _flush(self, timeout_ms: int | None, acks: dict, queues: dict) -> None:
        """Deliver every batch of ``queues``, adding what was acknowledged to ``acks`` (also when it raises)."""
        try:
            self._flush_rounds(timeout_ms, acks, queues)
        except (ProduceError, UnknownTopicError, ConfigError):
            raise
        except KwireError as exc:  # anything else: name the partition it happened to, and what was acknowledged
            tp = next((tp for tp, q in queues.items() if q), ("?", -1))
            raise self._produce_error(tp, "unexpected error", error=exc, acks=acks) from exc

    def _flush_rounds(self, timeout_ms: int | None, acks: dict, queues: dict) -> None:
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
                        raise self._produce_error(tp, f"gave up after {head.attempts} attempts (retries="
                                                  f"{client.config.retries})", broker=broker, error=error, acks=acks)
            if progressed:
                backoff.reset()
            delay = backoff.next_delay()
            if time.monotonic() + delay > deadline:
                tp, (error, broker) = next(iter(failures.items()))
                unacked = sum(b.count for q in queues.values() for b in q)
                raise self._produce_error(
                    tp,
                    f"delivery timeout of {budget_ms} ms (delivery.timeout.ms) expired after {rounds} round(s); "
                    f"{unacked} record(s) in {sum(1 for q in queues.values() if q)} partition(s) were not "
                    f"acknowledged",
                    broker=broker, error=error, acks=acks)
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

    def _plan(self, window: int, failures, queues: dict) -> dict[int, list[list[_Batch]]]:
        """Requests per leader: each a list of batches, at most one per partition, in sequence order."""
        client = self.client
        plan: dict[int, list[list[_Batch]]] = {}
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
                    raise self._produce_error(tp, "no usable leader", error=exc) from exc
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
            limit = window if (not self.idempotent or tp in self._confirmed) else 1
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

    def _request_body(self, batches: list[_Batch], version: int) -> dict:
        by_topic: dict[str, list] = {}
        for batch in batches:
            by_topic.setdefault(batch.topic, []).append({"index": batch.partition, "records": batch.payload})
        topic_data = []
        for topic, parts in by_topic.items():
            entry = {"name": topic, "partition_data": parts}
            if version >= 13:
                entry["topic_id"] = self.client.topic_info(topic).topic_id
            topic_data.append(entry)
        return {"transactional_id": None, "acks": self.acks, "timeout_ms": self.request_timeout_ms,
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
            kept: deque[_Batch] = deque()
            sent = [b for b in queue if id(b) in seen]
            unsent = [b for b in queue if id(b) not in seen]
            for batch in sent:
                kind, info, broker = results.get(id(batch), ("error", None, None))
                if kind == "ok" and (not earlier_failed or not self.idempotent):
                    self._confirmed.add(tp)
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
                    raise self._produce_error(tp, f"a batch of {len(batch.payload)} bytes ({batch.count} records) "
                                       f"was rejected as too large; lower batch.size (now {self.batch_size}) or raise "
                                       f"the topic's max.message.bytes", broker=broker, error=error, code=code,
                                       acks=acks)
                if code == OUT_OF_ORDER_SEQUENCE_NUMBER:
                    raise self._produce_error(tp, f"the broker expected another sequence number than "
                                       f"{batch.base_sequence} for producer id {self.producer_id}: acknowledged "
                                       f"records may have been lost by the broker (e.g. unclean leader election)",
                                       broker=broker, error=error, code=code, acks=acks)
                if code == UNKNOWN_PRODUCER_ID:
                    raise self._produce_error(tp, f"the broker no longer knows producer id {self.producer_id} "
                                       f"(its state expired or was lost)", broker=broker, error=error, code=code,
                                       acks=acks)
                if isinstance(error, KafkaApiError) and error.code == 3:
                    self.client.check_unknown_topic(error, tp[0], tp[1])
                if not is_retriable_error(error):
                    raise self._produce_error(tp, "non-retriable error", broker=broker, error=error, code=code,
                                              acks=acks)
                failures.setdefault(tp, (error, broker))
                earlier_failed = True
                kept.append(batch)
            kept.extend(unsent)
            queues[tp] = kept
        return progressed

    # -- life cycle ------------------------------------------------------------------------------------
    def close(self) -> None:
        """Forget unsent batches (call flush() first to deliver them); a background flush stops after its round."""
        self._closing.set()
        if self._flusher is not None:
            self._flusher.join(timeout=5)  # a daemon thread: never waits longer than its current round
        self._queues.clear()
        self._queued_bytes = 0
        self._closed = True

    def __enter__(self) -> "Producer":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type is None and not self._closed and self._failed is None:
                self.flush()
        finally:
            self.close()
