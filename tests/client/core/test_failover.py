"""Leader failover on a 3-node KRaft cluster: produce and fetch keep going when the partition leader dies."""

from __future__ import annotations

import time

import pyarrow as pa
import pytest

from spark_kwire.client import Admin, KafkaClient, Producer, fetch_range, list_offsets
from harness import KafkaCluster


@pytest.fixture(scope="module")
def cluster3():
    with KafkaCluster(3) as cluster:
        yield cluster


@pytest.mark.slow
def test_produce_and_fetch_survive_leader_kill(cluster3):
    topic = "failover"
    with KafkaClient({"bootstrap.servers": cluster3.bootstrap_servers, "retry.backoff.max.ms": "500"}) as client:
        Admin(client).create_topics([(topic, 2, 3)])
        producer = Producer(client, batch_size=4096, compression="lz4")

        def send(first: int, count: int) -> None:
            for p in range(2):
                producer.send_batch(topic, p, pa.array([f"{p}-{i:06d}".encode() for i in range(first, first + count)],
                                                       pa.binary()))

        send(0, 5000)
        assert sum(a.records for a in producer.flush().values()) == 10_000
        leader = client.leader_for(topic, 0)
        reader = fetch_range(client, topic, 0, 0, 10_000, max_bytes=4096)
        first = next(reader)
        assert first.offset[0] == 0

        cluster3.kill(leader)  # SIGKILL: no controlled shutdown
        killed_at = time.monotonic()
        send(5000, 5000)
        acks = producer.flush()  # retries until the controller moves leadership (broker session timeout)
        assert {tp[1]: (a.records, a.last_offset) for tp, a in acks.items()} == {0: (5000, 9999), 1: (5000, 9999)}
        assert client.leader_for(topic, 0) != leader
        failover_s = time.monotonic() - killed_at

        values = first.value.to_pylist() + [v for batch in reader for v in batch.value.to_pylist()]
        assert values == [f"0-{i:06d}".encode() for i in range(10_000)]  # exactly once, in order
        assert not reader.stopped_early
        assert list_offsets(client, [(topic, 1)], "latest")[(topic, 1)][0] == 10_000
        assert failover_s < 60
