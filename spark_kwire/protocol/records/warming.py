"""The first calls of a process do not wait for numba: small ones run on the pure-Python kernels meanwhile.

Until the numba kernels of a path (decoding, encoding, partitioning) are compiled in this process (or loaded
from numba's cache), each call asks :func:`kernels_for` which kernels to use: the first one starts compiling
the path in a background thread, by running a small sample through it, and calls meanwhile run on the
pure-Python kernels (same results, tested) until they have been given ``PURE_BUDGET_BYTES`` of input in
this process; after that, calls wait for the compiler. So a fresh Spark worker answers a small first query
(a few thousand records) without compiling first, and later processes load what it compiled from numba's
cache. When numba's disk cache already holds a path's kernels, its calls wait from the start: loading
them (about 0.4 s here) costs less than decoding beside the loading thread. The budget is small on purpose:
both threads need the GIL, and the compiler, which releases it for every LLVM call, gets it back only
slowly while the other thread decodes in Python (measured here: a compile of 3 CPU seconds took 16 s beside
30 MB of pure-Python decoding), so larger first queries are better served by waiting for it.

With the pure-Python implementation chosen at import, or inside ``kernels.using()`` (tests and benchmarks
that pick an implementation), there is nothing to choose. ``warm_up()`` compiles everything up front.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Callable

from . import kernels as K

PURE_BUDGET_BYTES = 4 * 1024 * 1024  # about a tenth of a second of pure-Python decoding, per process

_log = logging.getLogger("spark_kwire.protocol.records")
_samples: dict[str, Callable] = {}  # path -> runs a small sample through the path with the kernels it is given
_lock = threading.Lock()
_ready: dict[str, threading.Event] = {}
_started: set[str] = set()
_pure_bytes = 0  # input served by the pure-Python kernels while waiting for numba


def register_sample(path: str, sample: Callable) -> None:
    """Declares how to compile ``path``: ``sample(kernels)`` runs a small input through it."""
    _samples[path] = sample


def kernels_for(path: str, nbytes: int):
    """The kernels (a module offering ``kernels.KERNELS``) for one call on ``path`` with ``nbytes`` of input."""
    global _pure_bytes
    if K.IMPLEMENTATION != "numba" or K.bound_by_using():
        return K
    event = _event(path)
    if event.is_set():
        return K
    _start(path, event)
    if _pure_bytes + nbytes <= PURE_BUDGET_BYTES and not _loading_from_cache(path):
        _pure_bytes += nbytes
        from . import pure

        return pure
    event.wait()
    return K


_cached_on_disk: dict[str, bool] = {}


def _loading_from_cache(path: str) -> bool:
    """Whether ``path``'s kernels are in numba's disk cache: then loading them costs less than decoding the
    same input in pure Python beside the loading thread, and calls wait for them (checked once per process)."""
    cached = _cached_on_disk.get(path)
    if cached is None:
        from .jit.cache import cached_on_disk

        cached = _cached_on_disk[path] = cached_on_disk(path)
    return cached


def registered_paths() -> tuple[str, ...]:
    return tuple(_samples)


def mark_ready(*paths: str) -> None:
    """Records that ``paths`` (default: all registered) are compiled in this process."""
    for path in paths or tuple(_samples):
        _event(path).set()


def is_ready(path: str) -> bool:
    return _event(path).is_set()


def wait(*paths: str, timeout: float | None = None) -> bool:
    """Waits until ``paths`` (default: those whose compilation started) are ready; False on timeout."""
    return all(_event(path).wait(timeout) for path in paths or tuple(_started))


def _event(path: str) -> threading.Event:
    event = _ready.get(path)
    if event is None:
        with _lock:
            event = _ready.setdefault(path, threading.Event())
    return event


def _start(path: str, event: threading.Event) -> None:
    with _lock:
        if path in _started:
            return
        _started.add(path)
    threading.Thread(target=_compile, args=(path, event), name=f"kwire-compile-{path}", daemon=True).start()


def _compile(path: str, event: threading.Event) -> None:
    from . import jit

    try:
        _samples[path](jit)
        if not _loading_from_cache(path):  # else the note is there already
            jit.cache.remember_cached(path)
    except Exception:  # the next call of the path compiles in its own thread, where the error surfaces again
        _log.warning("compiling spark_kwire's %s kernels in the background failed", path, exc_info=True)
    finally:
        event.set()


def _forget_threads() -> None:
    # threads do not survive fork(): a child process compiles for itself (events already set stay set)
    global _lock, _pure_bytes
    _lock = threading.Lock()
    _pure_bytes = 0
    _started.clear()
    for path in [p for p, e in _ready.items() if not e.is_set()]:
        _ready[path] = threading.Event()


def _finish_compiles_before_fork() -> None:
    # A compiling thread holds numba's process-wide compiler lock; a child forked meanwhile would inherit the
    # lock held by a thread it does not have and wait for it forever. So fork() waits for running compiles.
    for path in list(_started):
        event = _ready.get(path)
        if event is not None:
            event.wait(FORK_WAITS_FOR_COMPILE_S)


FORK_WAITS_FOR_COMPILE_S = 300

if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_finish_compiles_before_fork, after_in_child=_forget_threads)
