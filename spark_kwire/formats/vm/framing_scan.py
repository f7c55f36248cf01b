"""The one framing step that needs a loop per record: Protobuf's message-index list after the Confluent
header (a zig-zag varint count, then that many zig-zag varints; a count of 0 means the list ``[0]``)."""

from __future__ import annotations

import numpy as np

from .bytes_in import read_long
from .codes import E_BAD_INDEXES, E_OK


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


KERNELS = ("scan_message_indexes",)
