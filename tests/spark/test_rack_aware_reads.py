"""Rack-aware reads (`kafka.client.rack`, KIP-392) on one 3-broker KRaft cluster, measured by the brokers
themselves: the record bytes each served to consumers (JMX BytesOutPerSec per topic, read with Kafka's JmxTool),
kwire beside Spark's built-in source with the same rack.

Brokers 1, 2, 3 sit in racks az-a, az-b, az-c; the client is in az-a. Brokers 1 and 2 run the rack-aware replica
selector, broker 3 does not: a partition led by broker 3 shows what a reader meets on brokers not set up for
rack-aware reads. Topics have a replica on every rack (RF 3) and their leaders elsewhere than az-a (broker 2
unless said otherwise), so reading from the local replica means reading from a follower. Producers use acks=all
with the whole replica set in sync, so followers hold every record before a read starts.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import NamedTuple

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from harness import KafkaCluster
from harness.broker_metrics import consumer_bytes_out
from spark_kwire.client import KafkaClient, fetch_range, list_offsets
from spark_kwire.client.consumer.packed_fetch import PackedFetch
from spark_kwire.client.consumer.read_replica import planned_read_node
from tests.faults.scenarios import FAST_FAILOVER, unique_topic, wait_healthy

CLIENT_RACK = "az-a"
LOCAL = 1  # the broker in the client's rack
SELECTOR = {"replica.selector.class": "org.apache.kafka.common.replica.RackAwareReplicaSelector"}
BROKERS = {1: {"broker.rack": "az-a", **SELECTOR}, 2: {"broker.rack": "az-b", **SELECTOR}, 3: {"broker.rack": "az-c"}}
LED_BY_2 = [[2, 3, 1], [2, 1, 3], [2, 3, 1]]
MIN_LOCAL_SHARE = 0.95


@pytest.fixture(scope="module")
def racks():
    with KafkaCluster(3, extra_properties=FAST_FAILOVER, node_properties=BROKERS, jmx=True) as cluster:
        yield cluster


def create(cluster, assignment, prefix="rack", **config) -> str:
    """A topic with ``assignment`` (its first replica leads), once every replica is in sync."""
    name = unique_topic(prefix)
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    futures = admin.create_topics([NewTopic(name, num_partitions=len(assignment), replication_factor=-1,
                                            replica_assignment=assignment,
                                            config={"min.insync.replicas": "2", **config})])
    futures[name].result(60)
    deadline = time.monotonic() + 60
    with KafkaClient({"bootstrap.servers": cluster.bootstrap_servers}) as client:
        while True:
            parts = client.describe_topics([name])[name].partitions
            if all(parts[p].leader == a[0] and set(parts[p].isr) == set(a) for p, a in enumerate(assignment)):
                return name
            assert time.monotonic() < deadline, f"{name}: leaders and ISR not as assigned: {parts}"
            time.sleep(0.2)


def value(partition: int, i: int) -> bytes:
    return (f"{partition}-{i}:" * 16).encode()


def produce(cluster, topic, partitions, count, *, start=0, **config) -> None:
    # idempotent: a request retried under load must not land after later ones (the tests expect key i at offset i)
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all", "linger.ms": 20,
                         "enable.idempotence": True, **config})
    for p in range(partitions):
        for i in range(start, start + count):
            producer.produce(topic, key=f"{p}-{i}".encode(), value=value(p, i), partition=p)
            if i % 1000 == 0:
                producer.poll(0)
    assert producer.flush(60) == 0


class Meter:
    """Record bytes each broker served to consumers of one topic since the last reading (one JmxTool run per
    broker and reading)."""

    def __init__(self, cluster, topic: str) -> None:
        self.cluster, self.topic = cluster, topic
        self.last = consumer_bytes_out(cluster, topic)

    def since_last(self) -> dict[int, int]:
        now = consumer_bytes_out(self.cluster, self.topic)
        delta = {n: now.get(n, 0) - self.last.get(n, 0) for n in now}
        self.last = now
        return delta


def share(by_broker: dict, node: int) -> float:
    total = sum(by_broker.values())
    assert total > 0, f"the brokers served nothing: {by_broker}"
    return by_broker.get(node, 0) / total


def report(what: str, by_broker: dict, seconds: float | None = None) -> None:
    total = sum(by_broker.values()) or 1
    shares = ", ".join(f"broker {n}: {b} B ({b / total:.1%})" for n, b in sorted(by_broker.items()))
    print(f"\n{what}: {shares}" + (f", {seconds:.2f} s" if seconds is not None else ""))


# batches of ~16 KiB: a read in 64 KiB fetches takes dozens of them, so a fault lands in the middle
SMALL_BATCHES = {"batch.size": 16384}


def rack_client(cluster) -> KafkaClient:
    return KafkaClient({"bootstrap.servers": cluster.bootstrap_servers, "client.rack": CLIENT_RACK,
                        "retry.backoff.max.ms": "200"})


def batch_rows(spark, source, cluster, topic, **options):
    reader = (spark.read.format(source).option("kafka.bootstrap.servers", cluster.bootstrap_servers)
              .option("subscribe", topic).option("startingOffsets", "earliest").option("endingOffsets", "latest"))
    started = time.monotonic()
    rows = reader.options(**options).load().select("partition", "offset", "key", "value").collect()
    return sorted((r.partition, r.offset, bytes(r.key), bytes(r.value)) for r in rows), time.monotonic() - started


@pytest.fixture(scope="module")
def topic_a(racks):
    topic = create(racks, LED_BY_2)
    produce(racks, topic, 3, 4000)
    return topic, Meter(racks, topic)


def test_batch_reads_come_from_the_local_replica_as_with_sparks_source(spark, racks, topic_a):
    topic_a, meter = topic_a
    rack = {"kafka.client.rack": CLIENT_RACK}
    expected = sorted((p, i, f"{p}-{i}".encode(), value(p, i)) for p in range(3) for i in range(4000))
    reads = {
        "kwire (packed tasks)": ("kwire", rack),
        "kwire (unpacked, minPartitions=6)": ("kwire", {**rack, "minPartitions": "6"}),
        "Spark's kafka source": ("kafka", rack),
    }
    for what, (source, options) in reads.items():
        rows, seconds = batch_rows(spark, source, racks, topic_a, **options)
        by_broker = meter.since_last()
        report(f"batch read, client.rack={CLIENT_RACK}, {what}", by_broker, seconds)
        assert rows == expected, what
        assert share(by_broker, LOCAL) >= MIN_LOCAL_SHARE, (what, by_broker)


def test_without_client_rack_reads_go_to_the_leaders(spark, racks, topic_a):
    topic_a, meter = topic_a
    rows, seconds = batch_rows(spark, "kwire", racks, topic_a)
    by_broker = meter.since_last()
    report("batch read without client.rack, kwire", by_broker, seconds)
    assert len(rows) == 12_000
    assert by_broker[LOCAL] == 0 and share(by_broker, 2) >= MIN_LOCAL_SHARE, by_broker


class Range(NamedTuple):
    topic: str
    partition: int
    start: int
    end: int


def test_packed_first_fetches_go_to_the_local_replica_as_one_request(racks, topic_a):
    """A packed task's first Fetches go to the leader as one request; the partitions it redirects go again as one
    request to the replica it named, and the ranges start from that answer. Once the replicas are known, the next
    task's first Fetches go to the replica at once. Planning groups the ranges by the in-rack replica too."""
    topic, _ = topic_a
    ranges = [Range(topic, p, 0, 4000) for p in range(3)]
    with rack_client(racks) as client:
        assert [planned_read_node(client, topic, p) for p in range(3)] == [LOCAL] * 3
        first = PackedFetch(client, ranges)
        answers = [first.first_fetch(i) for i in range(3)]
        assert first.requests_sent == 2  # to the leader, then the redirected partitions to broker 1
        assert [(a.node, a.replica) for a in answers] == [(LOCAL, True)] * 3
        for r, answer in zip(ranges, answers):
            reader = fetch_range(client, r.topic, r.partition, r.start, r.end, prefetched=answer)
            assert [o for b in reader for o in b.offset.tolist()] == list(range(4000))
        again = PackedFetch(client, ranges)
        assert [again.first_fetch(i).node for i in range(3)] == [LOCAL] * 3 and again.requests_sent == 1
    with KafkaClient({"bootstrap.servers": racks.bootstrap_servers}) as client:
        assert [planned_read_node(client, topic, p) for p in range(3)] == [2] * 3


def test_read_committed_reads_the_local_replicas_last_stable_offset(spark, racks):
    topic = create(racks, LED_BY_2[:2], prefix="rack-txn")
    producer = Producer({"bootstrap.servers": racks.bootstrap_servers, "transactional.id": topic, "linger.ms": 5})
    producer.init_transactions(30)
    for outcome, count in [("commit", 1500), ("abort", 700), ("commit", 1000)]:
        producer.begin_transaction()
        for i in range(count):
            producer.produce(topic, key=f"{outcome}-{i}".encode(), value=value(0, i), partition=i % 2)
        producer.flush(30)
        (producer.commit_transaction if outcome == "commit" else producer.abort_transaction)(30)
    options = {"kafka.client.rack": CLIENT_RACK, "kafka.isolation.level": "read_committed"}
    results, meter = {}, Meter(racks, topic)
    for source in ("kwire", "kafka"):
        rows, seconds = batch_rows(spark, source, racks, topic, **options)
        by_broker = meter.since_last()
        report(f"read_committed batch read, client.rack={CLIENT_RACK}, {source}", by_broker, seconds)
        assert share(by_broker, LOCAL) >= MIN_LOCAL_SHARE, (source, by_broker)
        results[source] = rows
    assert results["kwire"] == results["kafka"]
    assert sorted(r[2] for r in results["kwire"]) == sorted(
        [f"commit-{i}".encode() for i in range(1500)] + [f"commit-{i}".encode() for i in range(1000)])


def test_a_leader_without_the_rack_aware_selector_serves_itself(spark, racks):
    """`kafka.client.rack` against brokers not set up for it: the leader (broker 3) names no preferred replica,
    so the rows come from it, as they do for Spark's source."""
    topic = create(racks, [[3, 1, 2], [3, 2, 1]], prefix="rack-noselector")
    produce(racks, topic, 2, 2000)
    results, meter = {}, Meter(racks, topic)
    for source in ("kwire", "kafka"):
        rows, seconds = batch_rows(spark, source, racks, topic, **{"kafka.client.rack": CLIENT_RACK})
        by_broker = meter.since_last()
        report(f"batch read, leader without the selector, client.rack={CLIENT_RACK}, {source}", by_broker, seconds)
        assert share(by_broker, 3) >= MIN_LOCAL_SHARE, (source, by_broker)
        results[source] = rows
    assert results["kwire"] == results["kafka"] and len(results["kwire"]) == 4000


def test_stream_reads_from_the_local_replica(spark, racks, tmp_path):
    topic = create(racks, LED_BY_2[:2], prefix="rack-stream")
    produce(racks, topic, 2, 3000)
    name = topic.replace("-", "_")

    def run():
        query = (spark.readStream.format("kwire").option("kafka.bootstrap.servers", racks.bootstrap_servers)
                 .option("subscribe", topic).option("startingOffsets", "earliest")
                 .option("kafka.client.rack", CLIENT_RACK).load().select("partition", "offset", "value")
                 .writeStream.format("memory").queryName(name).option("checkpointLocation", str(tmp_path / "cp"))
                 .trigger(processingTime="500 milliseconds").start())
        try:
            deadline = time.monotonic() + 120
            while not any(p["numInputRows"] for p in query.recentProgress):
                assert time.monotonic() < deadline and query.exception() is None, query.exception()
                time.sleep(0.2)
            produce(racks, topic, 2, 3000, start=3000)  # read by later micro-batches, while they are written
            while spark.sql(f"select count(*) from {name}").first()[0] < 12_000:
                assert time.monotonic() < deadline and query.exception() is None, query.exception()
                time.sleep(0.3)
            time.sleep(1.0)  # a duplicate would show up in a batch after the last one
        finally:
            query.stop()
        return spark.sql(f"select partition, offset, value from {name}").collect()

    meter = Meter(racks, topic)
    rows = run()
    by_broker = meter.since_last()
    report(f"stream, client.rack={CLIENT_RACK}, kwire", by_broker)
    assert sorted((r.partition, r.offset, bytes(r.value)) for r in rows) == [
        (p, i, value(p, i)) for p in range(2) for i in range(6000)]
    assert share(by_broker, LOCAL) >= MIN_LOCAL_SHARE, by_broker


# -- the client alone: a lagging follower, and brokers killed mid-read -------------------------------------------

def read_exactly(client, topic, end, *, max_bytes=64 * 1024, midway=None):
    """Offsets and values of [0, end) of partition 0, in small fetches; ``midway()`` is called once a third is
    read. Checks every record came exactly once and the range did not end early."""
    reader = fetch_range(client, topic, 0, 0, end, max_bytes=max_bytes)
    got = []
    for batch in reader:
        got.extend(zip(batch.offset.tolist(), batch.value.to_pylist()))
        if midway is not None and len(got) >= end // 3:
            midway()
            midway = None
    assert midway is None, "the read ended before the fault"
    assert not reader.stopped_early, reader.stop_reason
    assert got == [(i, value(0, i)) for i in range(end)]
    return reader


def test_ranges_ending_at_the_latest_offset_are_read_exactly_while_a_producer_writes(racks):
    """A stream's ranges end at the leader's high watermark of a moment ago; the follower learns it one replication
    round trip later. With fetch.max.wait.ms=0 the follower answers at once, often before that: every range must
    still come back whole, never cut short (the follower's high watermark is not the partition's end)."""
    topic = create(racks, [[2, 1, 3]], prefix="rack-tail")
    stop = threading.Event()
    sent = []

    def write():
        producer = Producer({"bootstrap.servers": racks.bootstrap_servers, "acks": "all", "linger.ms": 2})
        i = 0
        while not stop.is_set():
            producer.produce(topic, key=f"0-{i}".encode(), value=value(0, i), partition=0)
            i += 1
            if i % 20 == 0:
                producer.poll(0)
                time.sleep(0.002)
        assert producer.flush(30) == 0
        sent.append(i)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    seconds, leader_only = [], 0
    try:
        with KafkaClient({"bootstrap.servers": racks.bootstrap_servers, "client.rack": CLIENT_RACK,
                          "fetch.max.wait.ms": "0"}) as client:
            tp = (topic, 0)
            position = 0
            deadline = time.monotonic() + 60
            while len(seconds) < 30:  # ranges with records in them
                assert time.monotonic() < deadline, f"{len(seconds)} ranges with records in 60 s"
                time.sleep(0.02)
                end = list_offsets(client, [tp], "latest")[tp][0]
                if end == position:
                    continue
                started = time.monotonic()
                reader = fetch_range(client, topic, 0, position, end)
                got = [(o, v) for batch in reader for o, v in zip(batch.offset.tolist(), batch.value.to_pylist())]
                seconds.append(time.monotonic() - started)
                assert not reader.stopped_early, reader.stop_reason
                assert got == [(i, value(0, i)) for i in range(position, end)]
                leader_only += client.read_replicas.get(tp, (0,))[0] < 0
                position = end
    finally:
        stop.set()
        writer.join(60)
    seconds.sort()
    print(f"\n30 ranges up to the latest offset: median {seconds[15] * 1000:.1f} ms, max {seconds[-1] * 1000:.1f} ms, "
          f"{leader_only} ended on the leader alone, {position} records")
    assert position > 0 and sent


def test_a_follower_that_stops_answering_hands_over_to_the_leader(racks):
    """The follower being read is stopped (SIGSTOP): its fetch times out after request.timeout.ms and the rest of the
    range comes from the leader, exactly."""
    topic = create(racks, [[2, 1, 3]], prefix="rack-stopped")
    produce(racks, topic, 1, 15_000, **SMALL_BATCHES)
    node = racks.nodes[LOCAL]
    with KafkaClient({"bootstrap.servers": racks.bootstrap_servers, "client.rack": CLIENT_RACK,
                      "request.timeout.ms": "2000"}) as client:
        end = list_offsets(client, [(topic, 0)], "latest")[(topic, 0)][0]

        def stop_the_follower():
            assert client.read_replicas[(topic, 0)].node == LOCAL
            os.killpg(node.process.pid, signal.SIGSTOP)

        meter = Meter(racks, topic)
        started = time.monotonic()
        try:
            read_exactly(client, topic, end, midway=stop_the_follower)
            seconds = time.monotonic() - started
        finally:
            os.killpg(node.process.pid, signal.SIGCONT)
    by_broker = meter.since_last()
    report("follower stopped mid-read, client.rack=az-a, kwire", by_broker, seconds)
    assert by_broker[2] > 0, by_broker  # the leader served the rest
    assert seconds < 20, seconds


@pytest.mark.parametrize("victim", [LOCAL, 2], ids=["the follower being read", "the leader"])
def test_a_broker_killed_mid_read_leaves_the_read_exact(racks, victim):
    wait_healthy(racks)  # restarts the broker an earlier test killed
    topic = create(racks, [[2, 3, 1]], prefix="rack-kill")
    produce(racks, topic, 1, 20_000, **SMALL_BATCHES)
    with rack_client(racks) as client:
        end = list_offsets(client, [(topic, 0)], "latest")[(topic, 0)][0]

        def kill():
            assert client.read_replicas[(topic, 0)].node == LOCAL  # the follower is being read from
            racks.kill(victim)

        read_exactly(client, topic, end, midway=kill)
