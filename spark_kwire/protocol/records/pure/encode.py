"""Encoding v2 records sections from Arrow buffers, and cutting rows into batches, in plain Python with numpy
(as ``jit/encode.py``). Record sizes are computed for all rows at once with numpy; rows without headers are
written whole arrays at a time (``encode_arrays.py``, which also cuts batches), rows with headers record by
record."""

from __future__ import annotations

import numpy as np

from .encode_arrays import encode_plain_records, fixed_sizes, split_points, varint_sizes
from .ints import encode_varint

def _body_sizes(first, last, base_ts, ts, *columns) -> np.ndarray:
    """Size of each record body (all but its length varint) of a batch of rows ``first..last-1``."""
    deltas = ts[first:last] - np.int64(base_ts)  # int64 wrap-around, as the compiled kernel
    return (fixed_sizes(first, last, *columns) + varint_sizes(deltas)
            + varint_sizes(np.arange(last - first, dtype=np.int64)))


def encoded_records_size(first, last, base_ts, ts, k_off, k_valid, v_off, v_valid, h_list, hk_off, hv_off,
                         hv_valid):
    """Bytes of the records section holding rows ``first..last-1`` with base timestamp ``base_ts``."""
    if last <= first:
        return 0
    bodies = _body_sizes(first, last, base_ts, ts, k_off, k_valid, v_off, v_valid, h_list, hk_off, hv_off, hv_valid)
    return int((varint_sizes(bodies) + bodies).sum())


def encode_records(out, pos, first, last, base_ts, ts, k_off, k_data, k_valid, v_off, v_data, v_valid, h_list,
                   hk_off, hk_data, hv_off, hv_data, hv_valid):
    """Writes records ``first..last-1`` at ``out[pos]`` (out must be large enough: see encoded_records_size).
    Returns the end position."""
    if last <= first:
        return pos
    bodies = _body_sizes(first, last, base_ts, ts, k_off, k_valid, v_off, v_valid, h_list, hk_off, hv_off, hv_valid)
    if h_list[first] == h_list[last]:  # no headers: whole arrays at a time
        return encode_plain_records(out, pos, first, last, base_ts, ts, k_off, k_data, k_valid, v_off, v_data,
                                    v_valid, bodies)
    bodies = bodies.tolist()
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


__all__ = ["encode_records", "encoded_records_size", "split_points"]
