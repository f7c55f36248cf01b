"""Zig-zag varints in plain Python, for the few values encoded outside the kernels (headers, defaults)."""

from __future__ import annotations


def zigzag_varint(v: int) -> bytes:
    """Avro's (and Confluent's message-index) variable-length zig-zag encoding of a 64-bit integer."""
    z = ((v << 1) ^ (v >> 63)) & 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)
