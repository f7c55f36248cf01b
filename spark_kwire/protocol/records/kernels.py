"""The record kernels, compiled by numba (``jit``) or in plain Python (``pure``).

numba is used unless the environment variable ``KWIRE_NO_NUMBA`` is true (``1``, ``true``, ``yes``, ``on``)
or numba is not installed or cannot be imported (e.g. broken against the installed numpy); then the
pure-Python kernels run, with one warning in the last two cases. Both offer the functions named in
``KERNELS``, with the same arguments and results, so the rest of the package calls ``kernels.<name>`` either
way. Importing this module does not import numba: the kernels are bound on first use (``load()``), and
``warming`` decides per call whether a call waits for numba or runs on ``pure`` meanwhile. The constants of
``layout`` are re-exported here for the callers' convenience.

On a Spark cluster, set the variable for the Python workers too (``spark.executorEnv.KWIRE_NO_NUMBA``).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import logging
import os

from .layout import *  # noqa: F403 - error codes, kinds and table rows, used as kernels.<NAME>

_log = logging.getLogger("spark_kwire.protocol.records")

NO_NUMBA_VARIABLE = "KWIRE_NO_NUMBA"
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("", "0", "false", "no", "off")

# what both implementations define
KERNELS = (
    "count_entries", "scan_entries", "control_type", "txn_filter", "decode_regions", "decode_v2_regions",
    "gather_binary", "header_totals", "header_fill", "encoded_records_size", "encode_records", "split_points",
    "murmur2_partitions", "murmur2_hashes", "read_varint", "read_varlong", "varint_size", "write_varint",
    "crc32c_range", "crc32_range", "HW_CRC32C",
)


def numba_refused(environ=os.environ) -> bool:
    """Whether ``KWIRE_NO_NUMBA`` asks for the pure-Python kernels; a value that is neither true nor false
    is an error rather than a guess."""
    raw = environ.get(NO_NUMBA_VARIABLE, "")
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"{NO_NUMBA_VARIABLE}={raw!r}: expected one of {', '.join(_TRUE)} (use the pure-Python "
                     f"kernels) or {', '.join(repr(v) for v in _FALSE)} (use numba)")


def _choose():
    """The implementation to use and why, without importing numba (a quarter to half a second): numba is chosen
    when it is installed and not refused; whether it imports is found out when a kernel is first needed."""
    if numba_refused():
        return "python", f"{NO_NUMBA_VARIABLE} is set"
    if importlib.util.find_spec("numba") is None:
        _log.warning("numba is not installed; spark_kwire decodes and encodes records with its pure-Python kernels, "
                     "many times slower. Install numba, or set %s=1 to choose the pure-Python kernels without this "
                     "warning.", NO_NUMBA_VARIABLE)
        return "python", "numba is not installed"
    return "numba", "numba is installed"


IMPLEMENTATION, WHY = _choose()
"""``"numba"`` or ``"python"``; ``WHY`` says what decided it. ``"numba"`` until importing it fails."""


def _bind(module) -> None:
    globals().update({name: getattr(module, name) for name in KERNELS})


def load():
    """Imports the chosen implementation now and binds its kernels here; returns it. When numba fails to import
    (e.g. broken against the installed numpy), falls back to the pure-Python kernels with one warning."""
    global IMPLEMENTATION, WHY
    if IMPLEMENTATION == "numba":
        try:
            from . import jit
        except Exception as exc:  # ImportError, or whatever a numba broken against this numpy raises
            _log.warning("numba cannot be imported (%s: %s); spark_kwire decodes and encodes records with its "
                         "pure-Python kernels, many times slower. Install a numba that works with this numpy, or "
                         "set %s=1 to choose the pure-Python kernels without this warning.",
                         type(exc).__name__, exc, NO_NUMBA_VARIABLE)
            IMPLEMENTATION, WHY = "python", f"numba cannot be imported ({type(exc).__name__}: {exc})"
        else:
            _bind(jit)
            return jit
    from . import pure

    _bind(pure)
    return pure


def __getattr__(name: str):
    # The kernels are bound on first use, so that importing this module does not import numba.
    if name in KERNELS:
        load()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if IMPLEMENTATION == "python":
    load()


_using_depth = 0


@contextlib.contextmanager
def using(implementation: str):
    """Binds this module's kernels to ``"numba"`` or ``"python"`` for the duration of the block, then restores
    them: tests and benchmarks run both implementations in one process, and every call inside the block uses
    the one chosen (see ``warming``). Not for concurrent use."""
    global _using_depth
    module = importlib.import_module({"numba": ".jit", "python": ".pure"}[implementation], __package__)
    saved = {name: globals()[name] for name in KERNELS if name in globals()}
    _bind(module)
    _using_depth += 1
    try:
        yield module
    finally:
        _using_depth -= 1
        for name in KERNELS:  # names not bound before stay unbound (bound on first use)
            if name in saved:
                globals()[name] = saved[name]
            else:
                globals().pop(name, None)


def bound_by_using() -> bool:
    """Whether a ``using()`` block is active."""
    return _using_depth > 0
