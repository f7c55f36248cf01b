"""Pass 2 for legacy message sets (magic 0 and 1): one message, and the inner set of a compressed wrapper.

The offset rule for magic-1 wrappers (inner offsets relative to the wrapper's) is described in ``legacy.py``.
"""

from __future__ import annotations

import numpy as np

from ..layout import (
    E_BATCH_LENGTH,
    E_CAPACITY,
    E_CRC,
    E_LEGACY_EMPTY,
    E_LEGACY_INNER_MAGIC,
    E_LEGACY_NESTED,
    E_LEGACY_SIZE,
    E_LEGACY_TRUNCATED,
    E_MAGIC,
    LEGACY_MIN_SIZE,
    O_HCNT,
    O_HPOS,
    O_KLEN,
    O_KPOS,
    O_OFFSET,
    O_TS,
    O_TS_TYPE,
    O_VLEN,
    O_VPOS,
    OK,
)
from .cache import kernel
from .crc import crc32_range
from .ints import i32, i64, u32


@kernel
def legacy_message(buf, p, end):
    """Parses one legacy message at ``p`` (must lie within ``[p, end)``); does not check its CRC.

    Returns (status, msg_end, offset, magic, attributes, timestamp,
    key_pos, key_len, value_pos, value_len).
    """
    z = np.int64(0)
    if p + 12 > end:
        return E_LEGACY_TRUNCATED, z, z, z, z, z, z, z, z, z
    size = i32(buf, p + 8)
    if size < LEGACY_MIN_SIZE - 12:
        return E_BATCH_LENGTH, z, z, z, z, z, z, z, z, z
    if size > end - p - 12:
        return E_LEGACY_TRUNCATED, z, z, z, z, z, z, z, z, z
    mend = p + 12 + size
    offset = i64(buf, p)
    magic = np.int64(buf[p + 16])
    if magic > 1:
        return E_MAGIC, z, z, z, z, z, z, z, z, z
    attr = np.int64(buf[p + 17])
    if magic == 1:
        if size < LEGACY_MIN_SIZE - 12 + 8:
            return E_BATCH_LENGTH, z, z, z, z, z, z, z, z, z
        ts = i64(buf, p + 18)
        q = p + 26
    else:
        ts = np.int64(-1)
        q = p + 18
    klen = i32(buf, q)
    q += 4
    if klen < -1 or klen > mend - q - 4:
        return E_LEGACY_SIZE, z, z, z, z, z, z, z, z, z
    kpos = q
    if klen > 0:
        q += klen
    vlen = i32(buf, q)
    q += 4
    vpos = q
    if vlen > 0:
        q += vlen
    if vlen < -1 or q != mend:
        return E_LEGACY_SIZE, z, z, z, z, z, z, z, z, z
    return OK, mend, offset, magic, attr, ts, kpos, klen, vpos, vlen


@kernel
def emit_legacy(out, n, base, off, ts, ts_type, kpos, klen, vpos, vlen):
    out[O_OFFSET, n] = off
    out[O_TS, n] = ts
    out[O_TS_TYPE, n] = ts_type
    out[O_KPOS, n] = base + kpos
    out[O_KLEN, n] = klen
    out[O_VPOS, n] = base + vpos
    out[O_VLEN, n] = vlen
    out[O_HPOS, n] = -1
    out[O_HCNT, n] = 0


@kernel
def legacy_inner(buf, base, s, e, wrapper_magic, wrapper_offset, wrapper_ts, wrapper_ts_type,
                 start_offset, end_offset, n, out):
    cap = out.shape[1]
    # pass 1: validate, find the last inner offset
    p = s
    last_rel = np.int64(0)
    inner = 0
    while p < e:
        st, mend, off, magic, attr, ts, kpos, klen, vpos, vlen = legacy_message(buf, p, e)
        if st != OK:
            return st, n
        if crc32_range(buf, p + 16, mend) != u32(buf, p + 12):
            return E_CRC, n
        if magic != wrapper_magic:
            return E_LEGACY_INNER_MAGIC, n
        if (attr & 7) != 0:
            return E_LEGACY_NESTED, n
        last_rel = off
        inner += 1
        p = mend
    if inner == 0:
        return E_LEGACY_EMPTY, n
    # pass 2: emit
    p = s
    while p < e:
        st, mend, off, magic, attr, ts, kpos, klen, vpos, vlen = legacy_message(buf, p, e)
        if wrapper_magic > 0:
            off = wrapper_offset - last_rel + off
        if off >= start_offset and off < end_offset:
            if n >= cap:
                return E_CAPACITY, n
            if magic == 0:
                ts = np.int64(-1)
                tt = np.int64(-1)
            elif wrapper_ts_type == 1:
                ts = wrapper_ts
                tt = np.int64(1)
            else:
                tt = (attr >> 3) & 1
            emit_legacy(out, n, base, off, ts, tt, kpos, klen, vpos, vlen)
            n += 1
        p = mend
    return OK, n

