"""Spark's own faults: a streaming driver SIGKILLed and restarted from its checkpoint, and executors of a
real multi-process Spark standalone cluster (master + two workers on loopback) SIGKILLed mid-read and
mid-write. Kafka is the session's one-node broker; the Spark drivers run as subprocesses.
"""

from __future__ import annotations

import pytest

from harness import SparkStandaloneCluster

from . import scenarios as sc


def _report(outcome: sc.Outcome) -> None:
    print(f"\n{sc.HEADER}\n{outcome.row()}\n{outcome.detail}")


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_stream_driver_sigkilled_repeatedly_delivers_exactly_once(spark, bootstrap, tmp_path):
    outcome = sc.stream_driver_crashes(spark, bootstrap, str(tmp_path), kills=2)
    _report(outcome)
    assert outcome.sent > 0
    assert (outcome.found, outcome.distinct, outcome.lost, outcome.duplicated) == (outcome.sent,) * 2 + (0, 0)


@pytest.fixture(scope="module")
def standalone():
    with SparkStandaloneCluster(workers=2, cores=1, memory="1g") as cluster:
        yield cluster


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_executors_killed_mid_read_and_mid_write(standalone, bootstrap, tmp_path):
    """One driver, two phases, an executor SIGKILLed in each. The read: Spark retries the lost tasks and the
    result is exact. The write: at-least-once per job, as Spark's own Kafka sink -- the retried task writes
    its rows again, so the rows the killed attempt had got acknowledged appear twice; nothing is lost, and
    no more than one task's rows are duplicated (one task ran on the killed executor, which had one core)."""
    read, write = sc.standalone_executor_kills(standalone, bootstrap, str(tmp_path), rows=200_000, tasks=8)
    print(f"\n{sc.HEADER}\n{read.row()}\n{write.row()}\n{read.detail}\n{write.detail}")
    print(f"duplicates from the retried write task: {write.duplicated} (at most {write.detail['rows_per_task']})")
    assert read.detail["tasks_done_at_kill"] < read.detail["tasks"], "the read ended before the kill"
    # Each kill interrupted a running task (Spark counts it as failed, ExecutorLostFailure, and runs it again).
    assert read.detail["failed_tasks"] >= 1, "the killed executor was running no read task"
    assert write.detail["failed_tasks"] >= 1, "the killed executor was running no write task"
    assert read.detail["exact"]
    assert (read.found, read.lost, read.duplicated) == (read.sent, 0, 0)
    assert write.lost == 0 and write.distinct == write.sent
    assert 0 <= write.duplicated <= write.detail["rows_per_task"]
