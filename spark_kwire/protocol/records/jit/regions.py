"""Pass 2: decode every kept region (v2 records sections, legacy messages and wrappers) into the output table.

``decode_v2_regions`` serves tables of v2 regions only, the common case: calling it instead of
``decode_regions`` compiles none of the legacy code (about half of the read path's compile time).
"""

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
from .cache import kernel
from .decode_legacy import emit_legacy, legacy_inner, legacy_message
from .decode_v2 import v2_records


@kernel
def decode_regions(a, b, reg, start_offset, end_offset, out):
    """Decodes every region (columns of ``reg``, see R_*) into the columns
    of ``out`` (rows O_*); records outside ``[start_offset, end_offset)``
    are validated but not emitted.

    Returns (n_records, status, region_index).
    """
    a_len = np.int64(a.shape[0])
    n = np.int64(0)
    for r in range(reg.shape[1]):
        if reg[R_SRC, r] == 0:
            buf = a
            base = np.int64(0)
        else:
            buf = b
            base = a_len
        kind = reg[R_KIND, r]
        s = reg[R_START, r]
        e = reg[R_END, r]
        if kind == KIND_V2:
            st, n = v2_records(buf, base, s, e, reg[R_COUNT, r], reg[R_BASE_OFFSET, r], reg[R_BASE_TS, r],
                               reg[R_MAX_TS, r], reg[R_TS_TYPE, r], start_offset, end_offset, n, out)
        elif kind == KIND_LEGACY0 or kind == KIND_LEGACY1:
            st, mend, off, magic, attr, ts, kpos, klen, vpos, vlen = legacy_message(buf, s, e)
            if st == OK and mend != e:
                st = E_LEGACY_SIZE
            if st == OK and off >= start_offset and off < end_offset:
                if n >= out.shape[1]:
                    st = E_CAPACITY
                else:
                    tt = (attr >> 3) & 1 if magic == 1 else np.int64(-1)
                    emit_legacy(out, n, base, off, ts, tt, kpos, klen, vpos, vlen)
                    n += 1
        else:
            st, n = legacy_inner(buf, base, s, e, kind - KIND_INNER0, reg[R_BASE_OFFSET, r], reg[R_BASE_TS, r],
                                 reg[R_TS_TYPE, r], start_offset, end_offset, n, out)
        if st != OK:
            return n, st, np.int64(r)
    return n, OK, np.int64(-1)



@kernel
def decode_v2_regions(a, b, reg, start_offset, end_offset, out):
    """decode_regions for a table whose regions are all ``KIND_V2`` (another kind fails with ``E_MAGIC``).

    Returns (n_records, status, region_index).
    """
    a_len = np.int64(a.shape[0])
    n = np.int64(0)
    for r in range(reg.shape[1]):
        if reg[R_KIND, r] != KIND_V2:
            return n, E_MAGIC, np.int64(r)
        if reg[R_SRC, r] == 0:
            buf = a
            base = np.int64(0)
        else:
            buf = b
            base = a_len
        st, n = v2_records(buf, base, reg[R_START, r], reg[R_END, r], reg[R_COUNT, r], reg[R_BASE_OFFSET, r],
                           reg[R_BASE_TS, r], reg[R_MAX_TS, r], reg[R_TS_TYPE, r], start_offset, end_offset, n, out)
        if st != OK:
            return n, st, np.int64(r)
    return n, OK, np.int64(-1)
