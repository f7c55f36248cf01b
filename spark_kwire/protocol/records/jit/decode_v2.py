"""Pass 2 for v2 batches: walk the records section of one batch into the output table (see ``layout``)."""

from __future__ import annotations

from ..layout import (
    E_CAPACITY,
    E_FIELD_LENGTH,
    E_HEADER_KEY,
    E_RECORD_LENGTH,
    E_RECORD_SIZE,
    E_TRAILING,
    E_VARINT,
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
from .ints import read_varint, read_varlong


@kernel
def v2_records(buf, base, s, e, count, base_offset, base_ts, max_ts, ts_type, start_offset, end_offset, n, out):
    cap = out.shape[1]
    pos = s
    for _ in range(count):
        if pos >= e:
            return E_TRAILING, n  # fewer records than declared
        length, pos = read_varint(buf, pos, e)
        if pos < 0:
            return E_VARINT, n
        if length < 6 or length > e - pos:
            return E_RECORD_LENGTH, n
        rend = pos + length
        pos += 1  # record attributes (unused)
        tsd, pos = read_varlong(buf, pos, rend)
        if pos < 0:
            return E_VARINT, n
        od, pos = read_varint(buf, pos, rend)
        if pos < 0:
            return E_VARINT, n
        klen, pos = read_varint(buf, pos, rend)
        if pos < 0:
            return E_VARINT, n
        if klen < -1 or klen > rend - pos:
            return E_FIELD_LENGTH, n
        kpos = pos
        if klen > 0:
            pos += klen
        vlen, pos = read_varint(buf, pos, rend)
        if pos < 0:
            return E_VARINT, n
        if vlen < -1 or vlen > rend - pos:
            return E_FIELD_LENGTH, n
        vpos = pos
        if vlen > 0:
            pos += vlen
        hcnt, pos = read_varint(buf, pos, rend)
        if pos < 0:
            return E_VARINT, n
        if hcnt < 0 or hcnt > rend - pos:
            return E_FIELD_LENGTH, n
        hpos = pos
        for _h in range(hcnt):
            hk, pos = read_varint(buf, pos, rend)
            if pos < 0:
                return E_VARINT, n
            if hk < 0:
                return E_HEADER_KEY, n
            if hk > rend - pos:
                return E_FIELD_LENGTH, n
            pos += hk
            hv, pos = read_varint(buf, pos, rend)
            if pos < 0:
                return E_VARINT, n
            if hv < -1 or hv > rend - pos:
                return E_FIELD_LENGTH, n
            if hv > 0:
                pos += hv
        if pos != rend:
            return E_RECORD_SIZE, n
        off = base_offset + od
        if off >= start_offset and off < end_offset:
            if n >= cap:
                return E_CAPACITY, n
            out[O_OFFSET, n] = off
            out[O_TS, n] = max_ts if ts_type == 1 else base_ts + tsd
            out[O_TS_TYPE, n] = ts_type
            out[O_KPOS, n] = base + kpos
            out[O_KLEN, n] = klen
            out[O_VPOS, n] = base + vpos
            out[O_VLEN, n] = vlen
            out[O_HPOS, n] = base + hpos
            out[O_HCNT, n] = hcnt
            n += 1
    if pos != e:
        return E_TRAILING, n
    return OK, n

