"""A Spark standalone cluster (master and workers) on loopback, whose executors tests can kill."""

from __future__ import annotations

import atexit
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from harness.paths import KafkaLauncherError
from harness.processes import descendant_pids, descendants_running, free_port, identify, kill_processes, spawner


class SparkStandaloneCluster:
    """A Spark standalone master and ``workers`` workers on 127.0.0.1, from the PySpark wheel's jars.

    Each daemon runs ``bin/spark-class`` in its own process group, dies with the Python process that started
    it (PR_SET_PDEATHSIG through ``setpriv``, see :class:`_Spawner`), and logs to ``workdir``. ``master_url`` is what a driver passes as its master.
    ``executor_pids()`` lists the executor JVMs the workers launched (``kill_executor`` SIGKILLs one).
    ``stop()`` (also on leaving a ``with`` block and at interpreter exit) kills the daemons, their executors
    and the executors' Python workers, and deletes ``workdir``. ``env`` adds to (or, with None values, removes
    from) the environment of the daemons, which their executors and Python workers inherit: e.g.
    ``{"KRB5_CONFIG": "/nowhere"}`` for executors on hosts without Kerberos. ``hidden`` folders are absent for the
    workers and their executors: each worker runs in a mount namespace of its own (``unshare --mount``, as root) with
    an empty tmpfs over each folder, as on a host where the files were never copied.
    """

    def __init__(self, workers: int = 2, *, cores: int = 1, memory: str = "1g", daemon_memory: str = "256m",
                 workdir: str | None = None, env: dict[str, str | None] | None = None,
                 hidden: list[str] | tuple[str, ...] = ()) -> None:
        import pyspark

        self.spark_home = Path(pyspark.__file__).resolve().parent
        self.worker_count = workers
        self.cores = cores
        self.memory = memory
        self.daemon_memory = daemon_memory
        self.extra_env = dict(env or {})
        self.hidden = [str(Path(folder).resolve()) for folder in hidden]
        if self.hidden and (os.geteuid() != 0 or not shutil.which("unshare")):
            raise KafkaLauncherError("hiding folders from Spark workers needs root and util-linux unshare")
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="kwire-spark-standalone-"))
        self.master_port = free_port()
        self.master_url = f"spark://127.0.0.1:{self.master_port}"
        self.master: subprocess.Popen | None = None
        self.workers: list[subprocess.Popen] = []
        self._logs: list[Path] = []
        self._stopped = False

    def _env(self) -> dict:
        env = dict(os.environ)
        env.update({
            "SPARK_HOME": str(self.spark_home),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_MASTER_HOST": "127.0.0.1",
            "SPARK_DAEMON_MEMORY": self.daemon_memory,
            "SPARK_DAEMON_JAVA_OPTS": "-XX:TieredStopAtLevel=1",  # starts faster; master and workers do little
            "SPARK_LOG_DIR": str(self.workdir / "logs"),
            "SPARK_PID_DIR": str(self.workdir / "pids"),
            "SPARK_WORKER_DIR": str(self.workdir / "work"),
            "SPARK_NO_DAEMONIZE": "1",
        })
        for key, value in self.extra_env.items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        return env

    def _daemon(self, name: str, main_class: str, *args: str, hide: bool = False) -> subprocess.Popen:
        log_path = self.workdir / f"{name}.log"
        self._logs.append(log_path)
        command = [str(self.spark_home / "bin" / "spark-class"), main_class, *args]
        if hide and self.hidden:  # mounts private to this worker's namespace; then exec the worker in it
            mounts = " && ".join(f"mount -t tmpfs kwire-hidden {shlex.quote(folder)}" for folder in self.hidden)
            command = ["unshare", "--mount", "--propagation", "private", "sh", "-c", f'{mounts} && exec "$@"',
                       "sh", *command]
        with open(log_path, "ab") as log:
            return spawner.popen(  # not preexec_fn: see _Spawner (defined below, used at run time)
                command,
                stdout=log, stderr=subprocess.STDOUT, env=self._env(), cwd=self.workdir,
            )

    def _wait_for_line(self, proc: subprocess.Popen, log_path: Path, line: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            text = log_path.read_text(errors="replace") if log_path.exists() else ""
            if line in text:
                return
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = "\n".join(text.splitlines()[-40:])
                self.stop()
                raise KafkaLauncherError(f"Spark daemon {log_path.name} did not log {line!r} "
                                         f"(exit code {proc.poll()}):\n{tail}")
            time.sleep(0.2)

    def start(self, timeout: float = 90) -> "SparkStandaloneCluster":
        for sub in ("logs", "pids", "work"):
            (self.workdir / sub).mkdir(parents=True, exist_ok=True)
        _live_spark_clusters.add(self)
        self.master = self._daemon("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                   "--port", str(self.master_port), "--webui-port", str(free_port()))
        self._wait_for_line(self.master, self.workdir / "master.log", "I have been elected leader", timeout)
        for i in range(self.worker_count):
            work = self.workdir / "work" / f"worker-{i}"
            work.mkdir(parents=True, exist_ok=True)
            self.workers.append(self._daemon(
                f"worker-{i}", "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                "--port", str(free_port()), "--webui-port", str(free_port()), "--cores", str(self.cores),
                "--memory", self.memory, "--work-dir", str(work), self.master_url, hide=True))
        for i, proc in enumerate(self.workers):
            self._wait_for_line(proc, self.workdir / f"worker-{i}.log", "Successfully registered with master",
                                timeout)
        return self

    def executor_pids(self) -> list[int]:
        """Pids of the executor JVMs (CoarseGrainedExecutorBackend) running under this cluster's workers."""
        return [pid for worker in self.workers
                for pid in descendants_running(worker.pid, b"CoarseGrainedExecutorBackend")]

    def kill_executor(self, pid: int | None = None) -> int:
        """SIGKILL one executor (the first one found when ``pid`` is None); returns its pid."""
        pids = self.executor_pids()
        if not pids:
            raise KafkaLauncherError("no executor is running")
        victim = pid if pid is not None else pids[0]
        if victim not in pids:
            raise KafkaLauncherError(f"pid {victim} is not an executor of this cluster")
        kill_processes(identify([victim]))
        return victim

    def log_tail(self, lines: int = 40) -> str:
        out = []
        for path in self._logs:
            try:
                text = path.read_text(errors="replace").splitlines()[-lines:]
            except OSError:
                continue
            out.append(f"--- {path.name}\n" + "\n".join(text))
        return "\n".join(out)

    def stop(self) -> None:
        """Kill the workers (with their executors and Python workers) and the master; delete the workdir."""
        if self._stopped:
            return
        self._stopped = True
        procs = [p for p in [*self.workers, self.master] if p is not None]
        below = identify(pid for p in procs for pid in descendant_pids(p.pid))
        for proc in procs:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + 10
        for proc in procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                proc.wait(timeout=10)
        kill_processes(below)  # executors and the Python daemons (which run in process groups of their own)
        shutil.rmtree(self.workdir, ignore_errors=True)
        _live_spark_clusters.discard(self)

    def __enter__(self) -> "SparkStandaloneCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


_live_spark_clusters: set[SparkStandaloneCluster] = set()


@atexit.register
def _stop_all_spark_clusters() -> None:
    for cluster in list(_live_spark_clusters):
        cluster.stop()
