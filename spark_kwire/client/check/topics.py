"""Step 6: the topics named (``subscribe``, ``assign``, ``subscribePattern``; ``topic`` for writes): they exist,
their partitions and leaders, and what the principal may do with each (Metadata's authorized operations, KIP-430),
so that "may describe, may not read" shows before a query fails."""

from __future__ import annotations

import re

from spark_kwire.client.check.brokers import request_metadata
from spark_kwire.client.check.context import CheckRun, Stopwatch
from spark_kwire.client.check.rows import TOPIC, TOPIC_ACCESS
from spark_kwire.client.core.connection import BrokerConnection
from spark_kwire.client.core.metadata import ClusterMetadata, TopicInfo
from spark_kwire.protocol.errors import KwireError, error_info

__all__ = ["check_topics", "OPERATIONS", "allowed_operations", "MAX_MATCHED_TOPICS"]

#: Kafka's AclOperation codes: bit n of the authorized-operations field allows operation n.
OPERATIONS = {3: "READ", 4: "WRITE", 5: "CREATE", 6: "DELETE", 7: "ALTER", 8: "DESCRIBE", 10: "DESCRIBE_CONFIGS",
              11: "ALTER_CONFIGS"}
READ, WRITE = 3, 4
NOT_REPORTED = -2147483648
UNKNOWN_TOPIC_OR_PARTITION, TOPIC_AUTHORIZATION_FAILED = 3, 29
MAX_MATCHED_TOPICS = 50


def allowed_operations(bits: int) -> list[str]:
    return [name for code, name in OPERATIONS.items() if bits & (1 << code)]


def named_topics(run: CheckRun) -> list[str]:
    """The topics named exactly (read ones, then written ones)."""
    selection = run.settings.topics
    return list(dict.fromkeys(selection.names + selection.written))


def _principal(conn: BrokerConnection) -> str:
    session = conn.sasl_session
    if session is not None:
        return f"principal {session.principal!r}"
    if conn.config.security_protocol == "SSL":
        return "the connection's principal (its client certificate's name, or ANONYMOUS)"
    return "the connection's principal (ANONYMOUS without SASL)"


def _leaders(info: TopicInfo, metadata: ClusterMetadata) -> tuple[str, list[int]]:
    """A text naming each leader and its partitions, and the partitions without a leader."""
    by_leader: dict[int, list[int]] = {}
    for part in info.partitions.values():
        by_leader.setdefault(part.leader, []).append(part.partition)
    leaderless = sorted(by_leader.pop(-1, []))
    text = "; ".join(f"broker {leader}" + (f" at {metadata.brokers[leader].address}" if leader in metadata.brokers
                                            else "") + f" leads {', '.join(map(str, sorted(parts)))}"
                     for leader, parts in sorted(by_leader.items()))
    return text, leaderless


def _topic_rows(run: CheckRun, name: str, raw: dict | None, info: TopicInfo | None, metadata: ClusterMetadata,
                principal: str, ms: float, brokers_passed: dict[int, bool]) -> bool:
    """Report one topic; True when it may be read (for the throughput step)."""
    selection = run.settings.topics
    target = f"topic {name}"
    read = name in selection.names or (selection.pattern is not None and name not in selection.written)
    written = name in selection.written
    code = raw.get("error_code", 0) if raw is not None else UNKNOWN_TOPIC_OR_PARTITION
    if code == UNKNOWN_TOPIC_OR_PARTITION or info is None and code == 0:
        if read:
            run.fail(TOPIC, target, "does not exist", "topic_missing", ms)
        else:
            run.warn(TOPIC, target, "does not exist; a write creates it only where the brokers set "
                                    "auto.create.topics.enable=true", "topic_missing", ms)
        run.blocked([TOPIC_ACCESS], target, f"{TOPIC} failed")
        return False
    if code == TOPIC_AUTHORIZATION_FAILED:
        run.fail(TOPIC, target, f"TOPIC_AUTHORIZATION_FAILED: {principal} may not describe it", "topic_describe_denied",
                 ms)
        run.blocked([TOPIC_ACCESS], target, f"{TOPIC} failed")
        return False
    if code and (info is None or not info.partitions):
        run.fail(TOPIC, target, f"Metadata answered {error_info(code).name}", "partition_no_leader", ms)
        run.blocked([TOPIC_ACCESS], target, f"{TOPIC} failed")
        return False
    leaders, leaderless = _leaders(info, metadata)
    first = info.partitions[min(info.partitions)]
    detail = (f"{len(info.partitions)} partition(s), replication factor {len(first.replicas)}; {leaders}")
    missing = sorted({p for t, p in selection.assignment if t == name} - set(info.partitions))
    if missing:
        run.fail(TOPIC, target, f"{detail}; assign names partition(s) {', '.join(map(str, missing))}, which the "
                                f"topic does not have", "partition_missing", ms)
    elif leaderless:
        run.warn(TOPIC, target, f"{detail}; partition(s) {', '.join(map(str, leaderless))} have no leader",
                 "partition_no_leader", ms)
    elif failed := sorted({p.leader for p in info.partitions.values() if not brokers_passed.get(p.leader, True)}):
        run.warn(TOPIC, target, f"{detail}; the connection steps of broker(s) {', '.join(map(str, failed))} failed "
                                f"from this host (see their rows)", "leader_unreachable", ms)
    else:
        run.ok(TOPIC, target, detail, ms)
    bits = raw.get("topic_authorized_operations", NOT_REPORTED)
    if bits == NOT_REPORTED:
        run.skipped(TOPIC_ACCESS, target, "the broker does not report authorized operations (Metadata v8+, Kafka "
                                          "2.3 and later)")
        return read
    allowed = allowed_operations(bits)
    shown = ", ".join(allowed) or "nothing"
    lacking = [name for code, name, needed in ((READ, "READ", read), (WRITE, "WRITE", written))
               if needed and not bits & (1 << code)]
    if lacking:
        kind = "topic_read_denied" if "READ" in lacking else "topic_write_denied"
        run.fail(TOPIC_ACCESS, target, f"{principal} may {shown}; not {', not '.join(lacking)}", kind)
        return False
    run.ok(TOPIC_ACCESS, target, f"{principal} may {shown}")
    return read


def check_topics(run: CheckRun, conn: BrokerConnection, metadata: ClusterMetadata,
                 brokers_passed: dict[int, bool]) -> dict[str, TopicInfo]:
    """Report the named topics; {name: TopicInfo} of those that may be read. ``brokers_passed`` says which brokers
    passed their connection steps (a topic led by one that did not gets a warning)."""
    selection = run.settings.topics
    if not selection:
        run.skipped(TOPIC, "topics", "no topic named (subscribe, subscribePattern, assign or topic)")
        return {}
    names = named_topics(run)
    watch = Stopwatch()
    try:
        body, _ = request_metadata(run, conn, None if selection.pattern is not None else names)
    except KwireError as exc:
        for name in names or ["topics"]:
            run.fail(TOPIC, f"topic {name}" if names else name, f"Metadata request failed: {exc}",
                     "metadata_failed", watch.ms)
        return {}
    ms = watch.ms
    raw = {t.get("name"): t for t in body.get("topics") or () if t.get("name")}
    infos = ClusterMetadata()
    infos.merge(body, None)
    infos.brokers = metadata.brokers
    if selection.pattern is not None:
        matched = sorted(n for n, t in infos.topics.items() if not t.is_internal
                         and re.fullmatch(selection.pattern, n) and n not in names)
        target = f"subscribePattern {selection.pattern}"
        if not matched:
            run.warn(TOPIC, target, "matches no topic", "pattern_matches_nothing", ms)
        else:
            more = f" (checking the first {MAX_MATCHED_TOPICS})" if len(matched) > MAX_MATCHED_TOPICS else ""
            run.ok(TOPIC, target, f"matches {len(matched)} topic(s){more}: {', '.join(matched[:10])}"
                                  f"{', ...' if len(matched) > 10 else ''}", ms)
        names = names + matched[:MAX_MATCHED_TOPICS]
    principal = _principal(conn)
    readable = {}
    for name in names:
        if _topic_rows(run, name, raw.get(name), infos.topics.get(name), infos, principal, ms, brokers_passed):
            readable[name] = infos.topics[name]
    return readable
