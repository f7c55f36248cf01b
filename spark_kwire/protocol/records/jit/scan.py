"""Pass 1: find the complete top-level entries (v2 batches or legacy messages), read their header fields and
verify their checksums."""

from __future__ import annotations

import numpy as np

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
from .cache import kernel
from .crc import crc32c_range
from .ints import i16, i32, i64, read_varint, read_varlong, u32


@kernel
def count_entries(buf):
    """Walks the entry length fields.

    Returns (n_complete, end_of_last_complete, status, error_pos). A trailing incomplete entry (or fewer
    than the bytes needed to read its length and magic) is ignored, as the Java consumer does.
    """
    n = buf.shape[0]
    p = np.int64(0)
    count = np.int64(0)
    while p + 17 <= n:
        size = i32(buf, p + 8)
        magic = np.int64(buf[p + 16])
        if magic == 2:
            if size < V2_HEADER_SIZE - 12:
                return count, p, E_BATCH_LENGTH, p
        elif magic == 1:
            if size < LEGACY_MIN_SIZE - 12 + 8:
                return count, p, E_BATCH_LENGTH, p
        elif magic == 0:
            if size < LEGACY_MIN_SIZE - 12:
                return count, p, E_BATCH_LENGTH, p
        else:
            if size < LEGACY_MIN_SIZE - 12:
                return count, p, E_BATCH_LENGTH, p
            if p + 12 + size <= n:
                return count, p, E_MAGIC, p
            break
        if p + 12 + size > n:
            break
        p += 12 + size
        count += 1
    return count, p, OK, np.int64(-1)


@kernel
def control_type(buf, p, end):
    """ControlRecordType (``CTRL_*``) of the first record of the control batch records section at ``buf[p:end]``."""
    length, q = read_varint(buf, p, end)
    if q < 0 or length < 6 or q + length > end:
        return CTRL_MALFORMED
    rend = q + length
    q += 1  # attributes
    _, q = read_varlong(buf, q, rend)
    if q < 0:
        return CTRL_MALFORMED
    _, q = read_varint(buf, q, rend)
    if q < 0:
        return CTRL_MALFORMED
    klen, q = read_varint(buf, q, rend)
    if q < 0 or klen < 4 or q + klen > rend:
        return CTRL_MALFORMED
    if i16(buf, q) < 0:
        return CTRL_MALFORMED
    t = i16(buf, q + 2)
    if t == CTRL_ABORT or t == CTRL_COMMIT:
        return t
    return CTRL_UNKNOWN


@kernel
def scan_entries(buf, n_entries, crc32c_inline_max, e_pos, e_size, e_magic, e_attr, e_base_offset, e_last_delta,
                 e_count, e_pid, e_base_ts, e_max_ts, e_ctrl, e_crc_deferred):
    """Fills the per-entry arrays for the ``n_entries`` found by count_entries.

    Validates magic, codec, record count and the checksum of v2 batches whose checksummed region is at most
    ``crc32c_inline_max`` bytes; larger batches and every legacy message are flagged in ``e_crc_deferred`` for
    the caller to check with a CRC library. Control batches are flagged ``CTRL_UNPARSED`` in ``e_ctrl``: their
    type is read only where read_committed needs it (keeping legacy CRC and control parsing out of this kernel
    keeps them out of the first read's compile time). Returns (status, entry_index).
    """
    p = np.int64(0)
    for i in range(n_entries):
        size = 12 + i32(buf, p + 8)
        end = p + size
        magic = np.int64(buf[p + 16])
        e_pos[i] = p
        e_size[i] = size
        e_magic[i] = magic
        e_base_offset[i] = i64(buf, p)
        e_crc_deferred[i] = 0
        e_ctrl[i] = CTRL_UNKNOWN
        if magic == 2:
            attr = i16(buf, p + 21)
            e_attr[i] = attr
            codec = attr & 7
            if codec > 4:
                return E_CODEC, i
            e_last_delta[i] = i32(buf, p + 23)
            e_base_ts[i] = i64(buf, p + 27)
            e_max_ts[i] = i64(buf, p + 35)
            e_pid[i] = i64(buf, p + 43)
            count = i32(buf, p + 57)
            e_count[i] = count
            if count < 0:
                return E_RECORD_COUNT, i
            if codec == 0 and count * V2_MIN_RECORD_SIZE > size - V2_HEADER_SIZE:
                return E_RECORD_COUNT, i
            if end - (p + 21) > crc32c_inline_max:
                e_crc_deferred[i] = 1
            elif crc32c_range(buf, p + 21, end) != u32(buf, p + 17):
                return E_CRC, i
            if (attr & 0x20) != 0:
                e_ctrl[i] = CTRL_UNPARSED
        else:
            attr = np.int64(buf[p + 17])
            e_attr[i] = attr
            if (attr & 7) > 3:
                return E_CODEC, i
            e_last_delta[i] = 0
            e_count[i] = 1
            e_pid[i] = -1
            if magic == 1:
                ts = i64(buf, p + 18)
            else:
                ts = np.int64(-1)
            e_base_ts[i] = ts
            e_max_ts[i] = ts
            e_crc_deferred[i] = 1
        p = end
    return OK, np.int64(-1)
