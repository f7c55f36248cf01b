"""The Confluent wire format read over whole columns: schema ids, payload positions, framing errors, and
Protobuf's message-index lists (checked against confluent-kafka's own encoder of them)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from spark_kwire.formats import kernels
from spark_kwire.formats.framing import confluent_header, parse_confluent, program_index
from spark_kwire.formats.vm.codes import E_BAD_INDEXES, E_MAGIC, E_OK, E_SHORT, E_UNKNOWN_SCHEMA, ROW_NULL


def test_ids_positions_and_errors():
    values = pa.array([b"\x00\x00\x00\x01\x00payload", None, b"\x00\x00\x00", b"\x01\x00\x00\x00\x01x",
                       b"\x00\xff\xff\xff\xff", b"\x00\x7f\xff\xff\xff\x01\x02"], pa.binary())
    frames = parse_confluent(values)
    assert frames.status.tolist() == [E_OK, ROW_NULL, E_SHORT, E_MAGIC, E_OK, E_OK]
    assert frames.schema_id.tolist() == [256, -1, -1, -1, -1, 2**31 - 1]
    assert [bytes(frames.data[s:e]) for s, e in zip(frames.start[[0, 4, 5]], frames.end[[0, 4, 5]])] == \
        [b"payload", b"", b"\x01\x02"]
    assert frames.errors().tolist() == [False, False, True, True, False, False]
    assert frames.schema_ids() == [-1, 256, 2**31 - 1]
    assert "magic byte" in frames.describe(3)


def test_sliced_and_chunked_columns():
    values = pa.array([b"\x00\x00\x00\x00\x07a", b"\x00\x00\x00\x00\x08bb", b"\x00\x00\x00\x00\x09ccc"], pa.binary())
    frames = parse_confluent(pa.chunked_array([values.slice(1)]))
    assert frames.schema_id.tolist() == [8, 9]
    assert [bytes(frames.data[s:e]) for s, e in zip(frames.start, frames.end)] == [b"bb", b"ccc"]
    large = parse_confluent(values.cast(pa.large_binary()))
    assert large.schema_id.tolist() == [7, 8, 9]


def test_program_index_marks_unknown_ids_without_changing_the_frames():
    values = pa.array([confluent_header(5) + b"x", confluent_header(6) + b"y", None], pa.binary())
    frames = parse_confluent(values)
    which, status = program_index(frames, np.array([5], dtype=np.int64))
    assert which.tolist() == [0, -1, -1]
    assert status.tolist() == [E_OK, E_UNKNOWN_SCHEMA, ROW_NULL]
    assert frames.status.tolist() == [E_OK, E_OK, ROW_NULL]


@pytest.mark.parametrize("implementation", ["numba", "python"])
def test_protobuf_message_indexes(implementation):
    """Vectors written from the wire format's definition: zig-zag varints, a count then the indexes; the list
    [0] (the file's first message, by far the most common) as the single byte 0."""
    head = b"\x00\x00\x00\x00\x03"
    rows = [head + b"\x00" + b"P0",  # [0]
            head + b"\x02\x02" + b"P1",  # [1]
            head + b"\x06\x04\x00\x0a" + b"P2",  # [2, 0, 5]
            head + b"\x04\x02",  # count 2, one index: malformed
            head + b"\x03",  # count -2: malformed
            None,
            head + b"\x02\x80\x01" + b"P3"]  # [64]
    with kernels.using(implementation):
        frames = parse_confluent(pa.array(rows, pa.binary()), message_indexes=True)
    assert frames.status.tolist() == [E_OK, E_OK, E_OK, E_BAD_INDEXES, E_BAD_INDEXES, ROW_NULL, E_OK]
    lists = [frames.indexes[frames.index_offsets[i]:frames.index_offsets[i + 1]].tolist() for i in range(len(rows))]
    assert lists == [[0], [1], [2, 0, 5], [], [], [], [64]]
    payloads = [bytes(frames.data[frames.start[i]:frames.end[i]]) for i in (0, 1, 2, 6)]
    assert payloads == [b"P0", b"P1", b"P2", b"P3"]
    assert confluent_header(3, [0]) == head + b"\x00"
    assert confluent_header(3, [2, 0, 5]) == head + b"\x06\x04\x00\x0a"
