"""murmur2 in plain Python: the Java client's Utils.murmur2 (its default partitioner's hash), for one key, and
over Arrow binary buffers with numpy, all keys of a length at once (as ``jit/murmur2.py``)."""

from __future__ import annotations

import struct

import numpy as np

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


def _distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique`` without it: that imports ``numpy.ma``, some 10 ms of a new Spark worker's first write."""
    ordered = np.sort(values)
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))] if ordered.size else ordered


def _hashes(offsets, data, valid) -> np.ndarray:
    """Unsigned 32-bit murmur2 of every slot (0 for null slots), as uint64: the keys of each length at once,
    as a matrix of their bytes, with numpy (keys of a topic take few distinct lengths)."""
    offsets = np.asarray(offsets, dtype=np.int64)
    data = np.asarray(data, dtype=np.uint8)
    lengths = offsets[1:] - offsets[:-1]
    valid = np.asarray(valid) != 0
    out = np.zeros(lengths.shape[0], dtype=np.uint64)
    m = np.uint64(_M)
    mask = np.uint64(_MASK)
    for length in _distinct(lengths[valid]).tolist():
        rows = np.flatnonzero(valid & (lengths == length))
        keys = data[offsets[rows][:, None] + np.arange(length)].astype(np.uint64) if length else None
        h = np.full(rows.shape[0], (0x9747B28C ^ length) & _MASK, dtype=np.uint64)
        for j in range(length // 4):
            k = (keys[:, 4 * j] | (keys[:, 4 * j + 1] << np.uint64(8)) | (keys[:, 4 * j + 2] << np.uint64(16))
                 | (keys[:, 4 * j + 3] << np.uint64(24)))
            k = (k * m) & mask
            k ^= k >> np.uint64(24)
            k = (k * m) & mask
            h = ((h * m) & mask) ^ k
        tail = 4 * (length // 4)
        rem = length & 3
        if rem >= 3:
            h ^= keys[:, tail + 2] << np.uint64(16)
        if rem >= 2:
            h ^= keys[:, tail + 1] << np.uint64(8)
        if rem >= 1:
            h ^= keys[:, tail]
            h = (h * m) & mask
        h ^= h >> np.uint64(13)
        h = (h * m) & mask
        h ^= h >> np.uint64(15)
        out[rows] = h
    return out


def murmur2_partitions(offsets, data, valid, num_partitions, out):
    """out[i] = (murmur2(key_i) & 0x7fffffff) % num_partitions; -1 for null keys."""
    h = (_hashes(offsets, data, valid) & np.uint64(0x7FFFFFFF)) % np.uint64(num_partitions)
    out[:] = np.where(np.asarray(valid) != 0, h.astype(np.int64), -1)


def murmur2_hashes(offsets, data, valid, out):
    """Signed 32-bit murmur2 of every slot (0 for null slots)."""
    out[:] = _hashes(offsets, data, valid).astype(np.uint32).view(np.int32)
