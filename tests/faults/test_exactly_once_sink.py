"""The exactly-once sink (deliveryGuarantee=exactly-once) under process crashes: read_committed consumers
(librdkafka and the Java client) see each input record exactly once."""

from __future__ import annotations

import pytest

from . import eos_scenarios as eos
from .scenarios import HEADER


@pytest.mark.timeout(1500)
def test_stream_driver_sigkilled_repeatedly_writes_each_record_once(bootstrap, tmp_path):
    outcome = eos.eos_stream_driver_crashes(bootstrap, str(tmp_path), kills=2)
    print(f"\n{HEADER}\n{outcome.row()}\n{outcome.detail}")
    assert outcome.sent > 0
    assert (outcome.found, outcome.distinct, outcome.lost, outcome.duplicated) == (outcome.sent,) * 2 + (0, 0), \
        outcome.detail
    java = eos.java_read_committed_values(bootstrap, outcome.detail["sink"], outcome.sent)
    assert eos.count_exactly_once(java, outcome.sent, "e") == (outcome.sent, 0, 0)


@pytest.mark.timeout(900)
def test_batch_task_failing_after_writing_is_retried_without_duplicates(bootstrap, tmp_path):
    outcome = eos.eos_batch_task_retry(bootstrap, str(tmp_path))
    print(f"\n{HEADER}\n{outcome.row()}\n{outcome.detail}")
    assert (outcome.found, outcome.distinct, outcome.lost, outcome.duplicated) == (outcome.sent,) * 2 + (0, 0)
    # the failed attempt had written rows (now aborted): the test exercised what it claims
    assert outcome.detail["records_in_log"] > outcome.sent


@pytest.fixture(scope="module")
def cluster3():
    from harness import KafkaCluster

    from .scenarios import FAST_FAILOVER

    with KafkaCluster(3, extra_properties=FAST_FAILOVER) as cluster:
        yield cluster


@pytest.mark.timeout(600)
@pytest.mark.parametrize("victim", ["partition leader", "transaction coordinator"])
def test_broker_killed_during_a_transaction_loses_and_duplicates_nothing(cluster3, victim):
    """A transaction spans a SIGKILL of the partition's leader, or of the transaction coordinator (3 brokers,
    replication 3, min ISR 2): the producer follows the new leader, AddPartitionsToTxn / EndTxn find the new
    coordinator, the commit lands, read_committed readers see each record once."""
    import pyarrow as pa

    from spark_kwire.client import KafkaClient
    from spark_kwire.client.producer.transactions import TransactionManager, find_transaction_coordinator

    from .scenarios import create_topic, leader_of, unique_topic, wait_healthy

    bootstrap = cluster3.bootstrap_servers
    topic = create_topic(bootstrap, unique_topic("eos-leader-kill"), 1)
    half = 20_000
    try:
        with KafkaClient({"bootstrap.servers": bootstrap}) as client:
            manager = TransactionManager(client, unique_topic("eos-leader-kill-txn"))
            manager.begin()
            producer = manager.producer()
            producer.send_batch(topic, 0, pa.array([f"x{i}".encode() for i in range(half)], pa.binary()))
            producer.flush()
            if victim == "partition leader":
                cluster3.kill(leader_of(client, topic, 0))
            else:
                cluster3.kill(find_transaction_coordinator(client, manager.transactional_id))
            producer.send_batch(topic, 0, pa.array([f"x{i}".encode() for i in range(half, 2 * half)], pa.binary()))
            producer.flush()
            manager.end(commit=True)
        values = eos.read_committed_values(bootstrap, topic, 1, 2 * half)
        assert eos.count_exactly_once(values, 2 * half, "x") == (2 * half, 0, 0)
    finally:
        wait_healthy(cluster3)
