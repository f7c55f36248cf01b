"""A broker behind a chaos proxy (its PROXIED listener advertises the proxy, so clients never bypass it):
the proxy black-holes the broker for longer than delivery.timeout.ms, or cuts connections at random points
of responses, stalls and delays others. Writes fail within the timeout with an honest error, or stay
exactly-once; reads return exactly the data. Verification reads go to the direct listener with librdkafka.
"""

from __future__ import annotations

import re
import threading
import time

import pyarrow as pa
import pytest

from spark_kwire.client import KafkaClient, ProduceError, Producer
from harness import proxied_kafka_cluster

from . import scenarios as sc


@pytest.fixture(scope="module")
def proxied():
    cluster, proxy = proxied_kafka_cluster()
    try:
        with cluster:
            yield cluster, proxy
    finally:
        proxy.stop()


@pytest.fixture
def proxy(proxied):
    cluster, proxy = proxied
    node = cluster.nodes[1]
    assert node.is_running(), f"the broker exited ({node.process.returncode}):\n{node.log_tail()}"
    proxy.heal()
    proxy.cut_all()
    yield proxy
    proxy.heal()
    proxy.cut_all()
    assert node.is_running(), f"the broker exited ({node.process.returncode}) during the test:\n{node.log_tail()}"


def _values(records, partition):
    return [r[3] for r in sorted(r for r in records if r[0] == partition)]


@pytest.mark.timeout(120)
def test_unreachable_broker_fails_within_delivery_timeout_naming_partition_broker_and_acks(proxied, proxy):
    cluster, _ = proxied
    topic = sc.create_topic(cluster.bootstrap_servers, sc.unique_topic("unreachable"), 2, replication=1,
                            min_isr=None)
    sent = {p: [f"p{p}-{i:06d}".encode() for i in range(40_000)] for p in range(2)}
    options = {"bootstrap.servers": cluster.bootstrap("PROXIED"), "delivery.timeout.ms": "5000",
               "request.timeout.ms": "3000", "batch.size": "16384", "buffer.memory": "131072"}
    with KafkaClient(options) as client:
        producer = Producer(client)
        for p in range(2):  # acknowledged: buffer.memory makes send_batch flush as it goes
            producer.send_batch(topic, p, pa.array(sent[p][:20_000], pa.binary()))
        proxy.configure(mode="blackhole")
        proxy.cut_all()
        started = time.monotonic()
        with pytest.raises(ProduceError) as info:
            for p in range(2):
                producer.send_batch(topic, p, pa.array(sent[p][20_000:], pa.binary()))
            producer.flush()
        elapsed = time.monotonic() - started
    error = info.value
    text = str(error)
    print(f"\nfailed after {elapsed:.1f}s: {text}")
    assert elapsed < 5.0 + 2.0, elapsed  # delivery.timeout.ms, plus the last backoff and some slack
    assert f"topic {topic!r} partition" in text and "delivery.timeout.ms" in text
    assert f"leader broker 1 at 127.0.0.1:{proxy.port}" in text
    assert "last error:" in text and ("no complete" in text or "connect" in text)
    assert error.topic == topic and error.broker == 1
    # Honest: every acknowledged record is in the topic, in order; nothing is there twice.
    records = sc.read_all(cluster.bootstrap_servers, topic, 2)
    assert error.acknowledged_records >= 2 * 20_000 - 2 * 16384  # the first part was flushed as it went
    for p in range(2):
        acked = error.acknowledged.get((topic, p), 0)
        found = _values(records, p)
        assert found == sent[p][:len(found)], "duplicated or reordered records"
        assert len(found) >= acked, f"partition {p}: {acked} acknowledged, {len(found)} found"
    print(f"acknowledged {error.acknowledged_records}, found {len(records)} (some unacknowledged records "
          f"may have been written: at-least-once)")


@pytest.mark.timeout(240)
def test_spark_write_to_unreachable_broker_fails_within_delivery_timeout(spark, proxied, proxy):
    cluster, _ = proxied
    topic = sc.create_topic(cluster.bootstrap_servers, sc.unique_topic("spark-unreachable"), 2, replication=1,
                            min_isr=None)
    rows = 200_000
    df = spark.range(rows, numPartitions=2).selectExpr("cast(id as string) as key", "cast(id as string) as value")
    with KafkaClient({"bootstrap.servers": cluster.bootstrap_servers}) as probe:
        def blackhole_when_written():
            while not done.is_set():
                try:
                    if sum(sc.end_offsets(probe, topic, 2).values()) >= rows // 10:
                        break
                except Exception:  # noqa: BLE001 - keep watching until the write is over
                    pass
                time.sleep(0.02)
            else:
                return
            proxy.configure(mode="blackhole")
            proxy.cut_all()
            blackholed.append(time.monotonic())

        blackholed: list[float] = []
        done = threading.Event()
        watcher = threading.Thread(target=blackhole_when_written, daemon=True)
        watcher.start()
        with pytest.raises(Exception) as info:
            (df.write.format("kwire").option("kafka.bootstrap.servers", cluster.bootstrap("PROXIED"))
             .option("topic", topic).option("kafka.delivery.timeout.ms", "5000")
             .option("kafka.request.timeout.ms", "3000").option("kafka.buffer.memory", "262144")
             .mode("append").save())
        failed = time.monotonic()
        done.set()
        watcher.join(timeout=30)
    assert blackholed, "the write failed before the broker became unreachable"
    text = str(info.value)
    print(f"\nfailed {failed - blackholed[0]:.1f}s after the broker became unreachable:\n{text[:1500]}")
    assert failed - blackholed[0] < 5.0 + 15, "not within delivery.timeout.ms (+ Spark's own overhead)"
    assert topic in text
    assert "delivery.timeout.ms" in text or "metadata request for topic(s)" in text
    records = sc.read_all(cluster.bootstrap_servers, topic, 2)
    keys = [r[2] for r in records]
    assert len(set(keys)) == len(keys), "duplicates"
    assert set(keys) <= {str(i).encode() for i in range(rows)}
    # The watcher saw rows // 10 records in the topic before cutting the broker off: they stay there.
    assert len(records) >= rows // 10
    if "producing to topic" in text:
        # A produce failure reports what its task had acknowledged (Spark shows the first failure's task).
        match = re.search(r"Acknowledged before the failure: (\d+) record", text)
        assert match, "a produce failure must say how many records were acknowledged"
        assert len(records) >= int(match.group(1))
    else:
        assert "metadata request for topic(s)" in text
    print(f"records in the topic: {len(records)} of {rows} (the job failed; Spark reports it as failed)")


@pytest.mark.slow
@pytest.mark.timeout(360)
def test_cut_stalled_and_delayed_responses_keep_writes_and_reads_exact(spark, proxied, proxy):
    cluster, _ = proxied
    outcome_w, outcome_r = chaos_write_and_read(spark, cluster, proxy)
    print(f"\n{sc.HEADER}\n{outcome_w.row()}\n{outcome_r.row()}\nproxy: {proxy.stats}")
    assert proxy.stats["cuts"] >= 3 and proxy.stats["delays"] >= 3, proxy.stats
    assert (outcome_w.found, outcome_w.distinct, outcome_w.lost, outcome_w.duplicated) == (outcome_w.sent,) * 2 + (0, 0)
    assert outcome_r.detail["exact"] and (outcome_r.lost, outcome_r.duplicated) == (0, 0)


def chaos_write_and_read(spark, cluster, proxy, *, rows: int = 200_000, partitions: int = 4,
                         seed: int = 5) -> tuple[sc.Outcome, sc.Outcome]:
    """Spark writes then reads ``rows`` keyed rows through a proxy cutting 3% of responses at a random byte,
    stalling 1% (until request.timeout.ms) and delaying 10% by up to 300 ms."""
    topic = sc.create_topic(cluster.bootstrap_servers, sc.unique_topic("chaos"), partitions, replication=1,
                            min_isr=None)
    proxy.rng.seed(seed)
    proxy.configure(cut_probability=0.03, stall_probability=0.01, delay_probability=0.10, max_delay_s=0.3)
    kafka = {"kafka.bootstrap.servers": cluster.bootstrap("PROXIED"), "kafka.request.timeout.ms": "2000",
             "kafka.default.api.timeout.ms": "30000",
             "kafka.batch.size": "32768", "kafka.buffer.memory": "1048576",
             "kafka.max.partition.fetch.bytes": "262144"}
    df = spark.range(rows, numPartitions=4).selectExpr("cast(id as string) as key", "concat('v', cast(id as string)) as value")
    started = time.monotonic()
    df.write.format("kwire").options(**kafka).option("topic", topic).mode("append").save()
    wrote = time.monotonic()
    records = sc.read_all(cluster.bootstrap_servers, topic, partitions)
    distinct, lost, dup = sc.count_keys(records, {str(i).encode() for i in range(rows)})
    write = sc.Outcome("chaos proxy: spark write", rows, len(records), distinct, lost, dup, None, wrote - started,
                       {"topic": topic})
    started = time.monotonic()
    table = (spark.read.format("kwire").options(**kafka).option("subscribe", topic)
             .option("startingOffsets", "earliest").option("endingOffsets", "latest")
             .option("maxRecordsPerPartition", str(rows // partitions // 2)).load()
             .select("partition", "offset", "key", "value").toArrow())
    read_s = time.monotonic() - started
    proxy.heal()
    got = sorted(zip(table.column("partition").to_pylist(), table.column("offset").to_pylist(),
                     table.column("key").to_pylist(), table.column("value").to_pylist()))
    expected = sorted(records)
    read = sc.Outcome("chaos proxy: spark read", len(expected), len(got), len(set(got)),
                      len(set(expected) - set(got)), len(got) - len(set(got)), None, read_s,
                      {"topic": topic, "exact": got == expected})
    return write, read


@pytest.mark.timeout(240)
def test_idempotent_producer_keeps_its_id_and_sequences_through_cut_connections(proxied, proxy):
    cluster, _ = proxied
    outcome = idempotent_producer_through_chaos(cluster, proxy)
    print(f"\n{sc.HEADER}\n{outcome.row()}\n{outcome.detail}\nproxy: {proxy.stats}")
    assert proxy.stats["cuts"] >= 5, proxy.stats
    assert outcome.detail["in_order"] and outcome.detail["one_producer_id"] and outcome.detail["sequences_dense"]
    assert (outcome.found, outcome.lost, outcome.duplicated) == (outcome.sent, 0, 0)


def _batch_headers(records) -> list[tuple[int, int, int, int, int]]:
    """(base_offset, producer_id, producer_epoch, base_sequence, record_count) of each v2 batch."""
    import struct

    out, pos, n = [], 0, len(records)
    while pos + 61 <= n:
        size = struct.unpack_from(">i", records, pos + 8)[0]
        if pos + 12 + size > n:
            break
        base_offset = struct.unpack_from(">q", records, pos)[0]
        pid, epoch, seq, count = struct.unpack_from(">qhii", records, pos + 43)
        out.append((base_offset, pid, epoch, seq, count))
        pos += 12 + size
    return out


def idempotent_producer_through_chaos(cluster, proxy, *, partitions: int = 3, per_partition: int = 15_000,
                                      seed: int = 9) -> sc.Outcome:
    """One kwire Producer writes through a proxy that cuts 10% of the responses (and delays 10%): every
    cut loses the answers to up to five Produce requests in flight, which are sent again. The broker must
    see one producer id and epoch, and base sequences that follow the offsets exactly."""
    from spark_kwire.protocol import messages as m

    topic = sc.create_topic(cluster.bootstrap_servers, sc.unique_topic("idempotent"), partitions, replication=1,
                            min_isr=None)
    sent = {p: [f"{p}-{i:06d}".encode() for i in range(per_partition)] for p in range(partitions)}
    proxy.rng.seed(seed)
    proxy.configure(cut_probability=0.10, delay_probability=0.10, max_delay_s=0.1)
    started = time.monotonic()
    with KafkaClient({"bootstrap.servers": cluster.bootstrap("PROXIED"), "request.timeout.ms": "2000",
                      "batch.size": "4096", "buffer.memory": "262144"}) as client:
        producer = Producer(client)
        for start in range(0, per_partition, 5_000):
            for p in range(partitions):
                producer.send_batch(topic, p, pa.array(sent[p][start:start + 5_000], pa.binary()))
        acks = producer.flush()
        pid, epoch = producer.producer_id, producer.producer_epoch
    elapsed = time.monotonic() - started
    proxy.heal()
    assert {tp[1]: a.records for tp, a in acks.items()} == {p: per_partition for p in range(partitions)}
    records = sc.read_all(cluster.bootstrap_servers, topic, partitions)
    headers = []
    with KafkaClient({"bootstrap.servers": cluster.bootstrap_servers}) as direct:
        conn = direct.connection(direct.leader_for(topic, 0))
        for p in range(partitions):
            offset = 0
            while offset < per_partition:
                body = conn.request(m.FETCH, {
                    "replica_id": -1, "max_wait_ms": 100, "min_bytes": 1, "max_bytes": 8 << 20, "isolation_level": 0,
                    "session_id": 0, "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "",
                    "topics": [{"topic": topic, "partitions": [{
                        "partition": p, "current_leader_epoch": -1, "fetch_offset": offset, "last_fetched_epoch": -1,
                        "log_start_offset": -1, "partition_max_bytes": 8 << 20}]}]}, 12)
                batches = _batch_headers(body["responses"][0]["partitions"][0]["records"])
                assert batches, f"no batch at offset {offset} of partition {p}"
                headers += [(p, *b) for b in batches]
                offset = batches[-1][0] + batches[-1][4]
    in_order = all(_values(records, p) == sent[p] for p in range(partitions))
    keys = [(r[0], r[3]) for r in records]
    return sc.Outcome("chaos proxy: one kwire producer, cut 10%", partitions * per_partition, len(records),
                      len(set(keys)), partitions * per_partition - len(set(keys)), len(keys) - len(set(keys)), None,
                      elapsed, {"topic": topic, "in_order": in_order, "batches": len(headers),
                                "one_producer_id": {(h[2], h[3]) for h in headers} == {(pid, epoch)},
                                "sequences_dense": all(h[4] == h[1] for h in headers)})
