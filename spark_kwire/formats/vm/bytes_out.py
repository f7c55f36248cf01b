"""Writing integers and bytes into an output buffer inside the kernels. Every write checks the room left
(``cap``) and returns the new position, or -1 when the buffer is full (the caller grows it and resumes)."""

from __future__ import annotations

import numpy as np

from .bytes_in import copy_bytes


def write_long(out, pos, cap, v):
    """Zig-zag varint of ``v`` (Avro's int and long alike)."""
    if pos + 10 > cap:
        return np.int64(-1)
    z = (v << 1) ^ (v >> 63)
    while (z & ~np.int64(0x7F)) != 0:
        out[pos] = np.uint8((z & 0x7F) | 0x80)
        pos += 1
        z = (z >> 7) & np.int64(0x01FFFFFFFFFFFFFF)
    out[pos] = np.uint8(z)
    return pos + 1


def write_uvarint(out, pos, cap, v):
    """Base-128 varint of the 64 bits of ``v`` read as unsigned (Protobuf's varints; negative int32/int64 values
    take ten bytes)."""
    if pos + 10 > cap:
        return np.int64(-1)
    while (v & ~np.int64(0x7F)) != 0:
        out[pos] = np.uint8((v & 0x7F) | 0x80)
        pos += 1
        v = (v >> 7) & np.int64(0x01FFFFFFFFFFFFFF)
    out[pos] = np.uint8(v)
    return pos + 1


def write_le(out, pos, cap, bits, n):
    """The low ``n`` bytes of ``bits``, little-endian (floats and doubles by their bits)."""
    if pos + n > cap:
        return np.int64(-1)
    for i in range(n):
        out[pos + i] = np.uint8((bits >> (8 * i)) & 0xFF)
    return pos + n


def write_bytes(out, pos, cap, src, start, n):
    if pos + n > cap:
        return np.int64(-1)
    copy_bytes(out, pos, src, start, n)
    return pos + n


KERNELS = ("write_long", "write_uvarint", "write_le", "write_bytes")
