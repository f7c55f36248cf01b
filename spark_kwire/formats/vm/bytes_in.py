"""Reading integers and floats from byte buffers inside the kernels (numba-compiled, or run as plain Python).

Every read is bounds-checked against ``end``; a failed read returns position -1. Arithmetic is on int64
throughout (numba promotes mixed signed/unsigned 64-bit integers to float).
"""

from __future__ import annotations

import numpy as np

I64_MIN = np.int64(-(2**63))


def read_uvarint(buf, pos, end):
    """(raw 64-bit value, new position) of an unsigned base-128 varint of at most 10 bytes; position -1 if
    truncated, -2 if too long."""
    if pos < end:
        b = np.int64(buf[pos])
        if b < 0x80:
            return b, pos + 1
    value = np.int64(0)
    shift = np.int64(0)
    while True:
        if shift > 63:
            return np.int64(0), np.int64(-2)
        if pos >= end:
            return np.int64(0), np.int64(-1)
        b = np.int64(buf[pos])
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7


def unzigzag(raw):
    return ((raw >> 1) & np.int64(0x7FFFFFFFFFFFFFFF)) ^ -(raw & 1)


def read_long(buf, pos, end):
    """(value, new position) of a zig-zag varlong (Avro long); position -1 if truncated, -2 if malformed."""
    raw, pos = read_uvarint(buf, pos, end)
    return unzigzag(raw), pos


def read_int(buf, pos, end):
    """(value, new position) of a zig-zag varint holding a 32-bit int (at most 5 bytes); position -1 if
    truncated, -2 if malformed or out of range."""
    start = pos
    raw, pos = read_uvarint(buf, pos, end)
    if pos < 0:
        return np.int64(0), pos
    if pos - start > 5 or raw > 0xFFFFFFFF or raw < 0:
        return np.int64(0), np.int64(-2)
    return unzigzag(raw), pos


def skip_varint(buf, pos, end):
    """The position after a varint of at most 10 bytes; -1 if truncated, -2 if too long."""
    for i in range(10):
        if pos + i >= end:
            return np.int64(-1)
        if buf[pos + i] < 0x80:
            return pos + i + 1
    return np.int64(-2)


def load_u32_le(buf, p):
    """Little-endian 4 bytes at ``p`` as int64 (caller checks bounds)."""
    return (np.int64(buf[p]) | (np.int64(buf[p + 1]) << 8) | (np.int64(buf[p + 2]) << 16)
            | (np.int64(buf[p + 3]) << 24))


def load_u64_le(buf, p):
    """Little-endian 8 bytes at ``p`` as int64 bits (caller checks bounds). The numba build replaces this with
    one unaligned load."""
    return load_u32_le(buf, p) | (load_u32_le(buf, p + 4) << 32)


def as_i32(v):
    """The low 32 bits of ``v`` as a signed value."""
    v &= 0xFFFFFFFF
    if v >= 0x80000000:
        v -= 0x100000000
    return v


def copy_bytes(dst, dst_off, src, src_off, n):
    """dst[dst_off:dst_off+n] = src[src_off:src_off+n] (ranges already checked). The numba build replaces this
    with a memcpy."""
    dst[dst_off:dst_off + n] = src[src_off:src_off + n]


KERNELS = ("read_uvarint", "unzigzag", "read_long", "read_int", "skip_varint", "load_u32_le", "load_u64_le",
           "as_i32", "copy_bytes")
