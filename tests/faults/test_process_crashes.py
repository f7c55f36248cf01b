"""Spark's own faults: a streaming driver SIGKILLed and restarted from its checkpoint, and executors of a
real multi-process Spark standalone cluster (master + two workers on loopback) SIGKILLed mid-read and
mid-write. Kafka is the session's one-node broker; the Spark drivers run as subprocesses.
"""

from __future__ import annotations

import pytest

from spark_kwire.testing import SparkStandaloneCluster

from . import scenarios as sc


def _report(outcome: sc.Outcome) -> None:
    print(f"\n{sc.HEADER}\n{outcome.row()}\n{outcome.detail}")


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_stream_driver_sigkilled_repeatedly_delivers_exactly_once(spark, bootstrap, tmp_path):
    outcome = sc.stream_driver_crashes(spark, bootstrap, str(tmp_path), kills=3)
    _report(outcome)
    assert outcome.sent > 0
    assert (outcome.found, outcome.distinct, outcome.lost, outcome.duplicated) == (outcome.sent,) * 2 + (0, 0)


@pytest.fixture(scope="module")
def standalone():
    with SparkStandaloneCluster(workers=2, cores=1, memory="1g") as cluster:
        yield cluster


@pytest.mark.slow
@pytest.mark.timeout(420)
def test_executor_killed_mid_read_is_retried_and_exact(standalone, bootstrap, tmp_path):
    outcome = sc.standalone_read_executor_kill(standalone, bootstrap, str(tmp_path))
    _report(outcome)
    assert outcome.detail["tasks_done_at_kill"] < outcome.detail["tasks"], "the read ended before the kill"
    assert outcome.detail["exact"]
    assert (outcome.found, outcome.lost, outcome.duplicated) == (outcome.sent, 0, 0)


@pytest.mark.slow
@pytest.mark.timeout(420)
def test_executor_killed_mid_write_loses_nothing(standalone, bootstrap, tmp_path):
    """At-least-once per job, as Spark's own Kafka sink: the retried task writes its rows again, so the rows
    the killed attempt had already had acknowledged appear twice. Nothing is lost, and no more than one
    task's rows are duplicated (one task ran on the killed executor, which had one core)."""
    outcome = sc.standalone_write_executor_kill(standalone, bootstrap, str(tmp_path), rows=200_000, tasks=8)
    _report(outcome)
    print(f"duplicates from the retried task: {outcome.duplicated} (at most {outcome.detail['rows_per_task']})")
    assert outcome.lost == 0 and outcome.distinct == outcome.sent
    assert 0 <= outcome.duplicated <= outcome.detail["rows_per_task"]
