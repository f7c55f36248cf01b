"""Reading many small ranges with few requests: the first Fetch of each range, batched per leader.

A packed Spark task reads several offset ranges, mostly small ones. Fetching them one by one costs a
round trip each; here the first Fetch of a window of ranges goes out as one multi-partition request per
leader, and each range's :class:`~spark_kwire.client.consumer.fetcher.RangeReader` starts from its share of that
response. Anything but a clean answer for a partition (an error code, no records, a failed request) is
simply not handed over: the range's reader then fetches on its own, with its usual retries, leader
changes and end-of-partition checks. So batching changes how many requests are sent, never what is read.

At most two windows are in flight (the one being read and the next), each response bounded by
``fetch.max.bytes`` and ``max.partition.fetch.bytes`` per partition, as Kafka's consumer bounds them.
"""

from __future__ import annotations

import logging

from spark_kwire.client.errors import KwireError
from spark_kwire.client.consumer.offsets import isolation_code
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

    __slots__ = ("offset", "leader", "version", "pending", "topic_id")

    def __init__(self, offset: int, leader: int, version: int, body: dict, topic_id) -> None:
        self.offset = offset
        self.leader = leader
        self.version = version
        self.pending = _OneRangeResponse(body)
        self.topic_id = topic_id


class _WindowRequest:
    """One multi-partition Fetch in flight to one leader, and its answer split by partition once read."""

    def __init__(self, leader: int, version: int, pending, wanted: dict) -> None:
        self.leader, self.version, self.pending = leader, version, pending
        self.wanted = wanted          # (topic, partition) -> (fetch offset, topic id)
        self.names = {topic_id: topic for (topic, _p), (_o, topic_id) in wanted.items() if topic_id is not None}
        self.parts: dict | None = None

    def take(self, topic: str, partition: int, offset: int) -> PrefetchedPartition | None:
        entry = self.wanted.pop((topic, partition), None)
        if entry is None or entry[0] != offset:
            return None
        if self.parts is None:
            self.parts = self._split()
        part = self.parts.pop((topic, partition), None)
        if part is None or part.get("error_code", 0) or not part.get("records"):
            return None
        topic_id = entry[1]
        body = {"error_code": 0, "responses": [{"topic": topic, "topic_id": topic_id, "partitions": [part]}]}
        return PrefetchedPartition(offset, self.leader, self.version, body, topic_id)

    def _split(self) -> dict:
        try:
            body = self.pending.result()
        except KwireError as exc:
            log.debug("multi-partition fetch from broker %s failed (%s); its ranges fetch on their own",
                      self.leader, exc)
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
    """First Fetch of each of ``ranges`` (objects with topic, partition, start, end), batched per leader
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
        for request in self._requests.get(w, ()):
            if (r.topic, r.partition) in request.wanted:
                return request.take(r.topic, r.partition, r.start)
        return None

    def _send_window(self, w: int) -> list[_WindowRequest]:
        client = self.client
        by_leader: dict[int, list] = {}
        for r in self.ranges[w * self.window:(w + 1) * self.window]:
            if r.end <= r.start:
                continue
            try:
                leader = client.leader_for(r.topic, r.partition)
            except KwireError:
                continue  # no leader now: the range's reader waits for one on its own
            by_leader.setdefault(leader, []).append(r)
        requests = []
        for leader, group in by_leader.items():
            try:
                requests.append(self._send(leader, group))
            except KwireError as exc:
                log.debug("multi-partition fetch to broker %s not sent (%s)", leader, exc)
        return requests

    def _send(self, leader: int, group: list) -> _WindowRequest:
        client = self.client
        config = client.config
        conn = client.connection(leader)
        infos = {r.topic: client.topic_info(r.topic) for r in group}
        with_ids = all(info.topic_id is not None for info in infos.values())
        version = conn.version_for(m.FETCH, None if with_ids else 12)
        topics: dict[str, list] = {}
        wanted = {}
        seen = set()
        for r in group:
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
            wanted[(r.topic, r.partition)] = (r.start, infos[r.topic].topic_id)
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
            "rack_id": "",
        }
        timeout_ms = config.request_timeout_ms + config.fetch_max_wait_ms
        pending = conn.send(m.FETCH, body, version, timeout_ms=timeout_ms)
        self.requests_sent += 1
        return _WindowRequest(leader, version, pending, wanted)
