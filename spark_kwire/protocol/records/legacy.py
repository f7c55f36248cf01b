"""Legacy message sets (magic 0 and 1), the pre-0.11 on-disk/wire format.

Layout of one message (all big-endian)::

    offset int64 | message_size int32 | crc uint32 (CRC-32 of magic..end)
    magic int8 | attributes int8 (bits 0-2 codec, bit 3 timestamp type, magic 1)
    [timestamp int64, magic 1 only] | key bytes(int32 len, -1 = null) | value bytes

A compressed message ("wrapper") carries a whole inner message set in its
value. For magic 1 the inner offsets are relative: the absolute offset is
``wrapper_offset - last_inner_relative_offset + inner_relative_offset`` (the
Java client's rule; with inner offsets 0..n-1 that is
``wrapper_offset - (n - 1) + inner``). For magic 0 inner offsets are absolute.
A magic-1 wrapper with LogAppendTime overrides its inner timestamps.

The per-record work happens in the kernels (``legacy_message`` and
``legacy_inner`` of ``jit/decode_legacy.py`` or ``pure/decode_legacy.py``);
this module holds the Python-side helpers that run once per compressed wrapper.
"""

from __future__ import annotations

import struct

from . import kernels as K

MAGIC_V0 = 0
MAGIC_V1 = 1
HEADER_SIZE_V0 = 18  # offset..attributes
HEADER_SIZE_V1 = 26  # + timestamp
TIMESTAMP_TYPE_MASK = 0x08
CODEC_MASK = 0x07

_I32 = struct.Struct(">i")


def wrapper_value_range(mv, pos: int, size: int, magic: int) -> tuple[int, int]:
    """(start, end) of the value of the legacy message at ``pos`` (absolute
    positions in ``mv``). Raises ValueError with a kernel error code when the
    message layout is inconsistent or the value is null."""
    end = pos + size
    q = pos + (HEADER_SIZE_V1 if magic == 1 else HEADER_SIZE_V0)
    klen = _I32.unpack_from(mv, q)[0]
    q += 4
    if klen < -1 or klen > end - q - 4:
        raise ValueError(K.E_LEGACY_SIZE)
    q += max(klen, 0)
    vlen = _I32.unpack_from(mv, q)[0]
    q += 4
    if vlen == -1:
        if q != end:
            raise ValueError(K.E_LEGACY_SIZE)
        raise ValueError(K.E_LEGACY_NULL_WRAPPER)
    if vlen < 0 or q + vlen != end:
        raise ValueError(K.E_LEGACY_SIZE)
    return q, end
