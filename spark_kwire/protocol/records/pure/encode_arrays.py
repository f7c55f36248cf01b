"""Encoding v2 records in plain Python, whole arrays at a time: the fast path of ``encode.py``.

Rows without headers are written with numpy over all the rows of a batch at once: each varint field is a few
array assignments (one per byte its longest value needs), and the key and value bytes, which an Arrow column
holds back to back, are scattered into place with one indexed assignment each. Cutting rows into batches looks
at a window of rows at a time. Both give exactly what the record-by-record code (and the compiled kernel)
gives; rows with headers go through ``encode.py``'s record-by-record loop.
"""

from __future__ import annotations

import numpy as np

from ..layout import V2_HEADER_SIZE

# zig-zag values from which a varint needs 2, 3, ... 10 bytes
_VARINT_STEPS = np.array([1 << (7 * k) for k in range(1, 10)], dtype=np.uint64)
_MIN_RECORD_BYTES = 7  # length, attributes, two deltas, key and value lengths, header count: a byte each


def zigzag(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.int64)
    return ((v << 1) ^ (v >> 63)).view(np.uint64)


def varint_sizes(v: np.ndarray) -> np.ndarray:
    """Encoded size of the zig-zag varint of every int64 in ``v``."""
    return np.searchsorted(_VARINT_STEPS, zigzag(v), side="right").astype(np.int64) + 1


def put_varints(out: np.ndarray, at: np.ndarray, values: np.ndarray, sizes: np.ndarray) -> None:
    """Writes the zig-zag varint of each value at ``out[at]`` (``sizes``: their encoded sizes)."""
    z = zigzag(values)
    rows = np.arange(at.shape[0])
    for i in range(int(sizes.max(initial=0))):
        rows = rows[sizes[rows] > i]
        byte = (z[rows] >> np.uint64(7 * i)) & np.uint64(0x7F)
        more = sizes[rows] > i + 1
        out[at[rows] + i] = (byte | (more.astype(np.uint64) << np.uint64(7))).astype(np.uint8)


def scatter(out: np.ndarray, starts: np.ndarray, lengths: np.ndarray, data: np.ndarray) -> None:
    """Copies ``data`` (the slices back to back, ``lengths`` bytes each) to ``out[starts[i]:starts[i] + lengths[i]]``."""
    total = int(lengths.sum())
    if total == 0:
        return
    before = np.cumsum(lengths) - lengths
    out[np.repeat(starts - before, lengths) + np.arange(total)] = data[:total]


def lengths_of(offsets: np.ndarray, valid: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """Lengths of slots ``lo..hi-1`` of an Arrow binary column, -1 for nulls."""
    return np.where(valid[lo:hi] == 0, -1, offsets[lo + 1 : hi + 1] - offsets[lo:hi])


def encode_plain_records(out, pos, first, last, base_ts, ts, k_off, k_data, k_valid, v_off, v_data, v_valid,
                         bodies: np.ndarray) -> int:
    """``encode_records`` for rows without headers (``bodies``: each record's body size); returns the end."""
    n = last - first
    klen = lengths_of(k_off, k_valid, first, last)
    vlen = lengths_of(v_off, v_valid, first, last)
    deltas = ts[first:last] - np.int64(base_ts)
    counters = np.arange(n, dtype=np.int64)
    fields = [(bodies, varint_sizes(bodies)), (None, 1), (deltas, varint_sizes(deltas)),
              (counters, varint_sizes(counters)), (klen, varint_sizes(klen)), ("key", np.maximum(klen, 0)),
              (vlen, varint_sizes(vlen)), ("value", np.maximum(vlen, 0)), (None, 1)]
    record_sizes = fields[0][1] + bodies
    starts = np.empty(n, dtype=np.int64)
    starts[0] = pos
    np.cumsum(record_sizes[:-1], out=starts[1:])
    starts[1:] += pos
    at = starts
    for values, sizes in fields:
        if values is None:  # attributes, header count: a zero byte
            out[at] = 0
        elif isinstance(values, str):
            offsets, data = (k_off, k_data) if values == "key" else (v_off, v_data)
            scatter(out, at, sizes, data[offsets[first] : offsets[last]])
        else:
            put_varints(out, at, values, sizes)
        at = at + sizes
    return int(starts[-1] + record_sizes[-1])


def fixed_sizes(first, last, k_off, k_valid, v_off, v_valid, h_list, hk_off, hv_off, hv_valid) -> np.ndarray:
    """Per row of ``first..last-1``: body bytes that do not depend on where its batch starts (attributes,
    key, value, headers)."""
    sizes = 1 + _field_sizes(lengths_of(k_off, k_valid, first, last))
    sizes += _field_sizes(lengths_of(v_off, v_valid, first, last))
    h0 = h_list[first : last + 1]
    sizes += varint_sizes(np.diff(h0))
    lo, hi = int(h0[0]), int(h0[-1])
    if hi > lo:
        per_header = _field_sizes(hk_off[lo + 1 : hi + 1] - hk_off[lo:hi]) + _field_sizes(
            lengths_of(hv_off, hv_valid, lo, hi))
        running = np.zeros(hi - lo + 1, dtype=np.int64)
        np.cumsum(per_header, out=running[1:])
        sizes += running[h0[1:] - lo] - running[h0[:-1] - lo]
    return sizes


def _field_sizes(lengths: np.ndarray) -> np.ndarray:
    return varint_sizes(lengths) + np.maximum(lengths, 0)


def split_points(max_bytes, ts, k_off, k_valid, v_off, v_valid, h_list, hk_off, hv_off, hv_valid):
    """Greedy cut of rows into batches whose uncompressed v2 encoding is at most ``max_bytes`` (a single larger
    record gets a batch of its own); returns the boundaries [0, b1, ..., n]. Each batch is cut from a window of
    the rows that could fit in it, with the deltas of its own first row."""
    n = ts.shape[0]
    if n == 0:
        return np.zeros(1, dtype=np.int64)
    fixed = fixed_sizes(0, n, k_off, k_valid, v_off, v_valid, h_list, hk_off, hv_off, hv_valid)
    most = max(1, int(max_bytes) // _MIN_RECORD_BYTES + 1)  # more rows than any batch can hold
    window = min(most, 1024)
    bounds = [0]
    first = 0
    while first < n:
        last = min(n, first + window)
        deltas = ts[first:last] - ts[first]
        bodies = fixed[first:last] + varint_sizes(deltas) + varint_sizes(np.arange(last - first, dtype=np.int64))
        sizes = V2_HEADER_SIZE + np.cumsum(varint_sizes(bodies) + bodies)
        fit = int(np.searchsorted(sizes, max_bytes, side="right"))
        if fit == last - first and last < n and window < most:
            window = min(most, 4 * window)  # the batch may hold more rows than the window: look further
            continue
        first += max(1, fit)
        bounds.append(first)
        window = min(most, max(1024, 2 * fit))
    return np.array(bounds, dtype=np.int64)
