"""PySpark's worker daemon with kwire loaded before it forks: ``spark.python.daemon.module=spark_kwire.spark.workers.daemon``.

Spark forks its Python workers from daemon processes (one per worker module: tasks, and on the driver the
planning calls, the writer's creation and the commit), and stops workers idle for a minute: the first query
after a pause gets new workers, each importing kwire (and PySpark's worker module) and loading its numba
kernels again, some 0.2 to 1 s a worker that Spark's JVM connector never pays. Started as the daemon (opt-in,
a Spark setting read when the application starts), this module imports what the workers of its worker
module use; the tasks' daemon also loads the kernels numba's disk cache holds (and has a helper process
compile the common ones it lacks, without waiting for it). It freezes what it loaded for the garbage
collector, then runs PySpark's own daemon: every worker it forks starts with all of that in memory, shared
with the daemon until written.

It costs each daemon's start (about 1.5 s for the tasks' daemon, a few tenths for the others, once per
application and executor) and the memory of what they load (the tasks' daemon about 270 MB resident instead
of PySpark's 30, pages its workers share). It cannot be used where the Spark settings of the cluster cannot
be chosen (serverless compute, Spark Connect clients of a shared cluster).
Whatever fails to load is logged and left to the workers, which then load it as they would without this module.
Nothing may be written to standard output here: PySpark's daemon answers the JVM there.

PySpark's own daemon imports nothing before forking, because a thread running at fork() is missing in the
child while what it held stays held. This one starts no Python thread (a helper compiling kernels is a
process), but importing pyarrow starts its allocator's (jemalloc's) background thread and importing numpy
OpenBLAS's worker threads; both libraries reset their threads and locks in a forked child (fork handlers),
which is what makes forking after importing them safe, as PyTorch's data loaders commonly do.
"""

from __future__ import annotations

import gc
import importlib
import logging
import os
import sys
import threading
import time

_log = logging.getLogger("spark_kwire")

# What the workers of each PySpark worker module import to plan, read and write with kwire. Spark runs one
# daemon per worker module (planning calls, the driver's writer and commit, tasks): only the tasks' daemon
# loads numba and the kernels.
KWIRE_MODULES = {
    "pyspark.sql.worker.lookup_data_sources": ("pyspark_kwire",),
    "pyspark.sql.worker.create_data_source": ("pyspark_kwire",),
    "pyspark.sql.worker.plan_data_source_read": ("pyspark_kwire", "spark_kwire.spark.reading.batch",
                                                 "spark_kwire.spark.reading.stream"),
    "pyspark.sql.worker.write_into_data_source": ("pyspark_kwire", "spark_kwire.spark.writing.writer"),
    "pyspark.sql.worker.commit_data_source_write": ("spark_kwire.spark.writing.writer",),
    "pyspark.sql.worker.python_streaming_sink_runner": ("spark_kwire.spark.writing.writer",),
    "pyspark.worker": ("spark_kwire.spark.reading.reader", "spark_kwire.spark.writing.task_writer"),
}
TASK_WORKER = "pyspark.worker"

loaded: dict = {}  # what preload() did, for tests and diagnostics


def preload(worker_module: str = TASK_WORKER) -> dict:
    """Imports what workers of ``worker_module`` use (the module itself and kwire's modules for it) and, for
    the tasks' workers, loads the cached kernels; returns what was loaded and how long it took."""
    started = time.perf_counter()
    modules = []
    for name in (worker_module, *KWIRE_MODULES.get(worker_module, ("pyspark_kwire",))):
        try:
            importlib.import_module(name)
            modules.append(name)
        except ImportError as exc:  # a module this PySpark does not have
            _log.debug("kwire daemon: not preloading %s (%s)", name, exc)
    kernels = {}
    if worker_module == TASK_WORKER:
        try:
            from spark_kwire.protocol.records.compilation import warming

            kernels = warming.preload()
            if any(how == "compiling in a helper" for how in kernels.values()) and hasattr(os, "register_at_fork"):
                os.register_at_fork(before=_load_what_helpers_cached)
        except Exception:  # noqa: BLE001 - the workers load what the daemon could not
            _log.warning("kwire daemon: loading the record kernels failed; workers will load them", exc_info=True)
    gc.collect()
    gc.freeze()  # forked workers start with these objects out of the collector's way (see spark/workers/garbage_collection.py)
    loaded.update(worker_module=worker_module, modules=modules, kernels=kernels,
                  seconds=round(time.perf_counter() - started, 3), python_threads=threading.active_count(),
                  native_threads=_native_threads())
    return loaded


def _load_what_helpers_cached() -> None:
    """Before each fork of the tasks' daemon, while helpers compile (a new environment): loads the kernels they
    have cached since, so that the workers forked from now on start with them (checking costs a few file reads)."""
    from spark_kwire.protocol.records.compilation import warming

    waiting = [path for path, how in loaded.get("kernels", {}).items() if how == "compiling in a helper"]
    if not waiting:
        return
    try:
        done = warming.preload(tuple(waiting))
    except Exception:  # noqa: BLE001 - the workers load what the daemon could not
        _log.warning("kwire daemon: loading the record kernels failed; workers will load them", exc_info=True)
        loaded["kernels"].update((path, "failed") for path in waiting)
        return
    newly = [path for path in waiting if done.get(path) == "loaded"]
    if newly:
        loaded["kernels"].update((path, "loaded before a fork") for path in newly)
        gc.collect()
        gc.freeze()


def _native_threads() -> list[str]:
    """Names of this process's threads: besides the main one, pyarrow's jemalloc starts a background thread
    and numpy's OpenBLAS its workers when imported; both libraries reset them in a forked child."""
    try:
        tasks = sorted(os.listdir("/proc/self/task"))
        names = []
        for task in tasks:
            with open(f"/proc/self/task/{task}/comm", encoding="utf-8") as f:
                names.append(f.read().strip())
        return names
    except OSError:
        return []


def main() -> None:
    # PySpark starts its daemon as `python -m <daemon module> <worker module>` (the worker module it forks for)
    worker_module = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1].startswith("pyspark") else TASK_WORKER
    try:
        preload(worker_module)
    except Exception:  # noqa: BLE001 - never keep Spark from starting its workers
        _log.warning("kwire daemon: preloading failed; starting PySpark's daemon without it", exc_info=True)
    from pyspark.daemon import manager

    manager()


if __name__ == "__main__":
    main()
