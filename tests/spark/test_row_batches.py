"""Rows a runtime might hand a writer become the Arrow batches kwire's producer path takes."""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import Row

from spark_kwire.spark.writing.row_batches import rows_to_batches


def test_rows_become_batches_with_the_sinks_column_types_and_nulls_kept():
    rows = [Row(key=bytearray(b"k"), value="text", headers=[("h", b"1")], topic="t", partition=2),
            Row(key=None, value=None, headers=None, topic="u", partition=None)]
    (batch,) = rows_to_batches(rows)
    assert batch.schema == pa.schema([
        ("key", pa.binary()), ("value", pa.string()),
        ("headers", pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))),
        ("topic", pa.string()), ("partition", pa.int32())])
    assert batch.to_pylist() == [
        {"key": b"k", "value": "text", "headers": [{"key": "h", "value": b"1"}], "topic": "t", "partition": 2},
        {"key": None, "value": None, "headers": None, "topic": "u", "partition": None}]


def test_rows_are_cut_into_batches_of_the_given_size_and_arrow_batches_pass_through():
    rows = [Row(value=b"v%d" % i) for i in range(5)]
    assert [b.num_rows for b in rows_to_batches(rows, rows_per_batch=2)] == [2, 2, 1]
    arrow = pa.record_batch({"value": pa.array([b"a"])})
    assert list(rows_to_batches([arrow])) == [arrow]
    assert list(rows_to_batches([])) == []
