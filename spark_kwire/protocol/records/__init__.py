"""Kafka record sets: record batch v2 and legacy message sets (magic 0/1).

Public API:

* :func:`decode_record_set` -> :class:`DecodedRecords` (numpy / Arrow columns
  of a fetched partition's records, all at once).
* :func:`encode_record_batch`, :func:`split_batches`,
  :func:`encode_record_batches` (produce side, from Arrow columns).
* :func:`murmur2`, :func:`partition_for_keys`, :func:`partition_for_key`,
  :func:`murmur2_array` (the Java client's default partitioner).
* :func:`compress`, :func:`decompress` (Kafka codecs).
* :func:`scan_record_set` (batch header fields, for diagnostics).
* :func:`warm_up` (compile / load every numba kernel before timing-sensitive work).
* :func:`from_numpy`, :func:`numeric_values`, :func:`valid_mask`, :func:`timestamp_column` (numeric Arrow
  arrays to and from numpy through their buffers, without importing pandas: see ``_arrow.py``).

The names are imported on first use: a process that only needs, say, the
codecs (the client's fetch loop imports ``compression``) or no records at
all (Spark's planning workers) does not pay for importing numba.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

_WHERE = {
    "HEADERS_TYPE": ".batch",
    "DecodedRecords": ".batch",
    "decode_record_set": ".batch",
    "scan_record_set": ".batch",
    "encode_record_batch": ".encoding",
    "encode_record_batches": ".encoding",
    "split_batches": ".encoding",
    "CODEC_IDS": ".compression",
    "DEFAULT_MAX_DECOMPRESSED_BYTES": ".compression",
    "DecompressedSizeError": ".compression",
    "compress": ".compression",
    "decompress": ".compression",
    "murmur2": ".partitioner",
    "murmur2_array": ".partitioner",
    "partition_for_key": ".partitioner",
    "partition_for_keys": ".partitioner",
    "to_positive": ".partitioner",
    "warm_up": ".compilation.warmup",
    "from_numpy": "._arrow",
    "numeric_values": "._arrow",
    "timestamp_column": "._arrow",
    "valid_mask": "._arrow",
}

__all__ = [
    "CODEC_IDS", "DEFAULT_MAX_DECOMPRESSED_BYTES", "DecodedRecords", "DecompressedSizeError", "HEADERS_TYPE", "compress",
    "decode_record_set", "decompress", "encode_record_batch", "encode_record_batches", "murmur2", "murmur2_array",
    "partition_for_key", "partition_for_keys", "scan_record_set", "split_batches", "to_positive", "warm_up",
    "from_numpy", "numeric_values", "timestamp_column", "valid_mask",
]
assert sorted(__all__) == sorted(_WHERE)


def __getattr__(name: str):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))


if TYPE_CHECKING:
    from .batch import HEADERS_TYPE, DecodedRecords, decode_record_set, scan_record_set
    from .compression import CODEC_IDS, DEFAULT_MAX_DECOMPRESSED_BYTES, DecompressedSizeError, compress, decompress
    from .encoding import encode_record_batch, encode_record_batches, split_batches
    from .partitioner import murmur2, murmur2_array, partition_for_key, partition_for_keys, to_positive
    from ._arrow import from_numpy, numeric_values, timestamp_column, valid_mask
    from .compilation.warmup import warm_up
