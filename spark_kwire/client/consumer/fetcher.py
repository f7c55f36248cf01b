"""Reading: ranged Fetch of one partition.

``fetch_range(client, topic, partition, start, end)`` returns a :class:`RangeReader`, an iterator of decoded
record batches of ``[start, end)`` that follows leader changes and retriable errors, pipelines the next Fetch
while the current response is decoded, and reports where and why it stopped. With ``client.rack`` it reads from
the replica the leader prefers (:mod:`~spark_kwire.client.consumer.read_replica`); a replica's high watermark
never ends a range: only the leader says where a partition ends.
"""

from __future__ import annotations

import logging
import struct
import time
from typing import Iterator

from spark_kwire.client.errors import (FetchStalledError, KwireError, OffsetOutOfRangeError, RetriesExhaustedError,
                                       is_retriable_error)
from spark_kwire.client.consumer.offsets import isolation_code, list_offsets
from spark_kwire.client.consumer.read_replica import fetch_target, follow_redirect, leave_replica
from spark_kwire.protocol import messages as m
from spark_kwire.protocol.errors import KafkaApiError, error_for
from spark_kwire.protocol.records import DecompressedSizeError, decode_record_set

__all__ = ["fetch_range", "RangeReader", "scan_next_offset"]

log = logging.getLogger(__name__)

OFFSET_OUT_OF_RANGE = 1
# Redirects to a preferred read replica in a row without records before the leader is read alone.
MAX_REDIRECTS = 3
_INT64 = struct.Struct(">q")
_INT32 = struct.Struct(">i")


def scan_next_offset(records) -> int | None:
    """The offset after the last *complete* batch (any magic) in ``records``, or None when there is none.

    Reads only the batch headers (baseOffset/offset at 0, length at 8, magic at 16, lastOffsetDelta at 23 in
    magic 2) so the next fetch can be sent before the current response is decoded.
    """
    if records is None:
        return None
    n = len(records)
    pos = 0
    result = None
    while pos + 17 <= n:
        size = _INT32.unpack_from(records, pos + 8)[0]
        end = pos + 12 + size
        if size < 5 or end > n:
            break
        base = _INT64.unpack_from(records, pos)[0]
        if records[pos + 16] >= 2:
            if pos + 27 > n:
                break
            result = base + _INT32.unpack_from(records, pos + 23)[0] + 1
        else:
            result = base + 1
        pos = end
    return result


def pipelined_offset(records, offset: int, end: int, limit: int, max_bytes: int) -> int | None:
    """Where to send the next Fetch of range [offset, end) before ``records`` (the answer at ``offset``) is
    decoded, or None when none is needed yet.

    A range that ends at or below the partition's high watermark (``limit``), answered with less than half of the
    bytes allowed, came whole: the broker stopped because it had no more, not for the size. That is a stream's
    usual micro-batch, whose end offset is known to exist; its many small batches are not scanned then (0.6 ms for
    375 of them). Otherwise the complete batches' headers tell the offset that follows them. A wrong guess costs
    only the overlap: the next Fetch goes after decoding."""
    if not records or (limit >= end and 2 * len(records) <= max_bytes):
        return None
    scanned = scan_next_offset(records)
    return scanned if scanned is not None and offset < scanned < min(end, limit) else None


def fetch_range(client, topic: str, partition: int, start: int, end: int, *, isolation_level: str | None = None,
                include_headers: bool = False, max_bytes: int | None = None, prefetched=None) -> "RangeReader":
    """Iterator of decoded record batches of offsets [start, end) of one partition; see :class:`RangeReader`.

    ``prefetched`` is the answer to this range's first Fetch when it was sent with others
    (:class:`~spark_kwire.client.consumer.packed_fetch.PackedFetch`)."""
    return RangeReader(client, topic, partition, start, end, isolation_level=isolation_level,
                       include_headers=include_headers, max_bytes=max_bytes, prefetched=prefetched)


class _InFlightFetch:
    __slots__ = ("offset", "node", "version", "pending", "topic_id", "replica", "sent_at")

    def __init__(self, offset, node, version, pending, topic_id, replica=False) -> None:
        self.offset = offset
        self.node = node  # the broker asked: the leader, or a replica (``replica``) with client.rack
        self.version = version
        self.pending = pending
        self.topic_id = topic_id
        self.replica = replica
        self.sent_at = time.monotonic()


class RangeReader:
    """Iterator of ``DecodedRecords`` covering offsets ``[start, end)`` of one partition.

    Only non-empty batches are yielded. After (or during) iteration:

    * ``position``: the next offset that would be read (``>= end`` when the range was read completely);
    * ``stopped_early``: True when the partition ends before ``end`` -- offsets ``[position, end)`` do not
      exist (yet): the high watermark (read_committed: last stable offset) was below ``end``.
      ``stop_reason`` explains; the caller decides (failOnDataLoss);
    * ``high_watermark``, ``last_stable_offset``, ``log_start_offset`` from the last Fetch response;
    * ``records_read``, ``fetches``.

    Raises :class:`OffsetOutOfRangeError` when ``start`` (or a later offset) is outside the log.
    Offsets may be skipped inside the range (compaction, transaction markers, aborted records).
    """

    def __init__(self, client, topic: str, partition: int, start: int, end: int, *,
                 isolation_level: str | None = None, include_headers: bool = False,
                 max_bytes: int | None = None, prefetched=None) -> None:
        if start < 0 or end < 0:
            raise ValueError(f"fetch_range needs resolved offsets >= 0, got [{start}, {end})")
        self.client = client
        self.topic = topic
        self.partition = int(partition)
        self.start = int(start)
        self.end = int(end)
        self.isolation = isolation_code(client, isolation_level)
        self.include_headers = include_headers
        self.max_bytes = int(max_bytes or client.config.max_partition_fetch_bytes)
        self.position = self.start
        self.stopped_early = False
        self.stop_reason: str | None = None
        self.high_watermark = -1
        self.last_stable_offset = -1
        self.log_start_offset = -1
        self.records_read = 0
        self.fetches = 0
        self._iter: Iterator | None = None
        self._prefetched = prefetched if prefetched is not None and prefetched.offset == self.start else None
        self._redirects = 0
        self._replica_behind_since: float | None = None

    def __iter__(self) -> "RangeReader":
        return self

    def __next__(self):
        if self._iter is None:
            self._iter = self._run()
        return next(self._iter)

    def close(self) -> None:
        if self._iter is not None:
            self._iter.close()

    @property
    def done(self) -> bool:
        return self.position >= self.end or self.stopped_early

    # -- internals -------------------------------------------------------------------------------------
    def _send(self, offset: int) -> _InFlightFetch:
        client = self.client
        config = client.config
        info = client.topic_info(self.topic)
        part = client.partition_info(self.topic, self.partition)
        target = fetch_target(client, self.topic, self.partition)
        try:
            conn = client.connection(target.node)
        except KwireError as exc:
            if not target.replica:
                raise
            leave_replica(client, self.topic, self.partition, target.node, f"no connection: {exc}")
            target = fetch_target(client, self.topic, self.partition)
            conn = client.connection(target.node)
        topic_id = info.topic_id
        version = conn.version_for(m.FETCH, None if topic_id is not None else 12)
        body = {
            "replica_id": -1,
            "max_wait_ms": config.fetch_max_wait_ms,
            "min_bytes": config.fetch_min_bytes,
            "max_bytes": max(config.fetch_max_bytes, self.max_bytes),
            "isolation_level": self.isolation,
            "session_id": 0,
            "session_epoch": -1,
            "topics": [{
                "topic": self.topic,
                "topic_id": topic_id,
                "partitions": [{
                    "partition": self.partition,
                    "current_leader_epoch": part.leader_epoch,
                    "fetch_offset": offset,
                    "last_fetched_epoch": -1,
                    "log_start_offset": -1,
                    "partition_max_bytes": self.max_bytes,
                }],
            }],
            "forgotten_topics_data": [],
            "rack_id": target.rack_id,
        }
        if topic_id is None:
            del body["topics"][0]["topic_id"]
        # The broker may wait up to fetch.max.wait.ms before answering: allow for it on top of the timeout.
        timeout_ms = config.request_timeout_ms + config.fetch_max_wait_ms
        pending = conn.send(m.FETCH, body, version, timeout_ms=timeout_ms)
        self.fetches += 1
        return _InFlightFetch(offset, target.node, version, pending, topic_id, target.replica)

    def _partition_response(self, inflight: _InFlightFetch) -> dict:
        body = inflight.pending.result()
        code = body.get("error_code", 0)
        if code:
            raise error_for(code, topic=self.topic, partition=self.partition, broker=inflight.node)
        for topic in body.get("responses") or ():
            if inflight.version >= 13:
                if topic.get("topic_id") != inflight.topic_id:
                    continue
            elif topic.get("topic") != self.topic:
                continue
            for part in topic.get("partitions") or ():
                if part.get("partition_index") == self.partition:
                    return part
        raise KafkaApiError(5, topic=self.topic, partition=self.partition, broker=inflight.node,
                            error_message="partition missing from the Fetch response")

    def _out_of_range(self, offset: int, leader: int) -> KwireError:
        tp = (self.topic, self.partition)
        try:
            earliest = list_offsets(self.client, [tp], "earliest")[tp][0]
            latest = list_offsets(self.client, [tp], "latest")[tp][0]
        except KwireError as exc:
            log.debug("could not look up the bounds of %s: %s", tp, exc)
            earliest = latest = -1
        if 0 <= earliest <= offset < latest:
            return FetchStalledError(
                self.topic, self.partition, offset,
                f"broker {leader} answered OFFSET_OUT_OF_RANGE, but the partition holds offsets [{earliest}, "
                f"{latest}) (a leader change in progress?)")
        return OffsetOutOfRangeError(self.topic, self.partition, offset, earliest, latest, broker=leader)

    def _limit_is_final(self, limit: int, budget) -> bool:
        """True when the partition really ends at ``limit`` (the high watermark or last stable offset of the
        last Fetch response). After a leader change the new leader's high watermark can lag behind the old
        leader's for a moment, so a range planned up to the old one would look cut short; ListOffsets answers
        OFFSET_NOT_AVAILABLE (retried) until the new leader has caught up, so ask it before giving up."""
        tp = (self.topic, self.partition)
        isolation = "read_committed" if self.isolation == 1 else "read_uncommitted"
        try:
            latest = list_offsets(self.client, [tp], "latest", isolation_level=isolation)[tp][0]
        except KwireError as exc:
            if not is_retriable_error(exc) and not isinstance(exc, RetriesExhaustedError):
                raise
            log.debug("could not confirm the end of %s: %s", tp, exc)
            return True
        if latest <= max(limit, self.position):
            return True
        budget.what = f"fetching {self.topic}-{self.partition} at offset {self.position}"
        budget.failed(FetchStalledError(
            self.topic, self.partition, self.position,
            f"the Fetch response's high watermark {limit} is behind the partition's latest offset {latest}"),
            refresh_topics=[self.topic])
        return False

    def _stop(self, reason: str) -> None:
        self.stopped_early = True
        self.stop_reason = reason

    def _run(self):
        client = self.client
        budget = client.retry_budget(f"fetching {self.topic}-{self.partition} at offset {self.start}",
                                     client.api_budget_ms)
        read_committed = self.isolation == 1
        inflight, self._prefetched = self._prefetched, None
        stalls = 0
        while self.position < self.end:
            offset = self.position
            current = None
            try:
                if inflight is None or inflight.offset != offset:
                    inflight = self._send(offset)
                current, inflight = inflight, None
                part = self._partition_response(current)
                code = part.get("error_code", 0)
                if code == OFFSET_OUT_OF_RANGE and not current.replica:
                    # Raises OffsetOutOfRangeError, or a retriable error when ListOffsets says the offset does
                    # exist (a leader that just took over may answer so for a moment).
                    raise self._out_of_range(offset, current.node)
                if code:
                    raise error_for(code, topic=self.topic, partition=self.partition, broker=current.node)
            except KwireError as exc:
                inflight = None
                if current is not None and current.replica and self._back_to_leader(current, exc):
                    continue  # the leader is asked next, at once
                client.check_unknown_topic(exc, self.topic, self.partition)
                budget.what = f"fetching {self.topic}-{self.partition} at offset {offset}"
                budget.failed(exc, refresh_topics=[self.topic])
                continue

            if self._redirected(current, part):
                continue
            self.high_watermark = part.get("high_watermark", -1)
            self.last_stable_offset = part.get("last_stable_offset", -1)
            self.log_start_offset = part.get("log_start_offset", -1)
            limit = self.high_watermark
            if read_committed and self.last_stable_offset >= 0:
                limit = min(limit, self.last_stable_offset)
            records = part.get("records")
            nbytes = 0 if records is None else len(records)

            # Pipeline: ask for what follows the complete batches while this response is decoded.
            scanned = pipelined_offset(records, offset, self.end, limit, self.max_bytes)
            if scanned is not None:
                try:
                    inflight = self._send(scanned)
                except KwireError as exc:
                    if not is_retriable_error(exc):
                        raise
                    inflight = None  # the next loop iteration sends it again (with retries)

            new_position = offset
            if nbytes:
                aborted = part.get("aborted_transactions")
                if aborted is not None:
                    aborted = [(a["producer_id"], a["first_offset"]) for a in aborted]
                try:
                    decoded = decode_record_set(
                        records, start_offset=offset, end_offset=self.end, read_committed=read_committed,
                        aborted_transactions=aborted, include_headers=self.include_headers,
                        topic=self.topic, partition=self.partition,
                        max_decompressed_bytes=client.config.max_decompressed_bytes)
                except DecompressedSizeError as exc:
                    raise DecompressedSizeError(
                        exc.codec, exc.limit, f"{exc.where} (broker {current.node})",
                        "decompressed data per fetched partition. If batches this large are expected, raise "
                        "kwire.max.decompressed.bytes (the Spark option 'maxDecompressedBytes')") from exc
                new_position = max(offset, decoded.next_offset)
                if decoded.record_count:
                    self.records_read += decoded.record_count
                    self.position = new_position
                    budget.progressed()
                    stalls = 0
                    yield decoded
            if new_position > offset:
                self.position = new_position
                budget.progressed()
                stalls = 0
                self._redirects = 0
                self._replica_behind_since = None
                if self.position < self.end and limit >= 0 and self.position >= limit and not current.replica:
                    if self._limit_is_final(limit, budget):
                        self._stop_at_limit(limit, read_committed)
                        break
                continue

            # No progress at all.
            if limit >= 0 and offset >= limit:
                if current.replica:
                    self._replica_behind(current, limit)
                    continue
                if self._limit_is_final(limit, budget):
                    self._stop_at_limit(limit, read_committed)
                    break
                continue
            stalls += 1
            cap = min(client.config.max_response_bytes - (1 << 20), 2**31 - 1)
            if nbytes and self.max_bytes < cap:
                # Only a partial batch came back: the batch is larger than the fetch size. Ask for more.
                self.max_bytes = min(self.max_bytes * 4, cap)
                continue
            # Never refetch the same offset forever: back off, and give up when the retry budget is spent.
            budget.what = f"fetching {self.topic}-{self.partition} at offset {offset}"
            budget.failed(FetchStalledError(
                self.topic, self.partition, offset,
                f"{stalls} fetch(es) returned {nbytes} bytes and no complete batch (high watermark "
                f"{self.high_watermark}, last stable offset {self.last_stable_offset}, fetch size {self.max_bytes})"))
        if inflight is not None:
            inflight.pending = None  # its response is read and dropped by the connection's next reader

    def _back_to_leader(self, current: _InFlightFetch, exc: KwireError) -> bool:
        """A fetch from a replica failed or answered an error: read from the leader. True when the leader should
        be asked at once (the error is one the leader may not have), False to handle the error as usual."""
        leave_replica(self.client, self.topic, self.partition, current.node, str(exc))
        return is_retriable_error(exc) or getattr(exc, "code", None) == OFFSET_OUT_OF_RANGE

    def _replica_behind(self, current: _InFlightFetch, limit: int) -> None:
        """A replica's high watermark is behind the range: it learns the leader's one replication round trip later.
        Ask it again for up to fetch.max.wait.ms (at least retry.backoff.ms) since the first such answer was
        asked for, then read from the leader."""
        if self._replica_behind_since is None:
            self._replica_behind_since = current.sent_at
        config = self.client.config
        grace_s = max(config.fetch_max_wait_ms, config.retry_backoff_ms) / 1000
        if time.monotonic() - self._replica_behind_since >= grace_s:
            leave_replica(self.client, self.topic, self.partition, current.node,
                          f"its high watermark {limit} stayed behind offset {self.position} for {grace_s:.3f} s")

    def _redirected(self, current: _InFlightFetch, part: dict) -> bool:
        """True when the leader answered with a preferred read replica and no records: fetch from it next."""
        node = part.get("preferred_read_replica", -1)
        if node is None or node < 0 or node == current.node or part.get("records"):
            return False
        self._redirects += 1
        if self._redirects > MAX_REDIRECTS:
            leave_replica(self.client, self.topic, self.partition, node, f"{self._redirects} redirects without records")
        else:
            follow_redirect(self.client, self.topic, self.partition, node)
        return True

    def _stop_at_limit(self, limit: int, read_committed: bool) -> None:
        what = "last stable offset" if read_committed and limit == self.last_stable_offset else "high watermark"
        self._stop(f"{self.topic}-{self.partition} ends at offset {limit} ({what}) before the requested end "
                   f"{self.end}: offsets [{self.position}, {self.end}) do not exist (yet)")
