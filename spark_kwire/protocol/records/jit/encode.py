"""Encoding the records section of v2 batches from Arrow buffers, and cutting rows into batches by size."""

from __future__ import annotations

import numpy as np

from ..layout import V2_HEADER_SIZE
from .cache import kernel
from .intrinsics import copy_bytes
from .ints import varint_size, write_varint


@kernel
def _slot_len(offsets, valid, i):
    if valid[i] == 0:
        return np.int64(-1)
    return offsets[i + 1] - offsets[i]


@kernel
def record_body_size(
    i, first, base_ts, ts,
    k_off, k_valid, v_off, v_valid,
    h_list, hk_off, hv_off, hv_valid,
):
    """Size of record ``i``'s body (everything after its length varint) in a
    batch whose first record is ``first`` with base timestamp ``base_ts``."""
    size = 1 + varint_size(ts[i] - base_ts) + varint_size(i - first)
    kl = _slot_len(k_off, k_valid, i)
    size += varint_size(kl) + max(kl, 0)
    vl = _slot_len(v_off, v_valid, i)
    size += varint_size(vl) + max(vl, 0)
    h0 = h_list[i]
    h1 = h_list[i + 1]
    size += varint_size(h1 - h0)
    for h in range(h0, h1):
        hk = hk_off[h + 1] - hk_off[h]
        size += varint_size(hk) + hk
        hv = _slot_len(hv_off, hv_valid, h)
        size += varint_size(hv) + max(hv, 0)
    return size


@kernel
def encoded_records_size(
    first, last, base_ts, ts, k_off, k_valid, v_off, v_valid, h_list, hk_off, hv_off, hv_valid,
):
    total = np.int64(0)
    for i in range(first, last):
        body = record_body_size(
            i, first, base_ts, ts, k_off, k_valid, v_off, v_valid, h_list, hk_off, hv_off, hv_valid
        )
        total += varint_size(body) + body
    return total


@kernel
def encode_records(
    out, pos, first, last, base_ts, ts,
    k_off, k_data, k_valid, v_off, v_data, v_valid,
    h_list, hk_off, hk_data, hv_off, hv_data, hv_valid,
):
    """Writes records ``first..last-1`` at ``out[pos]`` (out must be large
    enough: see encoded_records_size). Returns the end position."""
    for i in range(first, last):
        body = record_body_size(
            i, first, base_ts, ts, k_off, k_valid, v_off, v_valid, h_list, hk_off, hv_off, hv_valid
        )
        pos = write_varint(out, pos, body)
        out[pos] = 0  # record attributes
        pos += 1
        pos = write_varint(out, pos, ts[i] - base_ts)
        pos = write_varint(out, pos, i - first)
        kl = _slot_len(k_off, k_valid, i)
        pos = write_varint(out, pos, kl)
        if kl > 0:
            s = k_off[i]
            copy_bytes(out, pos, k_data, s, kl)
            pos += kl
        vl = _slot_len(v_off, v_valid, i)
        pos = write_varint(out, pos, vl)
        if vl > 0:
            s = v_off[i]
            copy_bytes(out, pos, v_data, s, vl)
            pos += vl
        h0 = h_list[i]
        h1 = h_list[i + 1]
        pos = write_varint(out, pos, h1 - h0)
        for h in range(h0, h1):
            s = hk_off[h]
            hk = hk_off[h + 1] - s
            pos = write_varint(out, pos, hk)
            copy_bytes(out, pos, hk_data, s, hk)
            pos += hk
            hv = _slot_len(hv_off, hv_valid, h)
            pos = write_varint(out, pos, hv)
            if hv > 0:
                s = hv_off[h]
                copy_bytes(out, pos, hv_data, s, hv)
                pos += hv
    return pos


@kernel
def split_points(max_bytes, ts, k_off, k_valid, v_off, v_valid, h_list, hk_off, hv_off, hv_valid):
    """Greedy cut of rows into batches whose uncompressed v2 encoding is at
    most ``max_bytes`` (a single larger record gets a batch of its own).
    Returns the boundaries [0, b1, ..., n]."""
    n = ts.shape[0]
    bounds = np.empty(n + 1, dtype=np.int64)
    nb = 0
    bounds[0] = 0
    first = np.int64(0)
    size = np.int64(V2_HEADER_SIZE)
    i = np.int64(0)
    while i < n:
        body = record_body_size(
            i, first, ts[first], ts, k_off, k_valid, v_off, v_valid, h_list, hk_off, hv_off, hv_valid
        )
        rs = varint_size(body) + body
        if i > first and size + rs > max_bytes:
            nb += 1
            bounds[nb] = i
            first = i
            size = np.int64(V2_HEADER_SIZE)
            continue  # recompute the size relative to the new batch start
        size += rs
        i += 1
    if n > 0:
        nb += 1
        bounds[nb] = n
    return bounds[: nb + 1].copy()

