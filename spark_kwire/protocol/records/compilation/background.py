"""Compiling a path's numba kernels in a helper process that fills numba's disk cache for every process here.

A compile in a thread of the process that needs it fights that process for the GIL: numba's compiler is
mostly Python, and a compile of 3 CPU seconds took 16 s beside pure-Python decoding. A helper process has an
interpreter of its own, so the process that asked goes on decoding on the pure-Python kernels at full speed
meanwhile, and later loads what the helper cached (``warming`` decides when). One helper per path per cache
on the machine: it holds the path's lock (``compiled_notes``) while it compiles, and notes the path as
cached when done, so the other Python workers of the machine wait for it instead of compiling again.

The helper is ``python -m spark_kwire.protocol.records.compilation.helper PATH...``; it logs what it compiled, and
what went wrong if anything, to ``<notes directory>/spark_kwire-compile-<key>.log``.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time

from .. import compiled_notes as notes

_log = logging.getLogger("spark_kwire.protocol.records")

POLL_S = 0.02
HELPER_MODULE = "spark_kwire.protocol.records.compilation.helper"


def log_path() -> str | None:
    directory = notes.notes_directory()
    return None if directory is None else os.path.join(directory, f"spark_kwire-compile-{notes.cache_key()}.log")


def start(paths: tuple[str, ...]) -> bool:
    """Starts a helper compiling those of ``paths`` that are neither cached nor being compiled; True when every
    one of them is cached or being compiled by some process, False when no helper can be started (no place for
    notes, no Python executable): then this process has to compile them itself."""
    if notes.notes_directory() is None or not sys.executable:
        return False
    mine = [p for p in paths if not notes.is_cached(p) and notes.try_lock(p, os.getpid())]
    if not mine:
        return all(notes.is_cached(p) or notes.lock_holder(p) is not None for p in paths)
    try:
        with open(log_path(), "ab") as log:
            helper = subprocess.Popen(
                [sys.executable, "-m", HELPER_MODULE, *mine], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=log, start_new_session=True,  # not stopped with the Spark worker that asked: it fills a cache
                close_fds=True)
    except OSError:
        _log.debug("cannot start a helper process to compile %s", mine, exc_info=True)
        for path in mine:
            notes.unlock(path)
        return False
    for path in mine:
        notes.hand_lock(path, helper.pid)
    _helpers.append(helper)
    return True


_helpers: list[subprocess.Popen] = []  # kept so that finished helpers are reaped (Popen polls them)


def wait(path: str, timeout: float) -> bool:
    """Waits until ``path`` is cached (True) or nobody compiles it any more, or ``timeout`` seconds passed
    (False); on False this process compiles it itself."""
    deadline = time.monotonic() + timeout
    while not notes.is_cached(path):
        for helper in _helpers:
            helper.poll()
        if notes.lock_holder(path) is None:
            if notes.is_cached(path):  # noted just before the lock went
                return True
            _warn_failed(path)
            return False
        if time.monotonic() > deadline:
            return False
        time.sleep(POLL_S)
    return True


def _warn_failed(path: str) -> None:
    tail = ""
    try:
        with open(log_path(), "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 2000))
            tail = f.read().decode("utf-8", "replace").strip().splitlines()[-1:]
    except (OSError, TypeError):
        pass
    _log.warning("the helper process compiling spark_kwire's %s kernels stopped without caching them (%s); "
                 "compiling them in this process", path, tail[0] if tail else "no error logged")


def forget_helpers() -> None:
    """In a forked child: the parent's helpers are not this process's children."""
    _helpers.clear()
