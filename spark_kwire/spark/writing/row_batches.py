"""Rows to Arrow record batches, for a writer that a Spark release hands `Row`s instead of Arrow batches.

kwire's writers declare themselves Arrow writers, and every supported release hands them Arrow batches
(see `writer.KwireStreamWriter`). Should a runtime still send rows, they are gathered in chunks and
turned into Arrow batches, so the same producer path and guarantees apply.
"""

from __future__ import annotations

from itertools import chain, islice
from typing import Iterable, Iterator

import pyarrow as pa

from spark_kwire.protocol.records import HEADERS_TYPE

ROWS_PER_BATCH = 10_000


def _arrow_type(column: str, sample):
    if column == "partition":
        return pa.int32()
    if column == "headers":
        return HEADERS_TYPE
    if column == "topic" or isinstance(sample, str):
        return pa.string()
    return pa.binary()


def _column(name: str, values: list) -> pa.Array:
    sample = next((v for v in values if v is not None), None)
    if name == "headers":
        values = [None if hs is None else [{"key": h[0], "value": h[1]} for h in hs] for hs in values]
    elif isinstance(sample, bytearray):
        values = [None if v is None else bytes(v) for v in values]
    return pa.array(values, type=_arrow_type(name, sample))


def rows_to_batches(items: Iterable, rows_per_batch: int = ROWS_PER_BATCH) -> Iterator[pa.RecordBatch]:
    """Arrow batches from `items`, which are either Arrow batches already (passed through) or Rows."""
    items = iter(items)
    first = next(items, None)
    if first is None:
        return
    if isinstance(first, pa.RecordBatch):
        yield first
        yield from items
        return
    rows = chain([first], items)
    names = [n.lower() for n in first.__fields__]
    while True:
        chunk = list(islice(rows, rows_per_batch))
        if not chunk:
            return
        columns = list(zip(*chunk))
        yield pa.RecordBatch.from_arrays([_column(n, list(c)) for n, c in zip(names, columns)], names=names)
