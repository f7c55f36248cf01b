"""Compile (or load from numba's disk cache) the format kernels up front.

The decoder and encoder interpreters of each format are compiled once per machine (a few seconds each; then
loaded from the cache in a few tenths of a second), whatever the schemas: ``make setup`` calls :func:`warm_up` so
that a first query does not pay for it, and the data source may call it in the background. Each format brings its
own sample (``Codec.warm_up``, in its ``codec.py``).
"""

from __future__ import annotations

import time


def warm_up(formats=None) -> float:
    """Runs each format's small sample (``formats``: their names; every format by default) through its encoder and
    decoder with the chosen kernels; the seconds it took (mostly compiling, the first time on a machine)."""
    from .payload import CODECS, payload_format

    chosen = CODECS if formats is None else tuple(payload_format(name) for name in formats)
    start = time.perf_counter()
    for codec in chosen:
        codec.warm_up()
    return time.perf_counter() - start
