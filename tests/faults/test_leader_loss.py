"""Leader loss on a 3-node KRaft cluster (RF 3, min.insync.replicas=2) while Spark writes, reads and streams.

Each test starts from a whole cluster (a node killed by the previous test is restarted first), SIGKILLs
the leader of a partition in the middle of the work, and counts the result with librdkafka.
"""

from __future__ import annotations

import pytest

from harness import KafkaCluster

from . import scenarios as sc


@pytest.fixture(scope="module")
def cluster3():
    with KafkaCluster(3, extra_properties=sc.FAST_FAILOVER) as cluster:
        yield cluster


@pytest.fixture
def healthy(cluster3):
    sc.wait_healthy(cluster3)
    return cluster3


def _report(outcome: sc.Outcome) -> None:
    print(f"\n{sc.HEADER}\n{outcome.row()}\n{outcome.detail}")


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("restart", [False, True], ids=["killed", "killed-and-restarted"])
def test_spark_write_survives_leader_kill_exactly_once(spark, healthy, restart):
    outcome = sc.spark_write_with_leader_kill(spark, healthy, rows=1_000_000, restart=restart)
    _report(outcome)
    assert outcome.detail["killed_during_write"], "the write ended before the leader was killed"
    if restart:
        assert outcome.detail["restarted_during_write"], "the write ended before the broker was restarted"
    assert outcome.detail["new_leader"] not in (None, outcome.detail["victim"])
    assert (outcome.found, outcome.distinct, outcome.lost, outcome.duplicated) == (1_000_000, 1_000_000, 0, 0)
    assert outcome.detail["values_match_keys"]


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_spark_batch_read_follows_leader_move(spark, healthy):
    outcome = sc.spark_read_with_leader_kill(spark, healthy, per_partition=100_000, partitions=6)
    _report(outcome)
    assert outcome.detail["killed_during_read"], "the read ended before the leader was killed"
    assert outcome.detail["exact"]
    assert (outcome.found, outcome.lost, outcome.duplicated) == (600_000, 0, 0)


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_spark_packed_read_follows_leader_move(spark, healthy):
    """Packed tasks (several partitions of one leader, first Fetches batched) follow a leader killed mid-read."""
    outcome = sc.spark_read_with_leader_kill(spark, healthy, per_partition=100_000, partitions=6,
                                             read_options={"targetRecordsPerPartition": "40000"})
    _report(outcome)
    assert outcome.detail["killed_during_read"], "the read ended before the leader was killed"
    assert outcome.detail["exact"]
    assert (outcome.found, outcome.lost, outcome.duplicated) == (600_000, 0, 0)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_stream_exactly_once_across_leader_kill_and_restart(spark, healthy, tmp_path):
    outcome = sc.stream_with_leader_kill(spark, healthy, str(tmp_path))
    _report(outcome)
    assert outcome.sent > 0 and outcome.recover_s is not None
    assert (outcome.found, outcome.distinct, outcome.lost, outcome.duplicated) == (outcome.sent,) * 2 + (0, 0)
