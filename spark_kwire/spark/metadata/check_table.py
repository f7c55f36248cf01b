"""The connection check as a table: ``spark.read.format("kwire").option("metadata", "check")`` (issue 44).

Its rows are the client's check (:mod:`spark_kwire.client.check`), one per step and target, columns
:data:`~spark_kwire.client.check.rows.COLUMNS`, run in two places:

* on the **driver**: :meth:`CheckTableReader.partitions` runs in the Python worker Spark starts on the driver to plan
  the read; those rows say ``executor = "driver"``;
* on the **executors**: one task per executor where Spark places them so. Spark tells a Python source nothing about
  its executors when it plans, so the read has ``checkTasks`` tasks (default :data:`DEFAULT_TASKS`); Spark's
  scheduler hands a stage's first tasks to every executor with a free core in turn, each task reads its executor's id
  (:mod:`.check_placement`), and only the first task on each executor runs the check; the others return no row.

One more row, step :data:`EXECUTORS_STEP`, comes from the task that carries the driver's rows (the last partition):
how many executors the tasks reached out of how many Spark reports, from Spark's status REST API (the driver's UI):
``ok`` when every executor was reached, ``warn`` with the fix when some were not or when the API cannot be asked. In
local mode the driver's JVM runs the tasks: the driver's rows are the only ones, and that row says so.
"""

from __future__ import annotations

import socket
import time
from typing import Mapping

from pyspark.sql.datasource import DataSourceReader, InputPartition
from pyspark.sql.types import DoubleType, StringType, StructField, StructType

from spark_kwire.client.check import COLUMNS, CheckRow, run_check
from spark_kwire.spark.metadata.check_placement import (LOCAL_EXECUTOR, SparkStatus, StatusUnavailable,
                                                        claim_executor, executor_id)
from spark_kwire.spark.metadata.options import parse_check_table_options

__all__ = ["CHECK_SCHEMA", "CheckTableReader", "EXECUTORS_STEP", "DEFAULT_TASKS"]

#: The step of the row that counts the executors reached (the client's steps are in ``rows.STEPS``).
EXECUTORS_STEP = "executors"
#: Tasks of a check read without ``checkTasks``: spread over up to this many executors.
DEFAULT_TASKS = 16

CHECK_SCHEMA = StructType([
    StructField(name, DoubleType() if name == "time_ms" else StringType(), nullable=name == "fix")
    for name in COLUMNS
])


def _row_tuple(row: CheckRow) -> tuple:
    return tuple(getattr(row, name) for name in COLUMNS)


class CheckExecutorTask(InputPartition):
    """A task that checks from the executor it lands on (unless another task of the check got there first)."""

    def __init__(self, index: int) -> None:
        super().__init__(index)


class CheckDriverTask(InputPartition):
    """The last task: the driver's rows, and the count of the executors the other tasks reached."""

    def __init__(self, rows: tuple, driver_host: str, executor_tasks: int, wait_ms: int) -> None:
        super().__init__(executor_tasks)
        self.rows = rows
        self.driver_host = driver_host
        self.executor_tasks = executor_tasks
        self.wait_ms = wait_ms


class CheckTableReader(DataSourceReader):
    """Batch reader of the check table; see the module documentation."""

    def __init__(self, options: Mapping[str, str]) -> None:
        self.settings, tasks = parse_check_table_options(options)
        self.tasks = tasks or DEFAULT_TASKS

    def partitions(self) -> list[InputPartition]:
        host = socket.gethostname()
        report = run_check(self.settings, host=host, executor=LOCAL_EXECUTOR)
        wait_ms = self.settings.run_timeout_ms + 30_000
        return ([CheckExecutorTask(i) for i in range(self.tasks)]
                + [CheckDriverTask(tuple(_row_tuple(r) for r in report.rows), host, self.tasks, wait_ms)])

    def read(self, partition):
        from pyspark import TaskContext

        context = TaskContext.get()
        master = context.getLocalProperty("spark.master") if context is not None else None
        if isinstance(partition, CheckDriverTask):
            yield from partition.rows
            yield _row_tuple(self._executors_row(partition, context, master))
            return
        executor = executor_id(master)
        if executor == LOCAL_EXECUTOR:
            return  # local mode: the driver's rows are this JVM's
        run_key = f"{context.getLocalProperty('spark.app.id')}-{context.stageId()}" if context else "no-context"
        if not claim_executor(run_key, executor):
            return
        for row in run_check(self.settings, host=socket.gethostname(), executor=executor).rows:
            yield _row_tuple(row)

    @staticmethod
    def _executors_row(task: CheckDriverTask, context, master: str | None) -> CheckRow:
        started = time.monotonic()

        def row(outcome: str, detail: str, fix: str | None = None) -> CheckRow:
            return CheckRow(task.driver_host, LOCAL_EXECUTOR, EXECUTORS_STEP, "spark executors", outcome,
                            round((time.monotonic() - started) * 1000, 1), detail, fix)

        if executor_id(master) == LOCAL_EXECUTOR:
            return row("ok", f"local mode (spark.master={master or 'local'}): the driver's JVM runs the tasks, so "
                             f"the driver's rows are the executors' too")
        keys = ("spark.app.id", "spark.driver.host", "spark.ui.enabled", "spark.ui.port")
        status = SparkStatus({k: context.getLocalProperty(k) for k in keys} if context is not None else {})
        try:
            reported = status.executors()
            reached = status.stage_executors(context.stageId(), set(range(task.executor_tasks)),
                                             started + task.wait_ms / 1000)
        except StatusUnavailable as exc:
            return row("warn", f"cannot count the executors reached: Spark's status API cannot be asked ({exc}); "
                               f"{task.executor_tasks} tasks ran, the rows of each executor reached carry its id",
                       "Count the distinct executors of the rows, or let tasks reach the driver's UI "
                       "(spark.ui.enabled, spark.ui.port) for this count.")
        ids = sorted({e.id for e in reported}, key=lambda i: (len(i), i))
        missing = [i for i in ids if i not in reached]
        where = ", ".join(f"{i} on {reached[i]}" for i in sorted(reached, key=lambda i: (len(i), i)))
        detail = (f"{len(set(reached) & set(ids))} of the {len(ids)} executors Spark reports were reached by "
                  f"{task.executor_tasks} tasks ({where or 'none'})")
        if not ids:
            return row("warn", "Spark reports no executor (with dynamic allocation, none may be running yet)",
                       "Start the check when executors are running, or give the application executors.")
        if missing:
            return row("warn", f"{detail}; not reached: {', '.join(missing)}",
                       f"Set checkTasks to at least the cluster's cores ({len(ids)} executors or more) and run "
                       f"the check while the executors are idle.")
        return row("ok", f"{detail}; Spark's status API: {status.describe()}")
