"""murmur2 (the Java client's Utils.murmur2, its default partitioner's hash) over Arrow binary buffers."""

from __future__ import annotations

import numpy as np

from .cache import kernel


@kernel
def _murmur2(data, s, length):
    m = np.int64(0x5BD1E995)
    h = (np.int64(0x9747B28C) ^ length) & 0xFFFFFFFF
    n4 = length // 4
    for j in range(n4):
        q = s + 4 * j
        k = (
            np.int64(data[q])
            | (np.int64(data[q + 1]) << 8)
            | (np.int64(data[q + 2]) << 16)
            | (np.int64(data[q + 3]) << 24)
        )
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> 24
        k = (k * m) & 0xFFFFFFFF
        h = (h * m) & 0xFFFFFFFF
        h ^= k
    tail = s + (length & ~3)
    rem = length & 3
    if rem == 3:
        h ^= np.int64(data[tail + 2]) << 16
    if rem >= 2:
        h ^= np.int64(data[tail + 1]) << 8
    if rem >= 1:
        h ^= np.int64(data[tail])
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return h  # unsigned 32-bit value


@kernel
def murmur2_partitions(offsets, data, valid, num_partitions, out):
    """out[i] = (murmur2(key_i) & 0x7fffffff) % num_partitions; -1 for null keys."""
    for i in range(out.shape[0]):
        if valid[i] == 0:
            out[i] = -1
        else:
            s = offsets[i]
            h = _murmur2(data, s, offsets[i + 1] - s)
            out[i] = (h & 0x7FFFFFFF) % num_partitions


@kernel
def murmur2_hashes(offsets, data, valid, out):
    """Signed 32-bit murmur2 of every slot (0 for null slots)."""
    for i in range(out.shape[0]):
        if valid[i] == 0:
            out[i] = 0
        else:
            s = offsets[i]
            h = _murmur2(data, s, offsets[i + 1] - s)
            if h >= 0x80000000:
                h -= 0x100000000
            out[i] = h
