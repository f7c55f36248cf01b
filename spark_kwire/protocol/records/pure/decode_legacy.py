"""Pass 2 for legacy message sets (magic 0 and 1) in plain Python (as ``jit/decode_legacy.py``)."""

from __future__ import annotations

import struct

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
    OK,
)
from .crc import crc32_range
from .ints import wrap64

_HEAD = struct.Struct(">qiIBB")  # offset, size, crc, magic, attributes
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_U32 = struct.Struct(">I")


def legacy_message(buf, p: int, end: int):
    """Parses one legacy message at ``p`` (must lie within ``[p, end)``); does not check its CRC.

    Returns (status, msg_end, offset, magic, attributes, timestamp, key_pos, key_len, value_pos, value_len);
    all but the status are 0 when it is not ``OK``.
    """
    failed = (0,) * 9
    if p + 12 > end:
        return (E_LEGACY_TRUNCATED, *failed)
    size = _I32.unpack_from(buf, p + 8)[0]
    if size < LEGACY_MIN_SIZE - 12:
        return (E_BATCH_LENGTH, *failed)
    if size > end - p - 12:
        return (E_LEGACY_TRUNCATED, *failed)
    mend = p + 12 + size
    offset, _, _, magic, attr = _HEAD.unpack_from(buf, p)
    if magic > 1:
        return (E_MAGIC, *failed)
    if magic == 1:
        if size < LEGACY_MIN_SIZE - 12 + 8:
            return (E_BATCH_LENGTH, *failed)
        ts = _I64.unpack_from(buf, p + 18)[0]
        q = p + 26
    else:
        ts = -1
        q = p + 18
    klen = _I32.unpack_from(buf, q)[0]
    q += 4
    if klen < -1 or klen > mend - q - 4:
        return (E_LEGACY_SIZE, *failed)
    kpos = q
    if klen > 0:
        q += klen
    vlen = _I32.unpack_from(buf, q)[0]
    q += 4
    vpos = q
    if vlen > 0:
        q += vlen
    if vlen < -1 or q != mend:
        return (E_LEGACY_SIZE, *failed)
    return OK, mend, offset, magic, attr, ts, kpos, klen, vpos, vlen


def emit_legacy(cols, base, off, ts, ts_type, kpos, klen, vpos, vlen) -> None:
    """Appends one legacy record (no headers) to the output columns."""
    for column, value in zip(cols, (off, ts, ts_type, base + kpos, klen, base + vpos, vlen, -1, 0)):
        column.append(value)


def legacy_inner(buf, base, s, e, wrapper_magic, wrapper_offset, wrapper_ts, wrapper_ts_type, start_offset,
                 end_offset, cols, cap) -> int:
    """Decodes the inner message set ``buf[s:e]`` of a compressed wrapper; returns a status."""
    messages = []
    p = s
    while p < e:
        parsed = legacy_message(buf, p, e)
        st, mend, off, magic, attr = parsed[:5]
        if st != OK:
            return st
        if crc32_range(buf, p + 16, mend) != _U32.unpack_from(buf, p + 12)[0]:
            return E_CRC
        if magic != wrapper_magic:
            return E_LEGACY_INNER_MAGIC
        if attr & 7:
            return E_LEGACY_NESTED
        messages.append(parsed)
        p = mend
    if not messages:
        return E_LEGACY_EMPTY
    last_rel = messages[-1][2]
    for _, _, off, magic, attr, ts, kpos, klen, vpos, vlen in messages:
        if wrapper_magic > 0:
            off = wrap64(wrapper_offset - last_rel + off)
        if start_offset <= off < end_offset:
            if len(cols[0]) >= cap:
                return E_CAPACITY
            if magic == 0:
                ts, tt = -1, -1
            elif wrapper_ts_type == 1:
                ts, tt = wrapper_ts, 1
            else:
                tt = (attr >> 3) & 1
            emit_legacy(cols, base, off, ts, tt, kpos, klen, vpos, vlen)
    return OK
