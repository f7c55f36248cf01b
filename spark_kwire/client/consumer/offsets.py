"""ListOffsets: offsets of partitions by spec (earliest, latest, max_timestamp, a timestamp).

``list_offsets(client, tps, spec)`` resolves a spec for many partitions at once, one request per partition
leader, retrying retriable errors within ``default.api.timeout.ms``.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from spark_kwire.client.errors import KwireError, UnsupportedVersionError, is_retriable_error
from spark_kwire.protocol import messages as m
from spark_kwire.protocol.errors import KafkaApiError, error_for

__all__ = ["list_offsets", "offset_spec", "isolation_code", "EARLIEST", "LATEST", "MAX_TIMESTAMP"]

EARLIEST = -2
LATEST = -1
MAX_TIMESTAMP = -3
_SPECS = {"earliest": EARLIEST, "latest": LATEST, "max_timestamp": MAX_TIMESTAMP}


def offset_spec(spec: Any) -> int:
    """Map "earliest"/"latest"/"max_timestamp"/an int timestamp (ms) to ListOffsets' timestamp field."""
    if isinstance(spec, str):
        key = spec.strip().lower()
        if key in _SPECS:
            return _SPECS[key]
        try:
            return int(key)
        except ValueError:
            raise ValueError(f"unknown offset spec {spec!r}: use 'earliest', 'latest', 'max_timestamp' or a "
                             f"timestamp in ms") from None
    if isinstance(spec, bool) or not isinstance(spec, int):
        raise ValueError(f"unknown offset spec {spec!r}: use 'earliest', 'latest', 'max_timestamp' or a timestamp in ms")
    if spec < MAX_TIMESTAMP:
        raise ValueError(f"unknown offset spec {spec}: negative values are -1 (latest), -2 (earliest), -3 (max_timestamp)")
    return spec


def isolation_code(client, isolation_level: str | None) -> int:
    """ListOffsets/Fetch isolation_level field: 0 read_uncommitted, 1 read_committed (default: the config)."""
    level = isolation_level or client.config.isolation_level
    if level not in ("read_uncommitted", "read_committed"):
        raise ValueError(f"isolation_level must be 'read_uncommitted' or 'read_committed', not {level!r}")
    return 1 if level == "read_committed" else 0


def list_offsets(client, tps: Iterable[tuple[str, int]], spec: Any = "latest", *,
                 isolation_level: str | None = None) -> dict[tuple[str, int], tuple[int, int]]:
    """``{(topic, partition): (offset, timestamp)}`` for each requested partition.

    ``spec`` is one value for all partitions or ``{(topic, partition): value}``; a value is "earliest",
    "latest" (under read_committed: the last stable offset), "max_timestamp" or a timestamp in ms (the
    earliest offset whose timestamp is >= it; ``(-1, -1)`` when there is none). Requests are grouped
    per partition leader and retried on retriable errors.
    """
    tps = [(str(t), int(p)) for t, p in tps]
    if isinstance(spec, Mapping):
        specs = {tp: offset_spec(spec[tp]) for tp in tps}
    else:
        value = offset_spec(spec)
        specs = {tp: value for tp in tps}
    isolation = isolation_code(client, isolation_level)
    result: dict[tuple[str, int], tuple[int, int]] = {}
    remaining = set(tps)
    topics = sorted({t for t, _ in tps})
    budget = client.retry_budget(f"ListOffsets for {len(tps)} partition(s) of {', '.join(topics[:3])}",
                                 client.api_budget_ms)
    while remaining:
        last_error: BaseException | None = None
        try:
            by_leader: dict[int, list[tuple[str, int]]] = {}
            for tp in sorted(remaining):
                try:
                    by_leader.setdefault(client.leader_for(*tp), []).append(tp)
                except KafkaApiError as exc:
                    if not exc.retriable:
                        raise
                    last_error = exc
            pending = []
            for leader, group in by_leader.items():
                try:
                    pending.append((leader, group, _send_list_offsets(client, leader, group, specs, isolation)))
                except KwireError as exc:
                    if not is_retriable_error(exc):
                        raise
                    last_error = exc
            for leader, group, (version, response) in pending:
                try:
                    body = response.result()
                except KwireError as exc:
                    if not is_retriable_error(exc):
                        raise
                    last_error = exc
                    continue
                for topic in body.get("topics") or ():
                    for part in topic.get("partitions") or ():
                        tp = (topic["name"], part["partition_index"])
                        if tp not in remaining:
                            continue
                        code = part.get("error_code", 0)
                        if code:
                            exc = error_for(code, topic=tp[0], partition=tp[1], broker=leader)
                            client.check_unknown_topic(exc, tp[0], tp[1])
                            if not exc.retriable:
                                raise exc
                            last_error = exc
                            continue
                        offset = part.get("offset", -1)
                        timestamp = part.get("timestamp", -1)
                        result[tp] = (offset, timestamp)
                        remaining.discard(tp)
            if remaining and last_error is None:
                last_error = KafkaApiError(5, topic=sorted(remaining)[0][0], partition=sorted(remaining)[0][1],
                                           error_message="partition missing from the ListOffsets response")
        except KwireError as exc:
            if not is_retriable_error(exc):
                raise
            last_error = exc
        if remaining:
            budget.failed(last_error, refresh_topics=sorted({t for t, _ in remaining}))
    return {tp: result[tp] for tp in tps}

def _send_list_offsets(client, leader: int, group: list[tuple[str, int]], specs, isolation: int):
    conn = client.connection(leader)
    version = conn.version_for(m.LIST_OFFSETS)
    if any(specs[tp] == MAX_TIMESTAMP for tp in group) and version < 7:
        raise UnsupportedVersionError(
            f"broker {leader} ({conn.address}) supports ListOffsets up to v{version}; max_timestamp needs v7")
    if isolation and version < 2:
        raise UnsupportedVersionError(f"broker {leader} does not support read_committed ListOffsets")
    topics: dict[str, list] = {}
    for topic, partition in group:
        epoch = client.partition_info(topic, partition).leader_epoch
        topics.setdefault(topic, []).append(
            {"partition_index": partition, "current_leader_epoch": epoch, "timestamp": specs[(topic, partition)]})
    body = {
        "replica_id": -1,
        "isolation_level": isolation,
        "topics": [{"name": t, "partitions": parts} for t, parts in topics.items()],
        "timeout_ms": client.config.request_timeout_ms,
    }
    return version, conn.send(m.LIST_OFFSETS, body, version)
