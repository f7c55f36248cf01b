"""Planning a read over many topics costs a constant number of requests per broker, not one per topic or
partition: Metadata once for the pattern, ListOffsets once per leader for each bound (a scaled-down
version of issue #21's 5,000 partitions over 100 topics; benchmarks/shapes.py measures the time)."""

from __future__ import annotations

import time
import uuid
from collections import Counter

import pytest

from spark_kwire.client.core.connection import BrokerConnection, api_name
from spark_kwire.client.core.kafka_client import KafkaClient
from spark_kwire.spark.options.parsing import ReadOptions
from spark_kwire.spark.reading.packing import pack_ranges
from spark_kwire.spark.reading.planner import plan_batch


@pytest.fixture
def count_requests(monkeypatch):
    sent: Counter = Counter()
    original = BrokerConnection.send

    def send(self, api, body, version=None, **kwargs):
        sent[api_name(api)] += 1
        return original(self, api, body, version, **kwargs)

    monkeypatch.setattr(BrokerConnection, "send", send)
    return sent


def test_planning_many_topics_sends_requests_per_broker_not_per_topic(bootstrap, create_topic, produce,
                                                                       count_requests):
    prefix = f"scale-{uuid.uuid4().hex[:6]}-"
    topics = [create_topic(f"{prefix}{i:02d}", partitions=12) for i in range(25)]
    produce(topics[3], [(None, b"x", None, None, p) for p in range(12) for _ in range(2)])
    options = ReadOptions.parse({"kafka.bootstrap.servers": bootstrap, "subscribePattern": prefix + ".*"})
    with KafkaClient(options.kafka) as client:
        # Connected and bootstrapped, as the shared client of a warm session, once the broker lists every topic.
        deadline = time.monotonic() + 60
        while not set(topics) <= set(client.list_topics()):
            assert time.monotonic() < deadline, "the new topics never appeared in the metadata"
            time.sleep(0.2)
        # A first plan as a warm session's would have made: on a busy machine a freshly created partition may
        # answer NOT_LEADER once and be retried, which is not what this test counts.
        plan_batch(client, options)
        count_requests.clear()
        ranges = plan_batch(client, options)
        packed = pack_ranges(ranges, client.leader_for, options.pack_target)
    assert len(ranges) == 25 * 12 and sum(r.size for r in ranges) == 24
    assert len(packed) == 1
    requests = dict(count_requests)
    # One broker: one ListOffsets for the earliest offsets and one for the latest, one Metadata for the pattern.
    assert requests.get("ListOffsets") == 2, requests
    assert requests.get("Metadata", 0) <= 1, requests
