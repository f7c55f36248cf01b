"""Reading the Confluent header of every row in one pass, and Protobuf's message-index list after it (a
zig-zag varint count, then that many zig-zag varints; a count of 0 means the list ``[0]``)."""

from __future__ import annotations

import numpy as np

from .bytes_in import read_long
from .codes import E_BAD_INDEXES, E_MAGIC, E_OK, E_SHORT, ROW_NULL


def scan_headers(data, offsets, valid, start, end, schema_id, status):
    """Per row: the payload's start and end in ``data`` (after the 5-byte header), the schema id (signed,
    big-endian), and the status: E_OK, ROW_NULL, E_SHORT or E_MAGIC (schema id -1 unless E_OK)."""
    for row in range(valid.shape[0]):
        first = offsets[row]
        last = offsets[row + 1]
        start[row] = first + 5
        end[row] = last
        schema_id[row] = -1
        if valid[row] == 0:
            status[row] = ROW_NULL
        elif last - first < 5:
            status[row] = E_SHORT
        elif data[first] != 0:
            status[row] = E_MAGIC
        else:
            v = ((np.int64(data[first + 1]) << 24) | (np.int64(data[first + 2]) << 16)
                 | (np.int64(data[first + 3]) << 8) | np.int64(data[first + 4]))
            if v >= 0x80000000:
                v -= 0x100000000
            schema_id[row] = v
            status[row] = E_OK


def scan_message_indexes(data, start, end, status, index_offsets, indexes):
    """For each row whose ``status`` is E_OK: reads the list at ``start[row]``, appends it to ``indexes``
    (``index_offsets`` gets the Arrow-style offsets, n+1) and moves ``start[row]`` past it; a malformed list
    sets ``status[row]`` to E_BAD_INDEXES. ``indexes`` must hold the payload bytes' count (every index takes
    at least one byte). Returns the number of indexes written."""
    w = np.int64(0)
    for row in range(start.shape[0]):
        index_offsets[row] = w
        if status[row] != E_OK:
            continue
        pos = start[row]
        stop = end[row]
        count, pos = read_long(data, pos, stop)
        if pos < 0 or count < 0 or count > stop - pos:
            status[row] = E_BAD_INDEXES
            continue
        if count == 0:
            indexes[w] = 0
            w += 1
        else:
            bad = False
            first = w
            for _ in range(count):
                v, pos = read_long(data, pos, stop)
                if pos < 0 or v < 0:
                    bad = True
                    break
                indexes[w] = v
                w += 1
            if bad:
                status[row] = E_BAD_INDEXES
                w = first
                continue
        start[row] = pos
    index_offsets[start.shape[0]] = w
    return w


KERNELS = ("scan_headers", "scan_message_indexes")
