"""The Java client's default partitioner hash.

``murmur2`` is ``org.apache.kafka.common.utils.Utils.murmur2`` (seed
0x9747b28c, returns a signed 32-bit int as Java does); the partition of a
keyed record is ``toPositive(murmur2(key)) % numPartitions`` with
``toPositive(h) = h & 0x7fffffff``.
"""

from __future__ import annotations

import numpy as np

from . import kernels as K
from ._arrow import binary_parts

_M = 0x5BD1E995
_MASK = 0xFFFFFFFF


def murmur2(data: bytes) -> int:
    """Plain-Python reference of Java's Utils.murmur2 (signed 32-bit result)."""
    data = bytes(data)
    length = len(data)
    h = (0x9747B28C ^ length) & _MASK
    for i in range(0, length - length % 4, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    tail = length & ~3
    rem = length % 4
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


def to_positive(h: int) -> int:
    return h & 0x7FFFFFFF


def partition_for_key(key: bytes, num_partitions: int) -> int:
    return to_positive(murmur2(key)) % num_partitions


def partition_for_keys(keys, num_partitions: int) -> np.ndarray:
    """int32 partition of every key of an Arrow binary/string array
    (``toPositive(murmur2(key)) % num_partitions``); -1 for null keys (the
    Java producer does not hash those: it uses its sticky partitioner)."""
    if num_partitions <= 0:
        raise ValueError("num_partitions must be positive")
    offsets, data, valid = binary_parts(keys, "keys")
    out = np.empty(valid.shape[0], dtype=np.int32)
    K.murmur2_partitions(offsets, data, valid, num_partitions, out)
    return out


def murmur2_array(keys) -> np.ndarray:
    """Signed 32-bit murmur2 of every key (0 for null keys), as int32."""
    offsets, data, valid = binary_parts(keys, "keys")
    out = np.empty(valid.shape[0], dtype=np.int32)
    K.murmur2_hashes(offsets, data, valid, out)
    return out
