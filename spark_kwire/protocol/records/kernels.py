"""The record kernels, compiled by numba (``jit``) or in plain Python (``pure``): chosen once, at import.

numba is used unless the environment variable ``KWIRE_NO_NUMBA`` is true (``1``, ``true``, ``yes``, ``on``)
or numba cannot be imported (not installed, or broken against the installed numpy); then the pure-Python
kernels run, with one warning in the second case. Both offer the functions named in ``KERNELS``, with the
same arguments and results, so the rest of the package calls ``kernels.<name>`` either way. The constants
of ``layout`` are re-exported here for the callers' convenience.

On a Spark cluster, set the variable for the Python workers too (``spark.executorEnv.KWIRE_NO_NUMBA``).
"""

from __future__ import annotations

import contextlib
import importlib
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
    if numba_refused():
        from . import pure

        return pure, f"{NO_NUMBA_VARIABLE} is set"
    try:
        from . import jit
    except Exception as exc:  # ImportError, or whatever a numba broken against this numpy raises
        _log.warning("numba cannot be imported (%s: %s); spark_kwire decodes and encodes records with its "
                     "pure-Python kernels, many times slower. Install a numba that works with this numpy, or set "
                     "%s=1 to choose the pure-Python kernels without this warning.",
                     type(exc).__name__, exc, NO_NUMBA_VARIABLE)
        from . import pure

        return pure, f"numba cannot be imported ({type(exc).__name__}: {exc})"
    return jit, "numba imported"


_implementation, WHY = _choose()
IMPLEMENTATION = "numba" if _implementation.__name__.endswith(".jit") else "python"
"""``"numba"`` or ``"python"``; ``WHY`` says what decided it."""

count_entries = _implementation.count_entries
scan_entries = _implementation.scan_entries
control_type = _implementation.control_type
txn_filter = _implementation.txn_filter
decode_regions = _implementation.decode_regions
decode_v2_regions = _implementation.decode_v2_regions
gather_binary = _implementation.gather_binary
header_totals = _implementation.header_totals
header_fill = _implementation.header_fill
encoded_records_size = _implementation.encoded_records_size
encode_records = _implementation.encode_records
split_points = _implementation.split_points
murmur2_partitions = _implementation.murmur2_partitions
murmur2_hashes = _implementation.murmur2_hashes
read_varint = _implementation.read_varint
read_varlong = _implementation.read_varlong
varint_size = _implementation.varint_size
write_varint = _implementation.write_varint
crc32c_range = _implementation.crc32c_range
crc32_range = _implementation.crc32_range
HW_CRC32C = _implementation.HW_CRC32C


_using_depth = 0


@contextlib.contextmanager
def using(implementation: str):
    """Binds this module's kernels to ``"numba"`` or ``"python"`` for the duration of the block, then restores
    them: tests and benchmarks run both implementations in one process, and every call inside the block uses
    the one chosen (see ``warming``). Not for concurrent use."""
    global _using_depth
    module = importlib.import_module({"numba": ".jit", "python": ".pure"}[implementation], __package__)
    saved = {name: globals()[name] for name in KERNELS}
    globals().update({name: getattr(module, name) for name in KERNELS})
    _using_depth += 1
    try:
        yield module
    finally:
        _using_depth -= 1
        globals().update(saved)


def bound_by_using() -> bool:
    """Whether a ``using()`` block is active."""
    return _using_depth > 0
