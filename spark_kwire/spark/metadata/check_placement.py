"""Where a task of the check table runs, and what Spark reports about its executors.

Inside a Spark task (a Python worker forked by the executor's JVM):

* :func:`executor_id`: the executor's id, read from the ``--executor-id`` argument of the executor's JVM (an
  ancestor of the Python worker; ``CoarseGrainedExecutorBackend`` and Kubernetes' backend take it); ``driver`` in
  local mode, where the driver's JVM runs the tasks;
* :func:`claim_executor`: true for the first task of a check that claims its executor (a marker file created
  exclusively in the executor's local folder), so that two tasks landing on one executor check it once;
* :class:`SparkStatus`: Spark's status REST API (``/api/v1``, served by the driver's UI) found from the task's local
  properties (``spark.driver.host``, ``spark.app.id``, ``spark.ui.port``): the executors Spark reports and the
  executors where the tasks of a stage ran.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

__all__ = ["executor_id", "claim_executor", "SparkStatus", "StatusUnavailable", "LOCAL_EXECUTOR"]

LOCAL_EXECUTOR = "driver"  # Spark's own id of the driver, which runs the tasks in local mode
_UI_DEFAULT_PORT = 4040
_UI_PORT_RETRIES = 16  # spark.port.maxRetries: a busy 4040 makes the UI take 4041, 4042...


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2:].split()  # after "pid (comm) "
    ppid = int(fields[1])
    return ppid if ppid > 0 else None


def _cmdline(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [part.decode(errors="replace") for part in f.read().split(b"\0")]
    except OSError:
        return []


def executor_id(master: str | None) -> str:
    """This task's executor id: ``--executor-id`` of the nearest ancestor JVM that has it; ``driver`` in local
    mode (``master`` local, or, where the task's properties lack it, an ancestor that is the driver's
    ``SparkSubmit`` JVM); else ``unknown`` with the parent's pid (a platform that starts executors otherwise)."""
    pid: int | None = os.getpid()
    driver_jvm = False
    for _ in range(12):
        pid = _parent(pid) if pid is not None else None
        if pid is None:
            break
        args = _cmdline(pid)
        if "--executor-id" in args:
            at = args.index("--executor-id")
            if at + 1 < len(args):
                return args[at + 1]
        driver_jvm = driver_jvm or "org.apache.spark.deploy.SparkSubmit" in args
    if (master or "").startswith("local") or (master is None and driver_jvm):
        return LOCAL_EXECUTOR
    return f"unknown (Python worker of pid {os.getppid()})"


def claim_executor(run_key: str, executor: str) -> bool:
    """Whether this task is the first of run ``run_key`` on ``executor`` (a file created exclusively in the
    executor's local folder, which Spark deletes with the application)."""
    folder = (os.environ.get("SPARK_LOCAL_DIRS") or "").split(",")[0] or tempfile.gettempdir()
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in f"{run_key}-{executor}")
    try:
        os.close(os.open(os.path.join(folder, f"kwire-check-{safe}"), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        return True
    except FileExistsError:
        return False
    except OSError:  # no writable local folder: check rather than skip
        return True


class StatusUnavailable(Exception):
    """Spark's status API could not be asked; the message says why."""


@dataclass(frozen=True)
class ReportedExecutor:
    id: str
    host: str


class SparkStatus:
    """Spark's status REST API of this application, as a task finds it (see the module docstring). A UI's first
    API request can take many seconds (its REST servlet starts then), hence the long ``timeout_s``."""

    def __init__(self, properties: dict[str, str | None], timeout_s: float = 30.0) -> None:
        self.app_id = properties.get("spark.app.id")
        self.driver_host = properties.get("spark.driver.host")
        self.ui_enabled = (properties.get("spark.ui.enabled") or "true").strip().lower() != "false"
        port = properties.get("spark.ui.port")
        self.ports = [int(port)] if port and port.strip().isdigit() and int(port) > 0 else \
            list(range(_UI_DEFAULT_PORT, _UI_DEFAULT_PORT + _UI_PORT_RETRIES + 1))
        self.timeout_s = timeout_s
        self.base: str | None = None

    def describe(self) -> str:
        return self.base or f"http://{self.driver_host}:{self.ports[0]}/api/v1"

    def _get(self, base: str, path: str):
        with urllib.request.urlopen(f"{base}/applications/{self.app_id}{path}", timeout=self.timeout_s) as answer:
            return json.loads(answer.read())

    def _find(self) -> tuple[str, list]:
        """The API's address and its list of executors (asked first: it is also how the API is found)."""
        if not self.ui_enabled:
            raise StatusUnavailable("the driver's UI, which serves Spark's status API, is off (spark.ui.enabled="
                                    "false)")
        if not self.app_id or not self.driver_host:
            raise StatusUnavailable("the task's local properties name no spark.app.id or spark.driver.host")
        if self.base is not None:
            return self.base, self._get(self.base, "/executors")
        tried = []
        for port in self.ports:
            base = f"http://{self.driver_host}:{port}/api/v1"
            try:
                listed = self._get(base, "/executors")
            except urllib.error.HTTPError as exc:  # another application's UI on this port
                tried.append(f"{port}: HTTP {exc.code}")
                continue
            except (OSError, ValueError) as exc:
                tried.append(f"{port}: {getattr(exc, 'reason', exc)}")
                if isinstance(getattr(exc, "reason", None), ConnectionRefusedError) and len(self.ports) > 1:
                    break  # the UI takes the first free port from 4040 up: nothing listens further up either
                continue
            self.base = base
            return base, listed
        raise StatusUnavailable(f"the driver's UI at {self.driver_host} did not answer for application "
                                f"{self.app_id}: {'; '.join(tried)}")

    def executors(self) -> list[ReportedExecutor]:
        """The active executors Spark reports (the driver left out)."""
        try:
            _, listed = self._find()
        except (OSError, ValueError) as exc:
            raise StatusUnavailable(f"{self.describe()}: {exc}") from None
        return [ReportedExecutor(str(e["id"]), str(e.get("hostPort", "")).rsplit(":", 1)[0]) for e in listed
                if str(e.get("id")) != LOCAL_EXECUTOR and e.get("isActive", True)]

    def stage_executors(self, stage: int, others: set[int], deadline: float) -> dict[str, str]:
        """Executor id -> host of the tasks of ``stage`` (its latest attempt) whose partition index is in ``others``
        and that succeeded, once each of those partitions has finished (or at ``deadline``, a ``time.monotonic()``
        value)."""
        base = self._find()[0]
        while True:
            try:
                attempt = max(a["attemptId"] for a in self._get(base, f"/stages/{stage}"))
                tasks = self._get(base, f"/stages/{stage}/{attempt}/taskList?length=100000")
            except (OSError, ValueError) as exc:
                raise StatusUnavailable(f"{base}: {exc}") from None
            done = {t["index"] for t in tasks if t.get("status") in ("SUCCESS", "FAILED", "KILLED")}
            if others <= done or time.monotonic() > deadline:
                return {str(t["executorId"]): str(t.get("host", "")) for t in tasks
                        if t["index"] in others and t.get("status") == "SUCCESS"}
            time.sleep(0.2)
