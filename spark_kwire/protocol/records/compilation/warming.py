"""The first calls of a process do not wait for numba: they run on the pure-Python kernels while that is cheaper.

A process gets the numba kernels of a path (decoding, encoding, partitioning) by loading them from numba's
disk cache (importing numba and loading a first path cost about half a second) or, in a new environment, by
compiling them (seconds). Until a path's kernels are loaded in this process, each call asks
:func:`kernels_for` which kernels to use:

* when numba's cache holds the path (``compiled_notes``), calls run on the pure-Python kernels (same
  results, tested) until they have taken ``PURE_SECONDS_BEFORE_LOADING`` in this process, about what loading
  costs; then the next call loads the kernels and uses them. So a small query in a new Python worker (Spark
  starts new ones after a minute without work) never imports numba, and a large one loses at most that much.
* when it does not, calls run on the pure-Python kernels, and the first call that brings them past
  ``PURE_SECONDS_BEFORE_COMPILING`` (estimated) starts a helper process compiling the path into numba's disk
  cache (``background_compile``): a process whose work stays under that never starts one, as loading the
  kernels would cost it more than it saves, and a first small query does not share the cores with a compile.
  Calls go on on the pure-Python kernels until they have taken ``PURE_SECONDS_WHILE_COMPILING``; then they
  wait for the helper and load what it cached. The helper has an
  interpreter of its own, so nothing fights for this process's GIL (a compile in a thread here took 16 s
  instead of 3 beside pure-Python decoding), and every other process of the machine waits for the same
  helper instead of compiling again. Where no helper can be started, the process compiles in place when its
  budget is spent.

A call whose input alone would take longer than what is left of the budget (estimated per byte) does not start
on the pure-Python kernels. With the pure-Python implementation chosen (``kernels``), or inside
``kernels.using()`` (tests and benchmarks that pick one), there is nothing to choose. ``warm_up()`` compiles
everything in this process; :func:`preload` loads every cached path (Spark's daemon, ``spark.daemon``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from typing import Callable

from . import background as background_compile
from .. import compiled_notes as notes
from .. import kernels as K

PURE_SECONDS_BEFORE_LOADING = 0.5  # about what importing numba and loading a first path's kernels cost here
PURE_SECONDS_BEFORE_COMPILING = PURE_SECONDS_BEFORE_LOADING  # less work than this never pays for numba
PURE_SECONDS_WHILE_COMPILING = 2.0  # about what a helper takes to compile a path on a free core
COMPILE_WAIT_S = 600  # the longest a call waits for a helper before compiling in this process
# Pure-Python seconds per byte of input, about twice what benchmarks/decode_micro.py measures (100-byte records,
# 10-byte keys for partitioning): only to keep one large call from starting on the slow kernels.
_PURE_SECONDS_PER_BYTE = {"decode": 25e-9, "decode_headers": 250e-9, "encode": 20e-9, "partition": 60e-9,
                          "hash": 60e-9}
# Paths used together: a write partitions and encodes, so one helper compiles both.
COMPILED_TOGETHER = {"partition": ("partition", "encode"), "encode": ("encode", "partition")}

_log = logging.getLogger("spark_kwire.protocol.records")
_samples: dict[str, Callable] = {}  # path -> runs a small sample through the path with the kernels it is given
_ready: set[str] = set()  # paths whose numba kernels this process has loaded or compiled
_asked: set[str] = set()  # paths this process found compiling, or asked a helper to compile
_compile_here: set[str] = set()  # paths no helper compiles: this process compiles them when needed
_load_lock = threading.RLock()
_pure_seconds = 0.0  # time calls of this process spent on the pure-Python kernels while waiting for numba
_timings: dict[str, dict] = {}  # path -> how its kernels were obtained and the seconds that took


def register_sample(path: str, sample: Callable) -> None:
    """Declares how to compile ``path``: ``sample(kernels)`` runs a small input through it."""
    _samples[path] = sample


def run_sample(path: str, implementation) -> None:
    _samples[path](implementation)


def registered_paths() -> tuple[str, ...]:
    return tuple(_samples)


@contextlib.contextmanager
def kernels_for(path: str, nbytes: int):
    """``with kernels_for(path, nbytes) as k``: the kernels (a module offering ``kernels.KERNELS``) for one call on
    ``path`` with ``nbytes`` of input; the time the block takes on the pure-Python kernels counts against the
    process's budget."""
    global _pure_seconds
    chosen = choose(path, nbytes)
    if chosen is K:
        yield K
        return
    started = time.perf_counter()
    try:
        yield chosen
    finally:
        _pure_seconds += time.perf_counter() - started


def choose(path: str, nbytes: int):
    """The kernels for one call (see the module's docstring): ``kernels`` itself, or the ``pure`` module."""
    if K.IMPLEMENTATION != "numba" or K.bound_by_using() or path in _ready:
        return K
    cached = _cached(path)
    if cached and _ready:  # numba is loaded already: a further path loads in a few hundredths of a second
        load(path)
        return K
    after_this_call = _pure_seconds + nbytes * _PURE_SECONDS_PER_BYTE.get(path, 100e-9)
    if not cached and after_this_call > PURE_SECONDS_BEFORE_COMPILING:
        _ask_for_compile(path)
    budget = PURE_SECONDS_BEFORE_LOADING if cached else PURE_SECONDS_WHILE_COMPILING
    if after_this_call <= budget:
        from .. import pure

        return pure
    load(path)
    return K


_known_cached: set[str] = set()


def _cached(path: str) -> bool:
    """``compiled_notes.is_cached``, remembered once true (it reads the note and looks for every index file)."""
    if path in _known_cached:
        return True
    if notes.is_cached(path):
        _known_cached.add(path)
        return True
    return False


def _ask_for_compile(path: str) -> None:
    if path in _asked or path in _compile_here:
        return
    with _load_lock:
        if path in _asked or path in _compile_here:
            return
        if background_compile.start(COMPILED_TOGETHER.get(path, (path,))):
            _asked.add(path)
        else:
            _compile_here.add(path)


def load(path: str) -> None:
    """Loads ``path``'s numba kernels into this process now (waiting for a helper compiling them first, or
    compiling them here when none does), and marks the path ready."""
    with _load_lock:
        if path in _ready:
            return
        started = time.perf_counter()
        how = "loaded from numba's cache"
        if not notes.is_cached(path):
            helper_done = path not in _compile_here and background_compile.wait(path, COMPILE_WAIT_S)
            how = "waited for a helper, then loaded" if helper_done else "compiled in this process"
        implementation = K.load()
        _samples[path](implementation)
        if K.IMPLEMENTATION == "numba" and not notes.is_cached(path):
            notes.remember(path, implementation.cache.loaded_index_files())
        _ready.add(path)
        _timings[path] = {"how": how, "seconds": round(time.perf_counter() - started, 4),
                          "pure_seconds_before": round(_pure_seconds, 4), "pid": os.getpid()}
        _log.debug("spark_kwire's %s kernels: %s in %.3f s", path, how, time.perf_counter() - started)


COMMON_PATHS = ("decode", "partition", "encode")  # what most reads and writes use (not headers, not hashes)


def preload(paths: tuple[str, ...] | None = None) -> dict[str, str]:
    """Loads now the kernels of ``paths`` (default: every registered path) that numba's cache holds, and has one
    helper compile the common ones it does not hold, without waiting for it; returns what it did per path. For
    a process that forks workers later (Spark's daemon): they start with these kernels loaded."""
    done, missing = {}, []
    for path in paths or registered_paths():
        if K.IMPLEMENTATION != "numba" or path in _ready:
            done[path] = "ready"
        elif notes.is_cached(path):
            load(path)
            done[path] = "loaded"
        else:
            done[path] = "not cached"
            if path in COMMON_PATHS:
                missing.append(path)
    if missing and background_compile.start(tuple(missing)):
        _asked.update(missing)
        done.update((path, "compiling in a helper") for path in missing)
    return done


def timings() -> dict[str, dict]:
    """How each path's kernels got into this process (``pid`` another process's: loaded before this one was forked
    from it) and how long that took, and the pure-Python seconds spent while they were not loaded (reported in the
    Spark tasks' statistics)."""
    return {"pure_seconds": round(_pure_seconds, 4), **{path: dict(t) for path, t in _timings.items()}}


def mark_ready(*paths: str) -> None:
    """Records that ``paths`` (default: all registered) are compiled in this process."""
    _ready.update(paths or tuple(_samples))


def is_ready(path: str) -> bool:
    return path in _ready


def wait(*paths: str, timeout: float | None = None) -> bool:
    """Loads ``paths`` (default: those this process asked a helper to compile) into this process, waiting for
    the helpers up to ``timeout`` seconds; False when one was still compiling then."""
    deadline = None if timeout is None else time.monotonic() + timeout
    for path in paths or tuple(_asked | _compile_here):
        if path in _ready or K.IMPLEMENTATION != "numba":
            continue
        if not notes.is_cached(path) and path not in _compile_here:
            left = COMPILE_WAIT_S if deadline is None else max(0.0, deadline - time.monotonic())
            if not background_compile.wait(path, left) and notes.lock_holder(path) is not None:
                return False
        load(path)
    return True


FORK_WAITS_FOR_LOAD_S = 300
_held_for_fork = False


def _before_fork() -> None:
    # A thread loading or compiling holds numba's process-wide compiler lock; a child forked meanwhile would
    # inherit it held by a thread it does not have, and wait for it forever. So fork() waits for the load.
    global _held_for_fork
    _held_for_fork = _load_lock.acquire(timeout=FORK_WAITS_FOR_LOAD_S)


def _after_fork_in_parent() -> None:
    global _held_for_fork
    if _held_for_fork:
        _held_for_fork = False
        _load_lock.release()


def _after_fork_in_child() -> None:
    global _load_lock, _pure_seconds, _held_for_fork
    _load_lock = threading.RLock()
    _held_for_fork = False
    _pure_seconds = 0.0  # a new process, with a budget of its own; kernels loaded before the fork stay loaded
    background_compile.forget_helpers()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                         after_in_child=_after_fork_in_child)
