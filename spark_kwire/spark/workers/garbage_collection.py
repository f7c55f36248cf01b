"""Keep the full garbage collection PySpark runs after every call in a reused Python worker cheap.

A worker forked by PySpark's daemon (``pyspark.daemon``) is reused for many tasks and, after each one, runs
``gc.collect()``: a full collection that walks every object the process holds. Once kwire's modules and
compiled kernels are loaded (pyarrow, numba, llvmlite, pyspark), that is some 80,000 objects and 20-40 ms of
CPU, paid after every task, every planning call and every commit of every job and micro-batch, while Spark
waits for that worker or competes with it for the cores. The objects are modules, classes and kernels that
live as long as the process. kwire calls :func:`freeze_loaded_objects` as each of its calls into a worker
begins (before a task's data exists): it collects once and moves everything alive into Python's permanent
generation (``gc.freeze``), which later collections skip. Reference counting still frees frozen objects; only
cycles among them would outlive their use, which is why it freezes again only when modules were imported
since (a bounded number of times per process), and never outside the daemon's workers (a user's driver or
notebook process is left alone).
"""

from __future__ import annotations

import gc
import os
import sys

_frozen_at: tuple[int, int] | None = None  # (pid, number of modules) when this process last froze


DAEMON_MODULES = ("pyspark.daemon", "spark_kwire.spark.workers.daemon")  # PySpark's, and kwire's preloading one


def in_reused_spark_worker() -> bool:
    """Whether this process is a Python worker forked by PySpark's daemon (which collects after every call)."""
    main = sys.modules.get("__main__")
    return getattr(getattr(main, "__spec__", None), "name", None) in DAEMON_MODULES


def heavy_imports() -> list[str]:
    """Which of the large libraries a worker may do without are loaded in this process (for task statistics):
    numba (imported when kwire loads its compiled kernels) and pandas (by pyarrow's conversion of Python objects)."""
    return [name for name in ("numba", "pandas") if name in sys.modules]


def freeze_loaded_objects() -> bool:
    """In a daemon-forked Spark worker, collect and freeze what is alive, if modules were imported since this
    process last did; returns whether it froze. Cheap to call as every task and driver-side call begins."""
    global _frozen_at
    state = (os.getpid(), len(sys.modules))
    if state == _frozen_at or not in_reused_spark_worker():
        return False
    gc.collect()
    gc.freeze()
    _frozen_at = state
    return True
