"""Pass 1 in plain Python: find the complete top-level entries, read their header fields, verify checksums.

Same arguments, results and checks, in the same order, as ``jit/scan.py``.
"""

from __future__ import annotations

import struct

from ..layout import (
    CTRL_ABORT,
    CTRL_COMMIT,
    CTRL_MALFORMED,
    CTRL_UNKNOWN,
    CTRL_UNPARSED,
    E_BATCH_LENGTH,
    E_CODEC,
    E_CRC,
    E_MAGIC,
    E_RECORD_COUNT,
    LEGACY_MIN_SIZE,
    OK,
    V2_HEADER_SIZE,
    V2_MIN_RECORD_SIZE,
)
from .crc import crc32c_range
from .ints import varint_at, varlong_at

_I32 = struct.Struct(">i")
_I16_PAIR = struct.Struct(">hh")
_I64 = struct.Struct(">q")
_V2_FIELDS = struct.Struct(">Ihiqqqhii")  # crc .. record count, from byte 17 of a v2 batch


def count_entries(buf):
    """Walks the entry length fields.

    Returns (n_complete, end_of_last_complete, status, error_pos). A trailing incomplete entry (or fewer
    than the bytes needed to read its length and magic) is ignored, as the Java consumer does.
    """
    mv = memoryview(buf)
    n = len(mv)
    p = 0
    count = 0
    while p + 17 <= n:
        size = _I32.unpack_from(mv, p + 8)[0]
        magic = mv[p + 16]
        if magic == 2:
            minimum = V2_HEADER_SIZE - 12
        elif magic == 1:
            minimum = LEGACY_MIN_SIZE - 12 + 8
        else:
            minimum = LEGACY_MIN_SIZE - 12
        if size < minimum:
            return count, p, E_BATCH_LENGTH, p
        if magic > 2:
            if p + 12 + size <= n:
                return count, p, E_MAGIC, p
            break
        if p + 12 + size > n:
            break
        p += 12 + size
        count += 1
    return count, p, OK, -1


def control_type(buf, p: int, end: int) -> int:
    """ControlRecordType (``CTRL_*``) of the first record of the control batch records section at ``buf[p:end]``."""
    buf = memoryview(buf)
    length, q = varint_at(buf, p, end)
    if q < 0 or length < 6 or q + length > end:
        return CTRL_MALFORMED
    rend = q + length
    q += 1  # attributes
    _, q = varlong_at(buf, q, rend)
    if q < 0:
        return CTRL_MALFORMED
    _, q = varint_at(buf, q, rend)
    if q < 0:
        return CTRL_MALFORMED
    klen, q = varint_at(buf, q, rend)
    if q < 0 or klen < 4 or q + klen > rend:
        return CTRL_MALFORMED
    version, t = _I16_PAIR.unpack_from(buf, q)
    if version < 0:
        return CTRL_MALFORMED
    return t if t in (CTRL_ABORT, CTRL_COMMIT) else CTRL_UNKNOWN


def scan_entries(buf, n_entries, crc32c_inline_max, e_pos, e_size, e_magic, e_attr, e_base_offset, e_last_delta,
                 e_count, e_pid, e_base_ts, e_max_ts, e_ctrl, e_crc_deferred):
    """Fills the per-entry arrays for the ``n_entries`` found by count_entries; returns (status, entry_index).

    As the compiled kernel: v2 checksums of at most ``crc32c_inline_max`` bytes are checked here, larger ones
    and every legacy message's are flagged in ``e_crc_deferred``; control batches are flagged
    ``CTRL_UNPARSED``.
    """
    mv = memoryview(buf)
    p = 0
    for i in range(int(n_entries)):
        size = 12 + _I32.unpack_from(mv, p + 8)[0]
        end = p + size
        magic = mv[p + 16]
        e_pos[i] = p
        e_size[i] = size
        e_magic[i] = magic
        e_base_offset[i] = _I64.unpack_from(mv, p)[0]
        e_crc_deferred[i] = 0
        e_ctrl[i] = CTRL_UNKNOWN
        if magic == 2:
            crc, attr, last_delta, base_ts, max_ts, pid, _epoch, _seq, count = _V2_FIELDS.unpack_from(mv, p + 17)
            e_attr[i] = attr
            codec = attr & 7
            if codec > 4:
                return E_CODEC, i
            e_last_delta[i] = last_delta
            e_base_ts[i] = base_ts
            e_max_ts[i] = max_ts
            e_pid[i] = pid
            e_count[i] = count
            if count < 0:
                return E_RECORD_COUNT, i
            if codec == 0 and count * V2_MIN_RECORD_SIZE > size - V2_HEADER_SIZE:
                return E_RECORD_COUNT, i
            if end - (p + 21) > crc32c_inline_max:
                e_crc_deferred[i] = 1
            elif crc32c_range(mv, p + 21, end) != crc:
                return E_CRC, i
            if attr & 0x20:
                e_ctrl[i] = CTRL_UNPARSED
        else:
            attr = mv[p + 17]
            e_attr[i] = attr
            if attr & 7 > 3:
                return E_CODEC, i
            e_last_delta[i] = 0
            e_count[i] = 1
            e_pid[i] = -1
            ts = _I64.unpack_from(mv, p + 18)[0] if magic == 1 else -1
            e_base_ts[i] = ts
            e_max_ts[i] = ts
            e_crc_deferred[i] = 1
        p = end
    return OK, -1
