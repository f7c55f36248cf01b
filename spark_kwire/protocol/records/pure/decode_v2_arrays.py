"""Pass 2 for v2 batches in plain Python, whole arrays at a time: the fast path of ``decode_v2.py``.

For a batch whose records carry no headers, one Python loop finds where each record starts (its length varint
is all it reads), then numpy reads every further field of all records at once: attributes, timestamp delta,
offset delta, key length, value length, header count, one varint per record each, a few array operations per
varint byte. This runs some ten times faster than walking record by record, which matters while a process
decodes on the pure-Python kernels (numba missing, or not loaded yet: see ``warming``).

Anything irregular (a header, a malformed, truncated or overlong field, an offset or timestamp that would wrap
around int64, too many rows) makes :func:`rows_of_regions` return None, and ``decode_v2.v2_records`` decodes the
batch record by record, which reports the exact error the compiled kernel reports.
"""

from __future__ import annotations

import numpy as np

from ..layout import O_ROWS
from .ints import varint_at

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_NO_ROWS = np.zeros((O_ROWS, 0), dtype=np.int64)


def _varints(a: np.ndarray, pos: np.ndarray, end: np.ndarray, max_bytes: int):
    """The unsigned varint starting at each ``pos`` (before ``end``): (values as uint64, positions after them),
    or None when one is truncated or longer than ``max_bytes``."""
    value = np.zeros(pos.shape[0], dtype=np.uint64)
    at = pos.copy()
    todo = np.arange(pos.shape[0])
    for i in range(max_bytes):
        p = at[todo]
        if (p >= end[todo]).any():
            return None
        b = a[p].astype(np.uint64)
        value[todo] |= (b & np.uint64(0x7F)) << np.uint64(7 * i)
        at[todo] = p + 1
        todo = todo[b >= 0x80]
        if todo.shape[0] == 0:
            return value, at
    return None


def _zigzag32(v: np.ndarray) -> np.ndarray:
    v = (v & np.uint64(0xFFFFFFFF)).astype(np.int64)  # as Java's readVarint: 32 bits
    return (v >> 1) ^ -(v & 1)


def _zigzag64(v: np.ndarray) -> np.ndarray:
    return ((v >> np.uint64(1)) ^ (np.uint64(0) - (v & np.uint64(1)))).view(np.int64)


def _record_bodies(buf: bytes, s: int, e: int, count: int, base: int, bodies: list, lengths: list) -> bool:
    """Appends where the body of each of ``count`` records starts (plus ``base``) and its length; False unless
    they exactly fill ``buf[s:e]`` with valid lengths."""
    pos = s
    for _ in range(count):
        if pos >= e:
            return False
        b = buf[pos]
        if b < 0x80:
            length = (b >> 1) ^ -(b & 1)
            pos += 1
        else:
            length, pos = varint_at(buf, pos, e)
            if pos < 0:
                return False
        if length < 6 or length > e - pos:
            return False
        bodies.append(pos + base)
        lengths.append(length)
        pos += length
    return pos == e


def rows_of_regions(ab: np.ndarray, bufs: tuple[bytes, bytes], a_len: int, regions, start_offset: int,
                    end_offset: int, room: int):
    """The output rows (``layout.O_*``, shape (O_ROWS, k)) of the records of v2 ``regions`` (tuples of source,
    start, end, count, base offset, base timestamp, max timestamp, timestamp type) with offsets in
    ``[start_offset, end_offset)``; ``ab`` holds both sources back to back (positions in the second are shifted by
    ``a_len``, as the output wants them). None when they need the record-by-record path (see the module's
    docstring), including when more than ``room`` rows would be kept. All regions' records are read together:
    a fetch of small batches (16 KB is the Java producer's default) costs numpy's per-call overhead once."""
    bodies, lengths, counts, attributes = [], [], [], []
    for src, s, e, count, base_offset, base_ts, max_ts, ts_type in regions:
        if count <= 0 or not (-(2**62) < base_offset < 2**62 and -(2**62) < base_ts < 2**62):
            return None  # sums that could wrap around int64: the record-by-record path wraps them exactly
        if not _record_bodies(bufs[src != 0], s, e, count, a_len if src else 0, bodies, lengths):
            return None
        counts.append(count)
        attributes.append((base_offset, base_ts, max_ts, ts_type))
    if not bodies:
        return _NO_ROWS
    body, length = np.array(bodies, dtype=np.int64), np.array(lengths, dtype=np.int64)
    per_record = np.repeat(np.array(attributes, dtype=np.int64), counts, axis=0)
    base_offset, base_ts, max_ts, ts_type = per_record.T
    rend = body + length
    read = _varints(ab, body + 1, rend, 10)  # after the record attributes (unused)
    if read is None:
        return None
    tsd, pos = _zigzag64(read[0]), read[1]
    fields = []
    for _ in range(3):  # offset delta, key length (key skipped), value length (value skipped)
        read = _varints(ab, pos, rend, 5)
        if read is None:
            return None
        value, pos = _zigzag32(read[0]), read[1]
        fields.append((value, pos))
        if len(fields) > 1:
            if ((value < -1) | (value > rend - pos)).any():
                return None
            pos = pos + np.maximum(value, 0)
    read = _varints(ab, pos, rend, 5)
    if read is None:
        return None
    hcnt, after = _zigzag32(read[0]), read[1]
    if hcnt.any() or (after != rend).any():
        return None  # headers (or a malformed count), or bytes left over: record by record
    (od, _), (klen, kpos), (vlen, vpos) = fields
    if (np.abs(tsd) >= 2**62).any():
        return None
    offsets = od + base_offset
    timestamps = np.where(ts_type == 1, max_ts, tsd + base_ts)
    keep = (offsets >= start_offset) & (offsets < end_offset)
    kept = int(np.count_nonzero(keep))
    if kept > room:
        return None
    if kept == 0:
        return _NO_ROWS
    rows = np.empty((O_ROWS, kept), dtype=np.int64)
    whole = kept == keep.shape[0]
    for row, column in enumerate((offsets, timestamps, ts_type, kpos, klen, vpos, vlen, after, hcnt)):
        rows[row] = column if whole else column[keep]
    return rows
