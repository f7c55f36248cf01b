"""Step 8, with ``checkThroughput=true``: a short fetch from each topic's leaders, in bytes per second from this
host. The record batches are fetched as the brokers store them (compressed or not) and not decoded: the figure is
what the network from this host to each leader carries, not what decoding costs. Each leader gets at most
:data:`FETCH_SECONDS` (or the step timeout) and :data:`MAX_BYTES`, from the partitions' earliest offsets."""

from __future__ import annotations

from spark_kwire.client.check.context import CheckRun, Stopwatch
from spark_kwire.client.check.rows import THROUGHPUT
from spark_kwire.client.consumer.fetcher import scan_next_offset
from spark_kwire.client.consumer.offsets import list_offsets
from spark_kwire.client.core.kafka_client import KafkaClient
from spark_kwire.client.core.metadata import ClusterMetadata, TopicInfo
from spark_kwire.protocol import messages as m
from spark_kwire.protocol.errors import KwireError, error_for

__all__ = ["check_throughput", "FETCH_SECONDS", "MAX_BYTES"]

FETCH_SECONDS = 2.0
MAX_BYTES = 256 * 1024 * 1024
_PARTITION_BYTES = 4 * 1024 * 1024


def _fetch_body(topic: str, info: TopicInfo, positions: dict[int, int], version: int) -> dict:
    partitions = [{"partition": p, "current_leader_epoch": info.partitions[p].leader_epoch, "fetch_offset": offset,
                   "last_fetched_epoch": -1, "log_start_offset": -1, "partition_max_bytes": _PARTITION_BYTES}
                  for p, offset in positions.items()]
    entry = {"topic": topic, "topic_id": info.topic_id, "partitions": partitions}
    if version < 13:
        del entry["topic_id"]
    return {"replica_id": -1, "max_wait_ms": 100, "min_bytes": 1, "max_bytes": 64 * 1024 * 1024,
            "isolation_level": 0, "session_id": 0, "session_epoch": -1, "topics": [entry],
            "forgotten_topics_data": [], "rack_id": ""}


def _measure(run: CheckRun, client: KafkaClient, topic: str, info: TopicInfo, leader: int,
             partitions: list[int]) -> tuple[int, float, int]:
    """(bytes fetched, seconds, partitions read) from ``leader``."""
    tps = [(topic, p) for p in partitions]
    starts = {p: off for (_, p), (off, _) in list_offsets(client, tps, "earliest").items()}
    ends = {p: off for (_, p), (off, _) in list_offsets(client, tps, "latest").items()}
    positions = {p: starts[p] for p in partitions if starts[p] < ends[p]}
    read = len(positions)
    conn = client.connection(leader)
    version = conn.version_for(m.FETCH, None if info.topic_id is not None else 12)
    budget = min(FETCH_SECONDS, run.step_timeout_s())
    total = 0
    watch = Stopwatch()
    while positions and total < MAX_BYTES and watch.ms < budget * 1000:
        body = conn.request(m.FETCH, _fetch_body(topic, info, positions, version), version,
                            timeout_ms=max(1, int(run.step_timeout_s() * 1000)))
        if body.get("error_code"):
            raise error_for(body["error_code"], topic=topic, broker=leader)
        for answer in body.get("responses") or ():
            for part in answer.get("partitions") or ():
                p = part["partition_index"]
                if part.get("error_code"):
                    raise error_for(part["error_code"], topic=topic, partition=p, broker=leader)
                records = part.get("records")
                total += len(records) if records else 0
                following = scan_next_offset(records)
                if p in positions and (following is None or following <= positions[p] or following >= ends[p]):
                    del positions[p]
                elif p in positions:
                    positions[p] = following
    return total, watch.ms / 1000.0, read


def check_throughput(run: CheckRun, topics: dict[str, TopicInfo], metadata: ClusterMetadata,
                     brokers_passed: dict[int, bool]) -> None:
    """Report a short fetch from each leader of each readable topic."""
    if not run.settings.throughput:
        run.skipped(THROUGHPUT, "topics", "checkThroughput is not set")
        return
    if not topics:
        run.skipped(THROUGHPUT, "topics", "not run: no topic passed the topic and topic_access steps")
        return
    with KafkaClient(run.client_config()) as client:
        for topic, info in topics.items():
            by_leader: dict[int, list[int]] = {}
            for part in info.partitions.values():
                if part.leader >= 0:
                    by_leader.setdefault(part.leader, []).append(part.partition)
            for leader, partitions in sorted(by_leader.items()):
                broker = metadata.brokers.get(leader)
                address = broker.address if broker is not None else "(not in the metadata)"
                target = f"topic {topic} from broker {leader} {address}"
                if run.out_of_time:
                    run.blocked([THROUGHPUT], target, run.out_of_time_reason)
                    continue
                if not brokers_passed.get(leader, False):
                    run.blocked([THROUGHPUT], target, f"the connection steps of broker {leader} failed")
                    continue
                watch = Stopwatch()
                try:
                    total, seconds, read = _measure(run, client, topic, info, leader, sorted(partitions))
                except KwireError as exc:
                    run.fail(THROUGHPUT, target, str(exc), "throughput_failed", watch.ms)
                    continue
                if total == 0:
                    run.ok(THROUGHPUT, target, f"the {len(partitions)} partition(s) it leads hold no records: "
                                               f"nothing to measure", watch.ms)
                    continue
                rate = total / max(seconds, 1e-6)
                run.ok(THROUGHPUT, target, f"{total / 1e6:.2f} MB of record batches from {read} partition(s) in "
                                           f"{seconds:.2f} s: {rate / 1e6:.1f} MB/s", watch.ms)
