"""The executor side of a typed write: the key and value columns of each Arrow batch Spark hands a write task,
encoded (compiled, whole batch at once) with the schema and id decided on the driver (``schemas.py``) and framed
as Confluent's serializers frame them; the rest of the write (partitioning by the encoded key, producing,
transactions) is the binary write's.

A null key or value is written as null (a tombstone value). A row that cannot be written (a null where the schema
has none, a string that is no enum symbol) fails the task before its batch is sent, naming the row and field.
"""

from __future__ import annotations

import threading
from typing import Iterable, Iterator

import pyarrow as pa

from spark_kwire.formats.errors import EncodeError
from spark_kwire.spark.errors import KwireWriteError
from spark_kwire.spark.options.payloads import FAILFAST, TypedOptions
from spark_kwire.spark.typed.schemas import ResolvedSide, registry_encoder
from spark_kwire.spark.typed.spark_types import for_encoder

__all__ = ["encode_batches"]

_encoders: dict[tuple, object] = {}
_encoders_lock = threading.Lock()


def _encoder(resolved: ResolvedSide, typed: TypedOptions):
    spec = resolved.spec
    column_type = spec.payload.capabilities.writes_column_type  # plain JSON: to_json of the column, its options
    key = (spec, resolved.schema, resolved.references, resolved.schema_id, typed.json if column_type else ())
    with _encoders_lock:
        encoder = _encoders.get(key)
        if encoder is None:
            if column_type:
                from spark_kwire.spark.typed.plain_json.sides import json_options

                encoder = spec.payload.encoder("", 0, json_options=json_options(typed, for_write=True))
            else:
                encoder = registry_encoder(spec, resolved.schema, resolved.schema_id, resolved.references)
            _encoders[key] = encoder
        return encoder


def encode_batch(typed: TypedOptions, batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch`` with its typed columns replaced by their framed binary encoding."""
    names = batch.schema.names
    columns = list(batch.columns)
    for resolved in typed.resolved:
        side = resolved.spec.side
        if side not in names:
            continue  # a typed key without a key column: checked on the driver, nothing to encode
        index = names.index(side)
        try:
            columns[index] = _encoder(resolved, typed).encode(for_encoder(columns[index]), FAILFAST).values
        except EncodeError as e:
            where = f" in field {e.path}" if e.path else ""
            raise KwireWriteError(
                f"Row {e.row} of a batch of this task: column '{side}' cannot be written with its {resolved.spec.format}"
                f" schema ({resolved.source}): {e.reason}{where}. The rows of this batch were not sent.") from None
    return pa.RecordBatch.from_arrays(columns, names=names)


def encode_batches(typed: TypedOptions, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        yield encode_batch(typed, batch)
