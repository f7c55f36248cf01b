"""Integers inside record bytes, in plain Python: Kafka's zig-zag varints and int64 wrap-around.

``varint_at`` / ``varlong_at`` read from bytes or a memoryview (whose items are Python ints, unlike a numpy
array's); ``read_varint`` / ``read_varlong`` accept any buffer. The compiled kernels compute in int64, so
sums that can overflow (offsets, timestamps) are wrapped with :func:`wrap64` to give the same results.
"""

from __future__ import annotations

import numpy as np

_MASK64 = (1 << 64) - 1


def wrap64(v: int) -> int:
    """``v`` as an int64 would hold it (two's-complement wrap-around)."""
    v &= _MASK64
    return v - (1 << 64) if v >> 63 else v


def varint_at(buf, pos: int, end: int) -> tuple[int, int]:
    """Returns (value, new_pos); new_pos == -1 on a malformed or truncated varint.

    At most 5 bytes; the value is truncated to 32 bits like Java's int.
    """
    value = 0
    shift = 0
    while True:
        if pos >= end:
            return 0, -1
        b = buf[pos]
        pos += 1
        if b < 0x80:
            value |= b << shift
            break
        value |= (b & 0x7F) << shift
        shift += 7
        if shift > 28:
            return 0, -1
    value &= 0xFFFFFFFF
    return (value >> 1) ^ -(value & 1), pos


def varlong_at(buf, pos: int, end: int) -> tuple[int, int]:
    """Returns (value, new_pos); new_pos == -1 on error. At most 10 bytes, value truncated to 64 bits."""
    value = 0
    shift = 0
    while True:
        if pos >= end:
            return 0, -1
        b = buf[pos]
        pos += 1
        if b < 0x80:
            value |= b << shift
            break
        value |= (b & 0x7F) << shift
        shift += 7
        if shift > 63:
            return 0, -1
    value &= _MASK64
    return (value >> 1) ^ -(value & 1), pos


def read_varint(buf, pos: int, end: int) -> tuple[int, int]:
    """:func:`varint_at` over any buffer (e.g. a uint8 numpy array)."""
    return varint_at(memoryview(buf), int(pos), int(end))


def read_varlong(buf, pos: int, end: int) -> tuple[int, int]:
    """:func:`varlong_at` over any buffer (e.g. a uint8 numpy array)."""
    return varlong_at(memoryview(buf), int(pos), int(end))


def _zigzag(v: int) -> int:
    if not -(2**63) <= v < 2**63:
        v = wrap64(v)
    return (v << 1) ^ (v >> 63)  # non-negative for any int64


def varint_size(v: int) -> int:
    """Encoded size of the zig-zag varint/varlong of ``v``."""
    if -64 <= v < 64:
        return 1
    if -8192 <= v < 8192:
        return 2
    return (_zigzag(v).bit_length() + 6) // 7


def encode_varint(v: int) -> bytes:
    """The zig-zag varint/varlong bytes of ``v``."""
    if -64 <= v < 64:
        return _ONE_BYTE[v + 64]
    z = _zigzag(v)
    out = bytearray()
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


_ONE_BYTE = [bytes([((v << 1) ^ (v >> 63)) & 0x7F]) for v in range(-64, 64)]


def write_varint(out, pos: int, v: int) -> int:
    """Writes the zig-zag varint of ``v`` at ``out[pos]``; returns the new position."""
    data = encode_varint(v)
    out[pos : pos + len(data)] = np.frombuffer(data, dtype=np.uint8)
    return pos + len(data)
