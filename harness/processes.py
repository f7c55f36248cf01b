"""Processes for the harness: free ports, children that die with their parent, /proc look-ups, and
one spawner thread that starts children from any thread (see :class:`_Spawner`)."""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import socket
import subprocess


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_answers(port: int) -> bool:
    """Whether something accepts TCP connections on 127.0.0.1:port."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _pdeathsig() -> None:
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def die_with_parent() -> None:
    """Runs in the child before exec: ask Linux to SIGKILL it when the parent process dies, in a new session."""
    _pdeathsig()
    os.setsid()


def descendant_pids(pid: int) -> list[int]:
    """Every live process below ``pid`` (children, grandchildren...), read from /proc (Linux)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ')'.
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def descendants_running(pid: int, *markers: bytes) -> list[int]:
    """Processes below ``pid`` whose command line contains one of ``markers``."""
    found = []
    for child in descendant_pids(pid):
        try:
            with open(f"/proc/{child}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if any(marker in cmd for marker in markers):
            found.append(child)
    return found


def spark_python_workers(pid: int) -> list[int]:
    """Spark's Python worker processes (daemon and workers) below ``pid``: those of this process's Spark
    session, not of other sessions on the machine."""
    return descendants_running(pid, b"pyspark.daemon", b"pyspark.worker")


def process_start_time(pid: int) -> int | None:
    """The start time of process ``pid`` (clock ticks since boot), or None when it does not exist: with the
    pid, it names one process even after the pid is reused."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2:].split()
    return int(fields[19]) if len(fields) > 19 else None


def identify(pids) -> list[tuple[int, int]]:
    """(pid, start time) of the processes among ``pids`` that still exist."""
    out = []
    for pid in pids:
        started = process_start_time(pid)
        if started is not None:
            out.append((pid, started))
    return out


def kill_processes(identities, sig: int = signal.SIGKILL) -> None:
    """Signal the processes named by (pid, start time), skipping pids that now belong to another process."""
    for pid, started in identities:
        if process_start_time(pid) != started:
            continue
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


class _Spawner:
    """One long-lived daemon thread that starts child processes for the whole Python process.

    Two reasons not to fork from an arbitrary thread with ``preexec_fn`` (as ``die_with_parent`` needs):

    * a fork that runs Python code in the child (a ``preexec_fn``) runs CPython's after-fork clean-up
      there, which finalizes the other threads' thread-local objects -- among them py4j's per-thread
      connections to the Spark JVM, whose close shuts the socket down for the parent too: the parent's
      threads silently get new JVM threads, without Spark's active session (``format("kwire")`` then fails
      with DATA_SOURCE_NOT_FOUND) and a call in flight breaks;
    * PR_SET_PDEATHSIG fires when the *thread* that forked exits, so a node restarted from a short-lived
      thread is SIGKILLed as soon as that thread ends.

    So children are started here, with no Python code in the child (``start_new_session`` instead of
    ``os.setsid`` in a ``preexec_fn``), through util-linux ``setpriv --pdeathsig KILL`` when it exists:
    they still die with this process (the spawner thread lives as long as it does).
    """

    def __init__(self) -> None:
        import queue
        import threading

        self._requests: "queue.Queue" = queue.Queue()
        self._lock = threading.Lock()
        self._thread = None
        self.setpriv = shutil.which("setpriv")

    def _loop(self) -> None:
        while True:
            args, kwargs, box, done = self._requests.get()
            try:
                box.append(subprocess.Popen(*args, **kwargs))
            except BaseException as exc:  # handed to the caller
                box.append(exc)
            done.set()

    def popen(self, cmd: list[str], **kwargs) -> subprocess.Popen:
        import threading

        if self.setpriv:
            cmd = [self.setpriv, "--pdeathsig", "KILL", "--", *cmd]
        else:  # still die with this process; the child then runs Python code after the fork (see above)
            kwargs.setdefault("preexec_fn", _pdeathsig)
        kwargs.setdefault("start_new_session", True)
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="kwire-spawner", daemon=True)
                self._thread.start()
        box: list = []
        done = threading.Event()
        self._requests.put(((cmd,), kwargs, box, done))
        done.wait()
        if isinstance(box[0], BaseException):
            raise box[0]
        return box[0]


spawner = _Spawner()
