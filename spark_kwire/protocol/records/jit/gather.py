"""Pass 3: copy key, value and header bytes from the fetched and decompressed buffers into Arrow buffers."""

from __future__ import annotations

import numpy as np

from .cache import kernel
from .intrinsics import copy_bytes
from .ints import read_varint


@kernel
def gather_binary(a, b, pos, length, out_offsets, out_data):
    """Copies the (pos, length) slices (length -1 = null) into one data buffer.

    ``out_offsets`` (int32 or int64, n+1) receives Arrow offsets.
    Returns the number of bytes written.
    """
    a_len = a.shape[0]
    o = np.int64(0)
    n = pos.shape[0]
    for i in range(n):
        out_offsets[i] = o
        ln = length[i]
        if ln > 0:
            p = pos[i]
            if p < a_len:
                copy_bytes(out_data, o, a, p, ln)
            else:
                q = p - a_len
                copy_bytes(out_data, o, b, q, ln)
            o += ln
    out_offsets[n] = o
    return o


@kernel
def header_totals(a, b, hpos, hcnt):
    """Returns (n_headers, key_bytes, value_bytes) of the (already validated) headers."""
    a_len = a.shape[0]
    nh = np.int64(0)
    kb = np.int64(0)
    vb = np.int64(0)
    for i in range(hpos.shape[0]):
        c = hcnt[i]
        if c <= 0:
            continue
        p = hpos[i]
        if p < a_len:
            buf = a
        else:
            buf = b
            p -= a_len
        end = buf.shape[0]
        for _ in range(c):
            hk, p = read_varint(buf, p, end)
            p += hk
            kb += hk
            hv, p = read_varint(buf, p, end)
            if hv > 0:
                p += hv
                vb += hv
            nh += 1
    return nh, kb, vb


@kernel
def header_fill(a, b, hpos, hcnt, list_offsets, k_offsets, k_data, v_offsets, v_data, v_valid):
    a_len = a.shape[0]
    h = np.int64(0)
    ko = np.int64(0)
    vo = np.int64(0)
    n = hpos.shape[0]
    for i in range(n):
        list_offsets[i] = h
        c = hcnt[i]
        if c <= 0:
            continue
        p = hpos[i]
        if p < a_len:
            buf = a
        else:
            buf = b
            p -= a_len
        end = buf.shape[0]
        for _ in range(c):
            hk, p = read_varint(buf, p, end)
            k_offsets[h] = ko
            copy_bytes(k_data, ko, buf, p, hk)
            ko += hk
            p += hk
            hv, p = read_varint(buf, p, end)
            v_offsets[h] = vo
            if hv >= 0:
                v_valid[h] = 1
                copy_bytes(v_data, vo, buf, p, hv)
                vo += hv
                p += hv
            else:
                v_valid[h] = 0
            h += 1
    list_offsets[n] = h
    k_offsets[h] = ko
    v_offsets[h] = vo
    return h

