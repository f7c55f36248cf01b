"""Opt-in timing of where a write's time goes, per phase (``KWIRE_PROFILE``).

Off by default and then free: a disabled :class:`PhaseTimes` records nothing. Enabled (the environment variable
``KWIRE_PROFILE`` is set to anything but ``0``/empty, or ``PhaseTimes(True)``), each phase adds its seconds and
call count. One instance belongs to one thread (the producer's caller, or the sender thread); :func:`merge` adds
several up for a report. The Spark writer writes one JSON line per task to the file ``KWIRE_PROFILE`` names
(when it is a path) and returns the figures with the task's commit message.
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from typing import Iterable, Iterator

__all__ = ["PhaseTimes", "profiling_enabled", "merge"]


def profiling_enabled() -> bool:
    """True when ``KWIRE_PROFILE`` asks for per-phase timing."""
    return os.environ.get("KWIRE_PROFILE", "") not in ("", "0")


class PhaseTimes:
    """Seconds and calls per phase name, counted only when enabled."""

    __slots__ = ("enabled", "seconds", "calls")

    def __init__(self, enabled: bool | None = None) -> None:
        self.enabled = profiling_enabled() if enabled is None else bool(enabled)
        self.seconds: dict[str, float] = {}
        self.calls: dict[str, int] = {}

    def add(self, phase: str, seconds: float, calls: int = 1) -> None:
        if self.enabled:
            self.seconds[phase] = self.seconds.get(phase, 0.0) + seconds
            self.calls[phase] = self.calls.get(phase, 0) + calls

    def since(self, phase: str, started: float) -> float:
        """Count the time from ``started`` (a ``time.perf_counter()`` value) to now; returns now."""
        now = time.perf_counter()
        if self.enabled:
            self.add(phase, now - started)
        return now

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        if not self.enabled:
            yield
            return
        started = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - started)

    def snapshot(self) -> dict[str, dict[str, float]]:
        """``{phase: {"seconds": s, "calls": n}}`` (empty when disabled)."""
        return {name: {"seconds": round(s, 6), "calls": self.calls.get(name, 0)} for name, s in self.seconds.items()}

    def reset(self) -> None:
        self.seconds.clear()
        self.calls.clear()


def merge(snapshots: Iterable[dict[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    """Add up several :meth:`PhaseTimes.snapshot` results."""
    total: dict[str, dict[str, float]] = {}
    for snap in snapshots:
        for name, figures in (snap or {}).items():
            into = total.setdefault(name, {"seconds": 0.0, "calls": 0})
            into["seconds"] = round(into["seconds"] + figures.get("seconds", 0.0), 6)
            into["calls"] += figures.get("calls", 0)
    return total
