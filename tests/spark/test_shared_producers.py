"""Producers shared by the Spark tasks of one Python worker (spark/shared_client.py): what is reused, when it is
not, and what reaches the broker."""

from __future__ import annotations

import pyarrow as pa
import pytest

from spark_kwire.client.settings.config import ClientConfig
from spark_kwire.spark import shared_client as shared
from tests.client.conftest import rdkafka_consume


def _values(prefix: str, n: int) -> pa.Array:
    return pa.array([f"{prefix}-{i}".encode() for i in range(n)], pa.binary())


@pytest.fixture
def fresh_shared_state():
    """Each test starts with no shared clients or idle producers, and leaves none behind."""
    def clear():
        with shared._lock:
            for producers in shared._idle_producers.values():
                for producer in producers:
                    producer.close()
            shared._idle_producers.clear()
            for client in shared._clients.values():
                client.close()
            shared._clients.clear()
    clear()
    yield
    clear()


def test_a_clean_write_leaves_its_producer_for_the_next_one(bootstrap, create_topic, topic_name, fresh_shared_state):
    """Same producer id, sequences going on, offsets contiguous, and each write reports only its own records."""
    create_topic(topic_name, partitions=3)
    params = ClientConfig.from_kafka_options({"bootstrap.servers": bootstrap})
    with shared.leased_producer(params) as first:
        first.send_batch(topic_name, None, _values("a", 3000))
        first_acks = first.flush()
    producer_id = first.producer_id
    assert producer_id >= 0 and first.reusable
    with shared.leased_producer(params) as second:
        assert second is first and second.producer_id == producer_id
        second.send_batch(topic_name, None, _values("b", 2000))
        second_acks = second.flush()
    assert sum(a.records for a in first_acks.values()) == 3000
    assert sum(a.records for a in second_acks.values()) == 2000
    for tp, ack in second_acks.items():
        if tp in first_acks:
            assert ack.base_offset == first_acks[tp].last_offset + 1
    records = rdkafka_consume(bootstrap, topic_name, 5000, partitions=3, extra_wait=0.3)
    values = sorted(r.value() for r in records)
    assert values == sorted([f"a-{i}".encode() for i in range(3000)] + [f"b-{i}".encode() for i in range(2000)])


def test_a_write_that_raises_is_not_reused(bootstrap, create_topic, topic_name, fresh_shared_state):
    """A task that fails mid-write may leave batches in doubt: the next task gets a new producer id."""
    create_topic(topic_name)
    params = ClientConfig.from_kafka_options({"bootstrap.servers": bootstrap})
    with pytest.raises(RuntimeError, match="task failed"):
        with shared.leased_producer(params) as failing:
            failing.send_batch(topic_name, 0, _values("lost", 10))
            raise RuntimeError("task failed")
    with shared.leased_producer(params) as next_one:
        assert next_one is not failing
        next_one.send_batch(topic_name, 0, _values("c", 10))
        assert next_one.flush()[(topic_name, 0)].records == 10
        assert next_one.producer_id != failing.producer_id


def test_a_write_left_unflushed_is_not_reused(bootstrap, create_topic, topic_name, fresh_shared_state):
    create_topic(topic_name)
    params = ClientConfig.from_kafka_options({"bootstrap.servers": bootstrap})
    with shared.leased_producer(params) as unflushed:
        unflushed.send_batch(topic_name, 0, _values("open", 10))
    assert not unflushed.reusable
    with shared.leased_producer(params) as next_one:
        assert next_one is not unflushed
