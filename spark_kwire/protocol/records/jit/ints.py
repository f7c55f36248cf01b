"""Integers inside record bytes: big-endian fixed widths and Kafka's zig-zag varints.

Everything is int64 inside the kernels, even unsigned 32-bit quantities: mixing signed and unsigned 64-bit
integers makes numba promote to float. Fixed-width reads do not check bounds (callers do); varint reads do.
"""

from __future__ import annotations

import numpy as np

from .cache import kernel


@kernel
def u32(buf, p):
    return (
        (np.int64(buf[p]) << 24)
        | (np.int64(buf[p + 1]) << 16)
        | (np.int64(buf[p + 2]) << 8)
        | np.int64(buf[p + 3])
    )


@kernel
def i32(buf, p):
    v = u32(buf, p)
    if v >= 0x80000000:
        v -= 0x100000000
    return v


@kernel
def i16(buf, p):
    v = (np.int64(buf[p]) << 8) | np.int64(buf[p + 1])
    if v >= 0x8000:
        v -= 0x10000
    return v


@kernel
def i64(buf, p):
    return (u32(buf, p) << 32) | u32(buf, p + 4)


@kernel
def read_varint(buf, pos, end):
    """Returns (value, new_pos); new_pos == -1 on a malformed or truncated varint.

    At most 5 bytes; the value is truncated to 32 bits like Java's int.
    """
    value = np.int64(0)
    shift = 0
    while True:
        if pos >= end:
            return np.int64(0), np.int64(-1)
        b = np.int64(buf[pos])
        pos += 1
        if b < 0x80:
            value |= b << shift
            break
        value |= (b & 0x7F) << shift
        shift += 7
        if shift > 28:
            return np.int64(0), np.int64(-1)
    value &= 0xFFFFFFFF
    return (value >> 1) ^ -(value & 1), np.int64(pos)


@kernel
def read_varlong(buf, pos, end):
    """Returns (value, new_pos); new_pos == -1 on error. At most 10 bytes."""
    value = np.int64(0)
    shift = 0
    while True:
        if pos >= end:
            return np.int64(0), np.int64(-1)
        b = np.int64(buf[pos])
        pos += 1
        if b < 0x80:
            value |= b << shift
            break
        value |= (b & 0x7F) << shift
        shift += 7
        if shift > 63:
            return np.int64(0), np.int64(-1)
    return ((value >> 1) & 0x7FFFFFFFFFFFFFFF) ^ -(value & 1), np.int64(pos)


@kernel
def varint_size(v):
    """Encoded size of the zig-zag varint/varlong of ``v``."""
    z = (v << 1) ^ (v >> 63)
    n = 1
    while (z & ~np.int64(0x7F)) != 0:
        z = (z >> 7) & 0x01FFFFFFFFFFFFFF
        n += 1
    return n


@kernel
def write_varint(out, pos, v):
    """Writes the zig-zag varint of ``v`` at ``out[pos]``; returns the new position."""
    z = (v << 1) ^ (v >> 63)
    while (z & ~np.int64(0x7F)) != 0:
        out[pos] = np.uint8((z & 0x7F) | 0x80)
        pos += 1
        z = (z >> 7) & 0x01FFFFFFFFFFFFFF
    out[pos] = np.uint8(z)
    return pos + 1
