"""Process-wide caches of registry answers, shared by every client of one registry in the process (Spark rebuilds
the client in each task; the schemas stay).

:class:`SingleFlightCache` is a thread-safe LRU map whose loads are single-flight: while one thread fetches a key,
others asking for it wait for that fetch instead of sending their own request (one HTTP request per schema id per
process, however many tasks start at once). A failed fetch is not cached: its waiters get its error, the next
caller tries again. ``ttl_s`` makes entries expire (the latest version of a subject).
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from typing import Any, Callable, Hashable

__all__ = ["SingleFlightCache", "process_cache", "forget_process_caches"]


class _Flight:
    __slots__ = ("done", "value", "error")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None


class SingleFlightCache:
    """See the module docstring. ``loads`` counts the fetches this cache ran (for tests)."""

    def __init__(self, capacity: int, ttl_s: float | None = None) -> None:
        self.capacity = capacity
        self.ttl_s = ttl_s
        self._entries: OrderedDict[Hashable, tuple[Any, float]] = OrderedDict()
        self._flights: dict[Hashable, _Flight] = {}
        self._lock = threading.Lock()
        self.loads = 0

    def get_or_load(self, key: Hashable, load: Callable[[], Any], *, wait_s: float) -> Any:
        """The cached value of ``key``, or the result of ``load()`` (run once for concurrent callers)."""
        with self._lock:
            hit = self._fresh(key)
            if hit is not None:
                return hit[0]
            flight = self._flights.get(key)
            leader = flight is None
            if leader:
                flight = self._flights[key] = _Flight()
        if not leader:
            if flight.done.wait(wait_s):
                if flight.error is not None:
                    raise flight.error
                return flight.value
            return self.get_or_load(key, load, wait_s=wait_s)  # the leader hangs: go ahead without it
        try:
            value = load()
        except BaseException as exc:
            flight.error = exc
            raise
        else:
            flight.value = value
            with self._lock:
                self.loads += 1
                self._entries[key] = (value, time.monotonic())
                self._entries.move_to_end(key)
                while len(self._entries) > self.capacity:
                    self._entries.popitem(last=False)
            return value
        finally:
            with self._lock:
                if self._flights.get(key) is flight:
                    del self._flights[key]
            flight.done.set()

    def peek(self, key: Hashable) -> Any:
        """The cached value of ``key`` or None (no fetch)."""
        with self._lock:
            hit = self._fresh(key)
            return hit[0] if hit is not None else None

    def _fresh(self, key: Hashable) -> tuple[Any, float] | None:
        hit = self._entries.get(key)
        if hit is None:
            return None
        if self.ttl_s is not None and time.monotonic() - hit[1] >= self.ttl_s:
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return hit

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def _reset_after_fork(self) -> None:
        self._lock = threading.Lock()
        self._flights = {}


_caches: dict[Hashable, SingleFlightCache] = {}
_caches_lock = threading.Lock()


def process_cache(key: Hashable, capacity: int, ttl_s: float | None = None) -> SingleFlightCache:
    """The process's cache for ``key`` (a registry and what is cached), created on first use."""
    with _caches_lock:
        cache = _caches.get(key)
        if cache is None:
            cache = _caches[key] = SingleFlightCache(capacity, ttl_s)
        return cache


def forget_process_caches() -> None:
    """Drop every cached registry answer of this process."""
    with _caches_lock:
        _caches.clear()


def _after_fork_in_child() -> None:
    global _caches_lock
    _caches_lock = threading.Lock()
    for cache in _caches.values():
        cache._reset_after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
