"""The Java client's default partitioner: its hash (murmur2) and the partition of each key.

``murmur2`` is ``org.apache.kafka.common.utils.Utils.murmur2`` (seed
0x9747b28c, returns a signed 32-bit int as Java does); the partition of a
keyed record is ``toPositive(murmur2(key)) % numPartitions`` with
``toPositive(h) = h & 0x7fffffff``.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ._arrow import binary_parts
from .pure.murmur2 import murmur2
from .compilation.warming import kernels_for, register_sample

__all__ = ["murmur2", "murmur2_array", "partition_for_key", "partition_for_keys", "to_positive"]


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
    with kernels_for("partition", data.nbytes) as k:
        k.murmur2_partitions(offsets, data, valid, num_partitions, out)
    return out


def murmur2_array(keys) -> np.ndarray:
    """Signed 32-bit murmur2 of every key (0 for null keys), as int32."""
    offsets, data, valid = binary_parts(keys, "keys")
    out = np.empty(valid.shape[0], dtype=np.int32)
    with kernels_for("hash", data.nbytes) as k:
        k.murmur2_hashes(offsets, data, valid, out)
    return out


def _sample(kernels) -> None:
    offsets, data, valid = binary_parts(pa.array([b"key", None]), "keys")
    kernels.murmur2_partitions(offsets, data, valid, 3, np.empty(2, dtype=np.int32))


def _hash_sample(kernels) -> None:
    offsets, data, valid = binary_parts(pa.array([b"key", None]), "keys")
    kernels.murmur2_hashes(offsets, data, valid, np.empty(2, dtype=np.int32))


register_sample("partition", _sample)
register_sample("hash", _hash_sample)
