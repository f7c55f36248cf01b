"""The ``@kernel`` decorator: numba's ``njit``, cached on disk wherever that is possible.

numba keeps compiled machine code next to the sources (``__pycache__``), in ``NUMBA_CACHE_DIR`` or in the
user's cache directory, and raises at decoration time when none of them is writable: a read-only
site-packages with no writable home, as on some shared clusters and locked-down notebook services. Then
the kernels are cached in a private temporary directory (``<tmp>/spark-kwire-numba-<uid>``, mode 0700),
and when even that fails they are not cached at all: each process compiles them on first use. Either way
one warning is logged per process, saying what happened and how to choose a directory.
"""

from __future__ import annotations

import contextlib
import logging
import os

import numba
from numba.core import config as numba_config

from ..compiled_notes import private_temporary_directory

_log = logging.getLogger("spark_kwire.protocol.records")

CACHE_DEFAULT = "numba's default"
CACHE_TEMPORARY = "temporary directory"
CACHE_NONE = "none"


class _CacheChoice:
    """Where this process caches the kernels; decided at the first decoration, then kept."""

    mode: str | None = None
    directory: str | None = None


def cache_location() -> tuple[str | None, str | None]:
    """(mode, directory) chosen for the kernels' cache: mode is one of ``CACHE_*`` (None before the first
    kernel is defined); directory is set for ``CACHE_TEMPORARY``."""
    return _CacheChoice.mode, _CacheChoice.directory


def _no_locator(exc: RuntimeError) -> bool:
    return "no locator available" in str(exc)


@contextlib.contextmanager
def _numba_cache_dir(path: str):
    # numba reads CACHE_DIR when a function is decorated; restoring it leaves other numba users alone
    saved = numba_config.CACHE_DIR
    numba_config.CACHE_DIR = path
    try:
        yield
    finally:
        numba_config.CACHE_DIR = saved


def _fall_back(source_file: str) -> None:
    directory = private_temporary_directory()
    where = f"for {os.path.dirname(source_file)} (no writable __pycache__, NUMBA_CACHE_DIR or user cache directory)"
    if directory is not None:
        _CacheChoice.mode, _CacheChoice.directory = CACHE_TEMPORARY, directory
        _log.warning("numba cannot cache spark_kwire's record kernels %s; caching them in %s instead. "
                     "Set NUMBA_CACHE_DIR to a writable directory to choose another place.", where, directory)
    else:
        _CacheChoice.mode = CACHE_NONE
        _log.warning("numba cannot cache spark_kwire's record kernels %s, nor in a private temporary directory; "
                     "each process compiles them on first use (a few seconds). Set NUMBA_CACHE_DIR to a writable "
                     "directory to avoid this.", where)


def _compile(fn, options: dict):
    if _CacheChoice.mode in (None, CACHE_DEFAULT):
        try:
            dispatcher = numba.njit(cache=True, **options)(fn)
        except RuntimeError as exc:
            if not _no_locator(exc):
                raise
            _fall_back(fn.__code__.co_filename)
        else:
            _CacheChoice.mode = CACHE_DEFAULT
            return dispatcher
    if _CacheChoice.mode == CACHE_TEMPORARY:
        try:
            with _numba_cache_dir(_CacheChoice.directory):
                return numba.njit(cache=True, **options)(fn)
        except RuntimeError as exc:
            if not _no_locator(exc):
                raise
            _log.warning("numba cannot cache spark_kwire's record kernels in %s either; each process compiles "
                         "them on first use.", _CacheChoice.directory)
            _CacheChoice.mode, _CacheChoice.directory = CACHE_NONE, None
    return numba.njit(**options)(fn)


_kernels: list = []  # every dispatcher made by @kernel


def kernel(fn):
    """``numba.njit`` with caching as described above, releasing the GIL (``nogil``) so decoding can overlap
    network I/O in threads. Helpers are kernels too, called rather than inlined by numba: LLVM inlines them
    anyway, and numba-level inlining re-typed each helper in every caller, which nearly doubled compile time."""
    dispatcher = _compile(fn, {"nogil": True})
    _kernels.append(dispatcher)
    return dispatcher


def kernel_without_refcounts(fn, inline: bool = False):
    """:func:`kernel` for kernels that allocate nothing (no array is created inside): compiled without numba's
    reference counting (``_nrt=False``), so the arrays passed from kernel to kernel cost no atomic increments
    and decrements. The interpreter of ``spark_kwire/formats`` passes a dozen arrays per call and ran 10 to
    20 times faster so. Such a kernel fails to compile if it allocates. Not listed among the record kernels
    (:func:`loaded_index_files` and the warming notes concern those only). ``inline``: numba puts the kernel's
    code into each kernel calling it (for small helpers called once per row, whose calls LLVM did not inline)."""
    return _compile(fn, {"nogil": True, "_nrt": False, **({"inline": "always"} if inline else {})})


def loaded_index_files() -> list[str]:
    """The cache index files of every kernel compiled or loaded in this process so far (none when not cached)."""
    try:
        return sorted(k._cache._cache_file._index_path for k in _kernels if k.signatures)
    except AttributeError:  # not cached (numba's NullCache)
        return []
