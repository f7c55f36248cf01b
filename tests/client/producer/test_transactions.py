"""Transactions against a real broker, read back by librdkafka with isolation.level=read_committed."""

from __future__ import annotations

import uuid

import pyarrow as pa
import pytest

from spark_kwire.client import Admin
from spark_kwire.client.errors import ProduceError
from spark_kwire.client.producer.transactions import (TransactionFencedError, TransactionManager, TransactionStateError,
                                             end_transaction)
from tests.client.conftest import rdkafka_consume


def _values(prefix: str, n: int) -> pa.Array:
    return pa.array([f"{prefix}-{i}".encode() for i in range(n)], pa.binary())


def _read_committed(bootstrap, topic, count, partitions, **kw):
    got = rdkafka_consume(bootstrap, topic, count, partitions=partitions, timeout=kw.pop("timeout", 20),
                          extra_wait=kw.pop("extra_wait", 1.5), **{"isolation.level": "read_committed"})
    return sorted(m.value() for m in got)


def _txn_id(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


def test_committed_transaction_visible_to_read_committed_once(bootstrap, client, create_topic, topic_name):
    create_topic(topic_name, partitions=3)
    manager = TransactionManager(client, _txn_id("commit"))
    manager.begin()
    producer = manager.producer()
    for p in range(3):
        producer.send_batch(topic_name, p, _values(f"p{p}", 500))
    acks = producer.flush()
    assert sum(a.records for a in acks.values()) == 1500
    assert manager.partitions == {(topic_name, p) for p in range(3)}
    manager.end(commit=True)
    expected = sorted(f"p{p}-{i}".encode() for p in range(3) for i in range(500))
    assert _read_committed(bootstrap, topic_name, 1500, 3) == expected


def test_aborted_transaction_never_visible(bootstrap, client, create_topic, topic_name):
    create_topic(topic_name, partitions=2)
    manager = TransactionManager(client, _txn_id("abort"))
    manager.begin()
    producer = manager.producer()
    producer.send_batch(topic_name, 0, _values("aborted", 300))
    producer.send_batch(topic_name, 1, _values("aborted", 300))
    producer.flush()
    manager.end(commit=False)
    # the same identity goes on with a new transaction (under transactions v2 with a bumped epoch)
    producer = manager.producer()
    producer.send_batch(topic_name, 1, _values("kept", 50))
    producer.flush()
    manager.end(commit=True)
    assert _read_committed(bootstrap, topic_name, 50, 2) == sorted(f"kept-{i}".encode() for i in range(50))
    # read_uncommitted sees the aborted records too: they were written, and only the markers hide them
    everything = rdkafka_consume(bootstrap, topic_name, 650, partitions=2, timeout=20, extra_wait=0.5,
                                 **{"isolation.level": "read_uncommitted"})
    assert sum(m.value().startswith(b"aborted") for m in everything) == 600


def test_commit_from_a_resumed_identity_in_another_client_is_idempotent(bootstrap, client, create_topic,
                                                                        topic_name):
    from spark_kwire.client import ClientConfig, KafkaClient

    create_topic(topic_name, partitions=1)
    manager = TransactionManager(client, _txn_id("resume"))
    handle = manager.begin()
    producer = manager.producer()
    producer.send_batch(topic_name, 0, _values("r", 200))
    producer.flush()
    producer.close()
    # nothing is visible before the commit (a read_committed reader stops at the open transaction)
    assert _read_committed(bootstrap, topic_name, 1, 1, timeout=2, extra_wait=0) == []
    with KafkaClient(ClientConfig.from_kafka_options({"bootstrap.servers": bootstrap})) as other:
        end_transaction(other, handle, commit=True)
        end_transaction(other, handle, commit=True)  # again: harmless
        with pytest.raises(TransactionStateError, match="not in a state"):
            end_transaction(other, handle, commit=False)  # it was committed: cannot be aborted now
    assert _read_committed(bootstrap, topic_name, 200, 1) == sorted(f"r-{i}".encode() for i in range(200))


def test_second_init_fences_the_first_and_aborts_its_transaction(bootstrap, client, create_topic, topic_name):
    create_topic(topic_name, partitions=1)
    txn_id = _txn_id("fence")
    zombie = TransactionManager(client, txn_id)
    zombie_handle = zombie.begin()
    zombie_producer = zombie.producer()
    zombie_producer.send_batch(topic_name, 0, _values("zombie", 100))
    zombie_producer.flush()

    successor = TransactionManager(client, txn_id)
    successor.begin()
    assert (successor.producer_id, successor.producer_epoch) != (zombie_handle.producer_id,
                                                                 zombie_handle.producer_epoch)
    with pytest.raises(ProduceError, match=f"transactional id '{txn_id}'.*was fenced: a newer producer") as fenced:
        zombie_producer.send_batch(topic_name, 0, _values("zombie-late", 10))
        zombie_producer.flush()
    assert fenced.value.error_name in ("INVALID_PRODUCER_EPOCH", "PRODUCER_FENCED")
    with pytest.raises(TransactionFencedError, match=txn_id):
        end_transaction(client, zombie_handle, commit=True)

    producer = successor.producer()
    producer.send_batch(topic_name, 0, _values("successor", 100))
    producer.flush()
    successor.end(commit=True)
    got = _read_committed(bootstrap, topic_name, 100, 1)
    assert got == sorted(f"successor-{i}".encode() for i in range(100))


def test_offsets_inside_the_transaction_follow_its_outcome(client, create_topic, topic_name):
    create_topic(topic_name, partitions=1)
    group_committed, group_aborted = _txn_id("g-commit"), _txn_id("g-abort")
    for group, commit in ((group_committed, True), (group_aborted, False)):
        manager = TransactionManager(client, _txn_id("offsets"))
        manager.begin()
        manager.send_offsets(group, {(topic_name, 0): 41})
        assert not manager.is_empty
        manager.end(commit=commit)
    admin = Admin(client)
    assert admin.fetch_committed_offsets(group_committed)[(topic_name, 0)].offset == 41
    assert (topic_name, 0) not in admin.fetch_committed_offsets(group_aborted)


def test_empty_transaction_ends_without_a_request(client):
    manager = TransactionManager(client, _txn_id("empty"))
    manager.begin()
    assert manager.is_empty
    manager.end(commit=True)  # the coordinator has nothing to end: no EndTxn, no INVALID_TXN_STATE


def test_timeout_above_the_broker_maximum_is_refused_clearly(client):
    manager = TransactionManager(client, _txn_id("timeout"), transaction_timeout_ms=3_600_000)
    with pytest.raises(Exception, match="transaction.max.timeout.ms"):
        manager.begin()


def test_broker_without_transaction_apis_gets_a_clear_error():
    """A broker that advertises no FindCoordinator / InitProducerId (the harness's fake broker speaks only
    what reads need): the error says the cluster does not support transactions, and what works instead."""
    from harness.fake_broker import FakeBroker
    from spark_kwire.client import ClientConfig, KafkaClient
    from spark_kwire.client.producer.transactions import TransactionError

    with FakeBroker("garbage") as broker:
        with KafkaClient(ClientConfig.from_kafka_options({"bootstrap.servers": broker.bootstrap})) as client:
            with pytest.raises(TransactionError, match="does not support transactions.*at-least-once"):
                TransactionManager(client, "no-txn").begin()
