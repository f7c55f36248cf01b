"""Reading many small ranges with few requests: the first Fetch of each range, batched per broker.

A packed Spark task reads several offset ranges, mostly small ones. Fetching them one by one costs a
round trip each; here the first Fetch of a window of ranges goes out as one multi-partition request per
broker fetched from (the leader, or with ``client.rack`` the replica its leader prefers: partitions a leader
redirects go out again as one request per preferred replica), and each range's
:class:`~spark_kwire.client.consumer.fetcher.RangeReader` starts from its share of that response. Anything but
a clean answer for a partition (an error code, no records, a failed request) is simply not handed over: the
range's reader then fetches on its own, with its usual retries, leader changes and end-of-partition checks.
So batching changes how many requests are sent, never what is read.

At most two windows are in flight (the one being read and the next), each response bounded by
``fetch.max.bytes`` and ``max.partition.fetch.bytes`` per partition, as Kafka's consumer bounds them.
"""

from __future__ import annotations

import logging
import time
from typing import NamedTuple

from spark_kwire.client.errors import KwireError
from spark_kwire.client.consumer.offsets import isolation_code
from spark_kwire.client.consumer.read_replica import fetch_target, follow_redirect
from spark_kwire.protocol import messages as m

__all__ = ["PackedFetch", "PrefetchedPartition"]

log = logging.getLogger(__name__)

# Partitions per multi-partition Fetch request: a response then holds at most this many partitions'
# data (and never more than fetch.max.bytes).
WINDOW_PARTITIONS = 64


class _OneRangeResponse:
    """Looks like a PendingResponse whose body holds one partition of a shared multi-partition response."""

    __slots__ = ("_body",)

    def __init__(self, body: dict) -> None:
        self._body = body

    def result(self, timeout: float | None = None) -> dict:
        return self._body


class PrefetchedPartition:
    """The first Fetch of a range, already answered: what RangeReader takes in place of sending its own."""

    __slots__ = ("offset", "node", "version", "pending", "topic_id", "replica", "sent_at")

    def __init__(self, offset: int, node: int, version: int, body: dict, topic_id, replica: bool = False,
                 sent_at: float = 0.0) -> None:
        self.offset = offset
        self.node = node
        self.version = version
        self.pending = _OneRangeResponse(body)
        self.topic_id = topic_id
        self.replica = replica
        self.sent_at = sent_at


class _First(NamedTuple):
    """A range's first Fetch sent again, to the replica its leader named."""
    topic: str
    partition: int
    start: int


class _WindowRequest:
    """One multi-partition Fetch in flight to one broker, and its answer split by partition once read."""

    def __init__(self, node: int, version: int, pending, wanted: dict, *, follow_up: bool = False) -> None:
        self.node, self.version, self.pending = node, version, pending
        self.sent_at = time.monotonic()
        self.wanted = wanted          # (topic, partition) -> (fetch offset, topic id, from a replica?)
        self.names = {entry[1]: topic for (topic, _p), entry in wanted.items() if entry[1] is not None}
        self.parts: dict | None = None
        self.follow_up = follow_up    # sent to the replicas a leader named: not redirected again
        self.redirected: dict = {}    # (topic, partition) -> preferred read replica named by the leader

    def split(self) -> None:
        """Read the answer: each partition's share, and the partitions the leader sent to another replica."""
        self.parts = self._split()
        for key, part in self.parts.items():
            node = part.get("preferred_read_replica", -1)
            if node is not None and node >= 0 and node != self.node and not part.get("records") \
                    and key in self.wanted:
                self.redirected[key] = node

    def take(self, topic: str, partition: int, offset: int) -> PrefetchedPartition | None:
        entry = self.wanted.pop((topic, partition), None)
        if entry is None or entry[0] != offset:
            return None
        if self.parts is None:
            self.split()
        part = self.parts.pop((topic, partition), None)
        if part is None or part.get("error_code", 0) or not part.get("records"):
            return None
        topic_id = entry[1]
        body = {"error_code": 0, "responses": [{"topic": topic, "topic_id": topic_id, "partitions": [part]}]}
        return PrefetchedPartition(offset, self.node, self.version, body, topic_id, entry[2], self.sent_at)

    def _split(self) -> dict:
        try:
            body = self.pending.result()
        except KwireError as exc:
            log.debug("multi-partition fetch from broker %s failed (%s); its ranges fetch on their own",
                      self.node, exc)
            return {}
        finally:
            self.pending = None
        if body.get("error_code", 0):
            return {}
        result = {}
        for topic in body.get("responses") or ():
            name = topic.get("topic") if self.version < 13 else self.names.get(topic.get("topic_id"))
            for part in topic.get("partitions") or ():
                result[(name, part.get("partition_index"))] = part
        return result


class PackedFetch:
    """First Fetch of each of ``ranges`` (objects with topic, partition, start, end), batched per broker
    in windows of consecutive ranges, one window read ahead. ``first_fetch(i)`` gives range i's share."""

    def __init__(self, client, ranges, *, isolation_level: str | None = None,
                 window: int = WINDOW_PARTITIONS) -> None:
        self.client = client
        self.ranges = list(ranges)
        self.window = max(1, int(window))
        self.isolation = isolation_code(client, isolation_level)
        self._requests: dict[int, list[_WindowRequest]] = {}
        self.requests_sent = 0

    def first_fetch(self, index: int) -> PrefetchedPartition | None:
        w = index // self.window
        for old in [k for k in self._requests if k < w]:
            del self._requests[old]  # release what earlier ranges left unread
        for ahead in (w, w + 1):
            if ahead not in self._requests and ahead * self.window < len(self.ranges):
                self._requests[ahead] = self._send_window(ahead)
        r = self.ranges[index]
        key = (r.topic, r.partition)
        requests = self._requests.get(w, [])
        for request in requests:  # follow-ups appended to `requests` below are visited too
            if key not in request.wanted:
                continue
            if request.parts is None:
                request.split()
                if request.redirected and not request.follow_up:
                    requests.extend(self._follow_redirects(request))
            if key in request.redirected:
                request.wanted.pop(key)
                continue
            return request.take(r.topic, r.partition, r.start)
        return None

    def _follow_redirects(self, request: _WindowRequest) -> list[_WindowRequest]:
        """Send the partitions a leader redirected again, as one request per preferred read replica."""
        firsts = []
        for (topic, partition), node in request.redirected.items():
            follow_redirect(self.client, topic, partition, node)
            firsts.append(_First(topic, partition, request.wanted[(topic, partition)][0]))
        return self._send_grouped(firsts, follow_up=True)

    def _send_window(self, w: int) -> list[_WindowRequest]:
        return self._send_grouped([r for r in self.ranges[w * self.window:(w + 1) * self.window] if r.end > r.start])

    def _send_grouped(self, ranges, *, follow_up: bool = False) -> list[_WindowRequest]:
        client = self.client
        by_target: dict[tuple[int, str], list] = {}
        for r in ranges:
            try:
                target = fetch_target(client, r.topic, r.partition)
            except KwireError:
                continue  # no leader now: the range's reader waits for one on its own
            by_target.setdefault((target.node, target.rack_id), []).append((r, target.replica))
        requests = []
        for (node, rack_id), group in by_target.items():
            try:
                requests.append(self._send(node, rack_id, group, follow_up))
            except KwireError as exc:
                log.debug("multi-partition fetch to broker %s not sent (%s)", node, exc)
        return requests

    def _send(self, node: int, rack_id: str, group: list, follow_up: bool) -> _WindowRequest:
        client = self.client
        config = client.config
        conn = client.connection(node)
        infos = {r.topic: client.topic_info(r.topic) for r, _ in group}
        with_ids = all(info.topic_id is not None for info in infos.values())
        version = conn.version_for(m.FETCH, None if with_ids else 12)
        topics: dict[str, list] = {}
        wanted = {}
        seen = set()
        for r, replica in group:
            if (r.topic, r.partition) in seen:
                continue  # two pieces of one partition: only the first is prefetched
            seen.add((r.topic, r.partition))
            part = client.partition_info(r.topic, r.partition)
            topics.setdefault(r.topic, []).append({
                "partition": r.partition,
                "current_leader_epoch": part.leader_epoch,
                "fetch_offset": r.start,
                "last_fetched_epoch": -1,
                "log_start_offset": -1,
                "partition_max_bytes": config.max_partition_fetch_bytes,
            })
            wanted[(r.topic, r.partition)] = (r.start, infos[r.topic].topic_id, replica)
        body = {
            "replica_id": -1,
            "max_wait_ms": config.fetch_max_wait_ms,
            "min_bytes": config.fetch_min_bytes,
            "max_bytes": config.fetch_max_bytes,
            "isolation_level": self.isolation,
            "session_id": 0,
            "session_epoch": -1,
            "topics": [{"topic": t, **({"topic_id": infos[t].topic_id} if version >= 13 else {}), "partitions": parts}
                       for t, parts in topics.items()],
            "forgotten_topics_data": [],
            "rack_id": rack_id,
        }
        timeout_ms = config.request_timeout_ms + config.fetch_max_wait_ms
        pending = conn.send(m.FETCH, body, version, timeout_ms=timeout_ms)
        self.requests_sent += 1
        return _WindowRequest(node, version, pending, wanted, follow_up=follow_up)
