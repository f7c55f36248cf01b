"""Encoding v2 records sections from Arrow buffers, and cutting rows into batches, in plain Python with numpy
(as ``jit/encode.py``). Record sizes are computed for all rows at once with numpy; the bytes are assembled
per record."""

from __future__ import annotations

import numpy as np

from ..layout import V2_HEADER_SIZE
from .ints import encode_varint, varint_size

# zig-zag values from which a varint needs 2, 3, ... 10 bytes
_VARINT_STEPS = np.array([1 << (7 * k) for k in range(1, 10)], dtype=np.uint64)


def _varint_sizes(v: np.ndarray) -> np.ndarray:
    """Encoded size of the zig-zag varint of every int64 in ``v``."""
    v = np.asarray(v, dtype=np.int64)
    zigzag = ((v << 1) ^ (v >> 63)).view(np.uint64)
    return np.searchsorted(_VARINT_STEPS, zigzag, side="right").astype(np.int64) + 1


def _slot_lengths(offsets, valid, lo, hi) -> np.ndarray:
    """Lengths of slots ``lo..hi-1`` of an Arrow binary column, -1 for nulls."""
    lengths = offsets[lo + 1 : hi + 1] - offsets[lo:hi]
    return np.where(valid[lo:hi] == 0, -1, lengths)


def _field_sizes(lengths: np.ndarray) -> np.ndarray:
    return _varint_sizes(lengths) + np.maximum(lengths, 0)


def _fixed_sizes(first, last, k_off, k_valid, v_off, v_valid, h_list, hk_off, hv_off, hv_valid) -> np.ndarray:
    """Per row of ``first..last-1``: body bytes that do not depend on where its batch starts (attributes,
    key, value, headers)."""
    sizes = 1 + _field_sizes(_slot_lengths(k_off, k_valid, first, last))
    sizes += _field_sizes(_slot_lengths(v_off, v_valid, first, last))
    h0 = h_list[first : last + 1]
    sizes += _varint_sizes(np.diff(h0))
    lo, hi = int(h0[0]), int(h0[-1])
    per_header = _field_sizes(hk_off[lo + 1 : hi + 1] - hk_off[lo:hi]) + _field_sizes(
        _slot_lengths(hv_off, hv_valid, lo, hi))
    running = np.zeros(hi - lo + 1, dtype=np.int64)
    np.cumsum(per_header, out=running[1:])
    sizes += running[h0[1:] - lo] - running[h0[:-1] - lo]
    return sizes


def _body_sizes(first, last, base_ts, ts, *columns) -> np.ndarray:
    """Size of each record body (all but its length varint) of a batch of rows ``first..last-1``."""
    deltas = ts[first:last] - np.int64(base_ts)  # int64 wrap-around, as the compiled kernel
    return (_fixed_sizes(first, last, *columns) + _varint_sizes(deltas)
            + _varint_sizes(np.arange(last - first, dtype=np.int64)))


def encoded_records_size(first, last, base_ts, ts, k_off, k_valid, v_off, v_valid, h_list, hk_off, hv_off,
                         hv_valid):
    """Bytes of the records section holding rows ``first..last-1`` with base timestamp ``base_ts``."""
    if last <= first:
        return 0
    bodies = _body_sizes(first, last, base_ts, ts, k_off, k_valid, v_off, v_valid, h_list, hk_off, hv_off, hv_valid)
    return int((_varint_sizes(bodies) + bodies).sum())


def encode_records(out, pos, first, last, base_ts, ts, k_off, k_data, k_valid, v_off, v_data, v_valid, h_list,
                   hk_off, hk_data, hv_off, hv_data, hv_valid):
    """Writes records ``first..last-1`` at ``out[pos]`` (out must be large enough: see encoded_records_size).
    Returns the end position."""
    if last <= first:
        return pos
    bodies = _body_sizes(first, last, base_ts, ts, k_off, k_valid, v_off, v_valid, h_list, hk_off, hv_off,
                         hv_valid).tolist()
    deltas = (ts[first:last] - np.int64(base_ts)).tolist()
    keys, values = memoryview(k_data), memoryview(v_data)
    header_keys, header_values = memoryview(hk_data), memoryview(hv_data)
    # Python lists of this batch's rows only (the columns may hold many batches)
    k_off, k_valid = k_off[first : last + 1].tolist(), k_valid[first:last].tolist()
    v_off, v_valid = v_off[first : last + 1].tolist(), v_valid[first:last].tolist()
    h_list = h_list[first : last + 1].tolist()
    h_lo, h_hi = h_list[0], h_list[-1]
    hk_off, hv_off = hk_off[h_lo : h_hi + 1].tolist(), hv_off[h_lo : h_hi + 1].tolist()
    hv_valid = hv_valid[h_lo:h_hi].tolist()
    enc = encode_varint
    buf = bytearray()
    for j in range(last - first):
        buf += enc(bodies[j])
        buf += b"\x00"  # record attributes
        buf += enc(deltas[j])
        buf += enc(j)
        for offsets, valid, data in ((k_off, k_valid, keys), (v_off, v_valid, values)):
            if valid[j]:
                buf += enc(offsets[j + 1] - offsets[j])
                buf += data[offsets[j] : offsets[j + 1]]
            else:
                buf += enc(-1)
        buf += enc(h_list[j + 1] - h_list[j])
        for h in range(h_list[j] - h_lo, h_list[j + 1] - h_lo):
            buf += enc(hk_off[h + 1] - hk_off[h])
            buf += header_keys[hk_off[h] : hk_off[h + 1]]
            if hv_valid[h]:
                buf += enc(hv_off[h + 1] - hv_off[h])
                buf += header_values[hv_off[h] : hv_off[h + 1]]
            else:
                buf += enc(-1)
    out[pos : pos + len(buf)] = np.frombuffer(buf, dtype=np.uint8)
    return pos + len(buf)


def split_points(max_bytes, ts, k_off, k_valid, v_off, v_valid, h_list, hk_off, hv_off, hv_valid):
    """Greedy cut of rows into batches whose uncompressed v2 encoding is at most ``max_bytes`` (a single
    larger record gets a batch of its own). Returns the boundaries [0, b1, ..., n]."""
    n = ts.shape[0]
    if n == 0:
        return np.zeros(1, dtype=np.int64)
    fixed = _fixed_sizes(0, n, k_off, k_valid, v_off, v_valid, h_list, hk_off, hv_off, hv_valid).tolist()
    stamps = ts.tolist()
    bounds = [0]
    first = 0
    size = V2_HEADER_SIZE
    i = 0
    while i < n:
        body = fixed[i] + varint_size(stamps[i] - stamps[first]) + varint_size(i - first)
        record = varint_size(body) + body
        if i > first and size + record > max_bytes:
            bounds.append(i)
            first = i
            size = V2_HEADER_SIZE
            continue  # recompute the size relative to the new batch start
        size += record
        i += 1
    bounds.append(n)
    return np.array(bounds, dtype=np.int64)
