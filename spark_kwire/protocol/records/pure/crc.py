"""CRC-32C (record batch v2) and CRC-32 (legacy messages) over ranges of a buffer, by the C libraries."""

from __future__ import annotations

import zlib

import crc32c as _crc32c

HW_CRC32C = False  # the compiled path's SSE4.2 choice; the libraries make their own


def crc32c_range(buf, start: int, end: int) -> int:
    """CRC-32C of ``buf[start:end]``."""
    return _crc32c.crc32c(memoryview(buf)[start:end])


def crc32_range(buf, start: int, end: int) -> int:
    """CRC-32 (zlib) of ``buf[start:end]``."""
    return zlib.crc32(memoryview(buf)[start:end])
