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

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def v2_records(buf, base, s, e, count, base_offset, base_ts, max_ts, ts_type, start_offset, end_offset, cols,
               cap) -> int:
    """Decodes ``count`` records from ``buf[s:e]`` (bytes); appends those with offsets in ``[start_offset,
    end_offset)`` to ``cols`` (positions shifted by ``base``); returns a status (``OK`` or ``E_*``).

    Most varints of a record are one byte (attributes, deltas, key length): those are read inline, the
    others by ``varint_at``.
    """
    offsets, timestamps, ts_types, kposs, klens, vposs, vlens, hposs, hcnts = cols
    n = len(offsets)
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
        pos += 1  # record attributes (unused)
        b = buf[pos]
        if b < 0x80:
            tsd = (b >> 1) ^ -(b & 1)
            pos += 1
        else:
            tsd, pos = varlong_at(buf, pos, rend)
            if pos < 0:
                return E_VARINT
        b = buf[pos] if pos < rend else 0x80
        if b < 0x80:
            od = (b >> 1) ^ -(b & 1)
            pos += 1
        else:
            od, pos = varint_at(buf, pos, rend)
            if pos < 0:
                return E_VARINT
        b = buf[pos] if pos < rend else 0x80
        if b < 0x80:
            klen = (b >> 1) ^ -(b & 1)
            pos += 1
        else:
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
        off = base_offset + od
        if not _INT64_MIN <= off <= _INT64_MAX:
            off = wrap64(off)
        if start_offset <= off < end_offset:
            if n >= cap:
                return E_CAPACITY
            n += 1
            offsets.append(off)
            ts = base_ts + tsd
            timestamps.append(max_ts if ts_type == 1 else (ts if _INT64_MIN <= ts <= _INT64_MAX else wrap64(ts)))
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
