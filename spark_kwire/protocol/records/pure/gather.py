"""Pass 3 in plain Python: copy key, value and header bytes into Arrow buffers (as ``jit/gather.py``)."""

from __future__ import annotations

import numpy as np

from .ints import varint_at


def _u8(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype=np.uint8)


def gather_binary(a, b, pos, length, out_offsets, out_data):
    """Copies the (pos, length) slices (length -1 = null) into one data buffer.

    ``out_offsets`` (int32 or int64, n+1) receives Arrow offsets. Returns the number of bytes written.
    """
    n = pos.shape[0]
    out_offsets[0] = 0
    out_offsets[1:] = np.cumsum(np.maximum(length, 0))
    total = int(out_offsets[n])
    a_len = len(a)
    va, vb = bytes(a), bytes(b)  # one copy each: slicing bytes is much faster than slicing a memoryview
    pieces = [va[p : p + ln] if p < a_len else vb[p - a_len : p - a_len + ln]
              for p, ln in zip(pos.tolist(), length.tolist()) if ln > 0]
    out_data[:total] = _u8(b"".join(pieces))
    return total


def _headers(a, b, hpos, hcnt):
    """Yields, for every record with headers, (record index, [(key bytes, value bytes or None), ...])."""
    a_len = len(a)
    va, vb = bytes(a), bytes(b)
    for i, (p, c) in enumerate(zip(hpos.tolist(), hcnt.tolist())):
        if c <= 0:
            continue
        buf = va if p < a_len else vb
        if p >= a_len:
            p -= a_len
        end = len(buf)
        pairs = []
        for _ in range(c):
            hk, p = varint_at(buf, p, end)
            key = buf[p : p + hk]
            p += hk
            hv, p = varint_at(buf, p, end)
            if hv >= 0:
                pairs.append((key, buf[p : p + hv]))
                p += hv
            else:
                pairs.append((key, None))
        yield i, pairs


def header_totals(a, b, hpos, hcnt):
    """Returns (n_headers, key_bytes, value_bytes) of the (already validated) headers."""
    nh = kb = vb = 0
    for _, pairs in _headers(a, b, hpos, hcnt):
        nh += len(pairs)
        for key, value in pairs:
            kb += len(key)
            vb += 0 if value is None else len(value)
    return nh, kb, vb


def header_fill(a, b, hpos, hcnt, list_offsets, k_offsets, k_data, v_offsets, v_data, v_valid):
    """Fills the Arrow buffers of the headers column (sized by header_totals); returns the header count."""
    counts = np.zeros(hpos.shape[0], dtype=np.int64)
    keys, values, valid = [], [], []
    for i, pairs in _headers(a, b, hpos, hcnt):
        counts[i] = len(pairs)
        for key, value in pairs:
            keys.append(key)
            valid.append(value is not None)
            values.append(b"" if value is None else value)
    h = len(keys)
    list_offsets[0] = 0
    list_offsets[1:] = np.cumsum(counts)
    for lengths, offsets, data, parts in ((map(len, keys), k_offsets, k_data, keys),
                                          (map(len, values), v_offsets, v_data, values)):
        offsets[0] = 0
        offsets[1:h + 1] = np.cumsum(np.fromiter(lengths, dtype=np.int64, count=h))
        joined = b"".join(parts)
        data[: len(joined)] = _u8(joined)
    v_valid[:h] = valid
    return h
