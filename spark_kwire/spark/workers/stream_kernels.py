"""Streams load their numba record kernels at their first micro-batch instead of after half a second of work.

A Python process runs its first reads and writes on the pure-Python kernels until they have cost about what
loading the numba kernels costs (``protocol/records/compilation/warming.py``): right for a one-off query, which may never
need numba. A stream runs for long: on the pure kernels, a micro-batch of 1,500 small records took 15-50 ms to
read and write here against 5-7 ms on numba's, and the half second of loading came whenever the budget ran out,
a minute or more into a slow stream, as one late micro-batch. Loading them at a stream's first call in each
process (a task's Python worker, the driver's streaming process when it reads a small batch itself) puts that
half second where the workers start anyway, and every later micro-batch on the fast kernels. Kernels numba's
cache does not hold yet are compiled by a helper process as usual, without waiting for it.
"""

from __future__ import annotations

_loaded: set[tuple[str, ...]] = set()


def load_stream_kernels(*paths: str) -> None:
    """Load the kernels of `paths` (e.g. "decode"; "partition", "encode") into this process, once. The modules
    using them must be imported (they register the paths)."""
    if paths in _loaded:
        return
    from spark_kwire.protocol.records.compilation import warming

    registered = tuple(path for path in paths if path in warming.registered_paths())
    if registered:
        warming.preload(registered)
    _loaded.add(paths)
