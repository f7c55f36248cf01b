"""Pass 2 for v2 batches in plain Python: walk the records section of one batch (as ``jit/decode_v2.py``).

Rows go to ``cols``, one Python list per row of the output table (see ``layout``), which ``regions.py``
copies into the table once at the end: appending to lists is much cheaper than numpy item assignment.
"""

from __future__ import annotations

from ..layout import (
    E_CAPACITY,
    E_FIELD_LENGTH,
    E_HEADER_KEY,
    E_RECORD_LENGTH,
    E_RECORD_SIZE,
    E_TRAILING,
    E_VARINT,
    OK,
)
from .ints import varint_at, varlong_at, wrap64


def v2_records(buf, base, s, e, count, base_offset, base_ts, max_ts, ts_type, start_offset, end_offset, cols,
               cap) -> int:
    """Decodes ``count`` records from ``buf[s:e]``; appends those with offsets in ``[start_offset,
    end_offset)`` to ``cols`` (positions shifted by ``base``); returns a status (``OK`` or ``E_*``)."""
    offsets, timestamps, ts_types, kposs, klens, vposs, vlens, hposs, hcnts = cols
    pos = s
    for _ in range(count):
        if pos >= e:
            return E_TRAILING  # fewer records than declared
        length, pos = varint_at(buf, pos, e)
        if pos < 0:
            return E_VARINT
        if length < 6 or length > e - pos:
            return E_RECORD_LENGTH
        rend = pos + length
        tsd, pos = varlong_at(buf, pos + 1, rend)  # + 1: record attributes (unused)
        if pos < 0:
            return E_VARINT
        od, pos = varint_at(buf, pos, rend)
        if pos < 0:
            return E_VARINT
        klen, pos = varint_at(buf, pos, rend)
        if pos < 0:
            return E_VARINT
        if klen < -1 or klen > rend - pos:
            return E_FIELD_LENGTH
        kpos = pos
        if klen > 0:
            pos += klen
        vlen, pos = varint_at(buf, pos, rend)
        if pos < 0:
            return E_VARINT
        if vlen < -1 or vlen > rend - pos:
            return E_FIELD_LENGTH
        vpos = pos
        if vlen > 0:
            pos += vlen
        hcnt, pos = varint_at(buf, pos, rend)
        if pos < 0:
            return E_VARINT
        if hcnt < 0 or hcnt > rend - pos:
            return E_FIELD_LENGTH
        hpos = pos
        for _h in range(hcnt):
            hk, pos = varint_at(buf, pos, rend)
            if pos < 0:
                return E_VARINT
            if hk < 0:
                return E_HEADER_KEY
            if hk > rend - pos:
                return E_FIELD_LENGTH
            pos += hk
            hv, pos = varint_at(buf, pos, rend)
            if pos < 0:
                return E_VARINT
            if hv < -1 or hv > rend - pos:
                return E_FIELD_LENGTH
            if hv > 0:
                pos += hv
        if pos != rend:
            return E_RECORD_SIZE
        off = wrap64(base_offset + od)
        if start_offset <= off < end_offset:
            if len(offsets) >= cap:
                return E_CAPACITY
            offsets.append(off)
            timestamps.append(max_ts if ts_type == 1 else wrap64(base_ts + tsd))
            ts_types.append(ts_type)
            kposs.append(base + kpos)
            klens.append(klen)
            vposs.append(base + vpos)
            vlens.append(vlen)
            hposs.append(base + hpos)
            hcnts.append(hcnt)
    if pos != e:
        return E_TRAILING
    return OK
