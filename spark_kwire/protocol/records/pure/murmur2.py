"""murmur2 in plain Python: the Java client's Utils.murmur2 (its default partitioner's hash), for one key and
over Arrow binary buffers (as ``jit/murmur2.py``)."""

from __future__ import annotations

import struct

_M = 0x5BD1E995
_MASK = 0xFFFFFFFF


def murmur2(data) -> int:
    """Java's Utils.murmur2 of a bytes-like object (seed 0x9747b28c; signed 32-bit result, as Java returns)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        data = bytes(data)
    length = len(data)
    h = (0x9747B28C ^ length) & _MASK
    n4 = length // 4
    for k in struct.unpack_from(f"<{n4}I", data) if n4 else ():
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    tail = 4 * n4
    rem = length & 3
    if rem >= 3:
        h ^= data[tail + 2] << 16
    if rem >= 2:
        h ^= data[tail + 1] << 8
    if rem >= 1:
        h ^= data[tail]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h - (1 << 32) if h >= 1 << 31 else h


def _keys(offsets, data, valid):
    """Yields the bytes of every slot, None for null slots."""
    view = memoryview(data)
    bounds = offsets.tolist()
    for i, ok in enumerate(valid.tolist()):
        yield view[bounds[i] : bounds[i + 1]] if ok else None


def murmur2_partitions(offsets, data, valid, num_partitions, out):
    """out[i] = (murmur2(key_i) & 0x7fffffff) % num_partitions; -1 for null keys."""
    out[:] = [-1 if key is None else (murmur2(key) & 0x7FFFFFFF) % num_partitions
              for key in _keys(offsets, data, valid)]


def murmur2_hashes(offsets, data, valid, out):
    """Signed 32-bit murmur2 of every slot (0 for null slots)."""
    out[:] = [0 if key is None else murmur2(key) for key in _keys(offsets, data, valid)]
