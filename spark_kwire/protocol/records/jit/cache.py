"""The ``@kernel`` decorator: numba's ``njit``, cached on disk."""

from __future__ import annotations

import numba


def kernel(fn=None, *, inline: bool = False):
    """``numba.njit(cache=True)``. Kernels release the GIL (``nogil``) so decoding can overlap network I/O in
    threads; ``inline=True`` marks a small helper that numba inlines into its callers."""
    options = {"inline": "always"} if inline else {"nogil": True}
    decorate = numba.njit(cache=True, **options)
    return decorate if fn is None else decorate(fn)
