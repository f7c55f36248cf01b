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
"""

from .batch import (
    HEADERS_TYPE,
    DecodedRecords,
    decode_record_set,
    encode_record_batch,
    encode_record_batches,
    scan_record_set,
    split_batches,
)
from .compression import CODEC_IDS, DEFAULT_MAX_DECOMPRESSED_BYTES, DecompressedSizeError, compress, decompress
from .murmur2 import murmur2, murmur2_array, partition_for_key, partition_for_keys, to_positive
from .warmup import warm_up

__all__ = [
    "CODEC_IDS",
    "DEFAULT_MAX_DECOMPRESSED_BYTES",
    "DecompressedSizeError",
    "HEADERS_TYPE",
    "DecodedRecords",
    "compress",
    "decode_record_set",
    "decompress",
    "encode_record_batch",
    "encode_record_batches",
    "murmur2",
    "murmur2_array",
    "partition_for_key",
    "partition_for_keys",
    "scan_record_set",
    "split_batches",
    "to_positive",
    "warm_up",
]
