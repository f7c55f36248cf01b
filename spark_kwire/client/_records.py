"""The client's single import point for the records codec (protocol layer)."""

from __future__ import annotations

try:  # the package's public names
    from spark_kwire.protocol.records import decode_record_set, encode_record_batches, partition_for_keys
except ImportError:  # pragma: no cover - the package __init__ did not re-export them (yet)
    from spark_kwire.protocol.records.batch import decode_record_set, encode_record_batches
    from spark_kwire.protocol.records.partitioner import partition_for_keys

__all__ = ["decode_record_set", "encode_record_batches", "partition_for_keys"]
