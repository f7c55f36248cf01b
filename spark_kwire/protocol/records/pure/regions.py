"""Pass 2 in plain Python: decode every kept region into the output table (as ``jit/regions.py``)."""

from __future__ import annotations

import numpy as np

from ..layout import (
    E_CAPACITY,
    E_LEGACY_SIZE,
    E_MAGIC,
    KIND_INNER0,
    KIND_LEGACY0,
    KIND_LEGACY1,
    KIND_V2,
    O_ROWS,
    OK,
    R_BASE_OFFSET,
    R_BASE_TS,
    R_COUNT,
    R_END,
    R_KIND,
    R_MAX_TS,
    R_SRC,
    R_START,
    R_TS_TYPE,
)
from .decode_legacy import emit_legacy, legacy_inner, legacy_message
from .decode_v2 import v2_records
from .decode_v2_arrays import rows_of_regions


def decode_regions(a, b, reg, start_offset, end_offset, out):
    """Decodes every region (columns of ``reg``, see R_*) into the columns of ``out`` (rows O_*); records
    outside ``[start_offset, end_offset)`` are validated but not emitted.

    Returns (n_records, status, region_index).
    """
    a_len = len(a)
    bufs = (bytes(a), bytes(b))  # one copy each: indexing and slicing bytes is much faster than a memoryview
    ab = np.frombuffer(bufs[0] + bufs[1], dtype=np.uint8)  # positions in b shifted by len(a), as the output's
    cap = out.shape[1]
    start_offset = int(start_offset)
    end_offset = int(end_offset)
    table = list(zip(*(reg[row].tolist() for row in (R_SRC, R_START, R_END, R_KIND, R_COUNT, R_BASE_OFFSET,
                                                     R_BASE_TS, R_MAX_TS, R_TS_TYPE))))
    if table and all(kind == KIND_V2 for _, _, _, kind, *_ in table):  # the usual case: all at once
        rows = rows_of_regions(ab, bufs, a_len, [(src, s, e, *rest) for src, s, e, _, *rest in table],
                               start_offset, end_offset, cap)
        if rows is not None:
            out[:, :rows.shape[1]] = rows
            return rows.shape[1], OK, -1
    cols = [[] for _ in range(O_ROWS)]  # rows decoded record by record since the last piece
    pieces = []  # row blocks (O_ROWS, k), in region order
    done = 0  # rows in pieces
    st = OK
    failed = -1

    def flush():
        nonlocal cols, done
        if cols[0]:
            pieces.append(np.array(cols, dtype=np.int64))
            done += len(cols[0])
            cols = [[] for _ in range(O_ROWS)]

    for r, (src, s, e, kind, count, base_offset, base_ts, max_ts, ts_type) in enumerate(table):
        buf = bufs[src != 0]
        base = 0 if src == 0 else a_len
        if kind == KIND_V2:
            rows = rows_of_regions(ab, bufs, a_len, [(src, s, e, count, base_offset, base_ts, max_ts, ts_type)],
                                   start_offset, end_offset, cap - done - len(cols[0]))
            if rows is not None:
                flush()
                pieces.append(rows)
                done += rows.shape[1]
                continue
            st = v2_records(buf, base, s, e, count, base_offset, base_ts, max_ts, ts_type, start_offset, end_offset,
                            cols, cap - done)
        elif kind == KIND_LEGACY0 or kind == KIND_LEGACY1:
            st, mend, off, magic, attr, ts, kpos, klen, vpos, vlen = legacy_message(buf, s, e)
            if st == OK and mend != e:
                st = E_LEGACY_SIZE
            if st == OK and start_offset <= off < end_offset:
                if done + len(cols[0]) >= cap:
                    st = E_CAPACITY
                else:
                    emit_legacy(cols, base, off, ts, (attr >> 3) & 1 if magic == 1 else -1, kpos, klen, vpos, vlen)
        else:
            st = legacy_inner(buf, base, s, e, kind - KIND_INNER0, base_offset, base_ts, ts_type, start_offset,
                              end_offset, cols, cap - done)
        if st != OK:
            failed = r
            break
    flush()
    n = done
    if n:
        out[:, :n] = np.concatenate(pieces, axis=1) if len(pieces) > 1 else pieces[0]
    return n, st, failed


def decode_v2_regions(a, b, reg, start_offset, end_offset, out):
    """decode_regions for a table whose regions are all ``KIND_V2`` (another kind fails with ``E_MAGIC``).

    Returns (n_records, status, region_index).
    """
    other = np.flatnonzero(reg[R_KIND] != KIND_V2)
    if other.shape[0] == 0:
        return decode_regions(a, b, reg, start_offset, end_offset, out)
    first = int(other[0])
    n, st, r = decode_regions(a, b, reg[:, :first], start_offset, end_offset, out)
    return (n, st, r) if st != OK else (n, E_MAGIC, first)
