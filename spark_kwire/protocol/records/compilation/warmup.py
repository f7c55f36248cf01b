"""Compile (or load from numba's on-disk cache) every kernel up front.

The first call of each numba kernel in a process compiles it, or loads the
cached machine code (see ``jit/cache.py`` for where the cache lives).
``warm_up()`` exercises every decode/encode path on a tiny synthetic record
set so that later calls (a Spark task's first fetch, a timing measurement)
do not pay for it. Returns the seconds spent. With the pure-Python kernels
there is nothing to compile: it only runs the sample once.
"""

from __future__ import annotations

import struct
import time
import zlib

import crc32c
import numpy as np
import pyarrow as pa

from .. import kernels
from ..batch import HEADERS_TYPE, decode_record_set, encode_record_batch, split_batches
from ..compression import compress
from ..partitioner import murmur2_array, partition_for_keys
from ..compiled_notes import remember
from .warming import mark_ready, registered_paths

_done = False


def _legacy_message(offset: int, magic: int, attrs: int, key: bytes | None, value: bytes | None) -> bytes:
    body = struct.pack(">bb", magic, attrs) + (struct.pack(">q", 1) if magic == 1 else b"")
    for f in (key, value):
        body += struct.pack(">i", -1) if f is None else struct.pack(">i", len(f)) + f
    return struct.pack(">qiI", offset, len(body) + 4, zlib.crc32(body)) + body


def _as_control(batch: bytes) -> bytes:
    buf = bytearray(batch)
    attrs = struct.unpack_from(">h", buf, 21)[0] | 0x20
    struct.pack_into(">h", buf, 21, attrs)
    struct.pack_into(">I", buf, 17, crc32c.crc32c(bytes(buf[21:])))
    return bytes(buf)


def _rebase(batch: bytes, base: int) -> bytes:
    return struct.pack(">q", base) + batch[8:]


def sample_record_set() -> bytes:
    """A small record set touching every decode path (v2 plain/compressed,
    headers, transactions, control batches, legacy plain/compressed)."""
    vals = pa.array([b"v0", None, b"v2"])
    keys = pa.array([b"k0", b"k1", None])
    hdrs = pa.array([[{"key": "h", "value": b"x"}, {"key": "n", "value": None}], None, []], type=HEADERS_TYPE)
    marker = struct.pack(">hh", 0, 0)
    parts = [
        _legacy_message(0, 1, 0, b"a", b"b"),
        _legacy_message(
            1, 0, 1, None, compress("gzip", _legacy_message(1, 0, 0, None, b"c"))
        ),
        _rebase(encode_record_batch(vals, keys, timestamps_ms=5, headers=hdrs), 2),
        _rebase(encode_record_batch(vals, keys, timestamps_ms=5, headers=hdrs, compression="lz4"), 5),
        _rebase(encode_record_batch(vals, None, timestamps_ms=5, producer_id=7, producer_epoch=0,
                                    base_sequence=0, transactional=True), 8),
        _rebase(_as_control(encode_record_batch(pa.array([b"\x00\x00\x00\x00\x00\x00"]), pa.array([marker]),
                                                timestamps_ms=5, producer_id=7, producer_epoch=0, base_sequence=0,
                                                transactional=True)), 11),
        _rebase(_as_control(encode_record_batch(pa.array([b"\x00\x00\x00\x00\x00\x00"]), pa.array([marker]),
                                                timestamps_ms=5, producer_id=7, producer_epoch=0, base_sequence=0,
                                                transactional=True, compression="gzip")), 12),
    ]
    return b"".join(parts)


def _v2_part(buf: bytes) -> bytes:
    """The v2 batches of a record set (they follow the legacy messages)."""
    p = 0
    while buf[p + 16] != 2:
        p += 12 + struct.unpack_from(">i", buf, p + 8)[0]
    return buf[p:]


def warm_up(force: bool = False) -> float:
    """Compiles (or loads) every kernel now, in this thread; returns the seconds it took."""
    global _done
    if _done and not force:
        return 0.0
    t = time.perf_counter()
    kernels.load()  # numba imported now (or, when it cannot be, the pure-Python kernels chosen)
    with kernels.using(kernels.IMPLEMENTATION):  # the chosen kernels for every call, none left to the background
        buf = sample_record_set()
        res = decode_record_set(buf, start_offset=0, end_offset=None, read_committed=True,
                                aborted_transactions=[(7, 8)], include_headers=True)
        assert res.record_count == 8, res.record_count
        # v2 only, as most topics hold: the kernel that knows no legacy format
        for include_headers in (False, True):
            res = decode_record_set(_v2_part(buf), start_offset=0, include_headers=include_headers)
            assert res.record_count == 9, res.record_count
        keys = pa.array([b"a", None, b"abcde"])
        partition_for_keys(keys, 3)
        murmur2_array(keys)
        split_batches(pa.array([b"x"] * 3), keys, timestamps_ms=np.arange(3), max_batch_bytes=100)
    mark_ready()
    if kernels.IMPLEMENTATION == "numba":
        from ..jit.cache import loaded_index_files

        for path in registered_paths():
            remember(path, loaded_index_files())
    _done = True
    return time.perf_counter() - t
