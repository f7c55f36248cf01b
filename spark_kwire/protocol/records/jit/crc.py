"""CRC-32C (record batch v2) and CRC-32 (legacy messages) over ranges of uint8 arrays.

CRC-32C uses the SSE4.2 instruction when the host has it (``HW_CRC32C``), else slicing-by-8 tables; CRC-32
always uses tables. Values are handled as int64 (see the package docstring). Callers guarantee the range.
"""

from __future__ import annotations

import numpy as np

from .cache import kernel
from .intrinsics import HW_CRC32C, hw_crc32c_u8, hw_crc32c_u64, load_u64_le


def _make_crc_tables(poly: int) -> np.ndarray:
    """Slicing-by-8 tables of a reflected polynomial."""
    t = np.zeros((8, 256), dtype=np.int64)
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        t[0, i] = c
    for i in range(256):
        c = int(t[0, i])
        for k in range(1, 8):
            c = int(t[0, c & 0xFF]) ^ (c >> 8)
            t[k, i] = c
    return t


CRC32C_TABLE = _make_crc_tables(0x82F63B78)  # Castagnoli, record batch v2
CRC32_TABLE = _make_crc_tables(0xEDB88320)  # zlib / IEEE, legacy messages


@kernel
def _crc_table(t, buf, start, end):
    c = np.int64(0xFFFFFFFF)
    i = start
    while i + 8 <= end:
        lo = c ^ (
            np.int64(buf[i])
            | (np.int64(buf[i + 1]) << 8)
            | (np.int64(buf[i + 2]) << 16)
            | (np.int64(buf[i + 3]) << 24)
        )
        c = (
            t[7, lo & 0xFF]
            ^ t[6, (lo >> 8) & 0xFF]
            ^ t[5, (lo >> 16) & 0xFF]
            ^ t[4, lo >> 24]
            ^ t[3, buf[i + 4]]
            ^ t[2, buf[i + 5]]
            ^ t[1, buf[i + 6]]
            ^ t[0, buf[i + 7]]
        )
        i += 8
    while i < end:
        c = t[0, (c ^ np.int64(buf[i])) & 0xFF] ^ (c >> 8)
        i += 1
    return c ^ 0xFFFFFFFF


@kernel
def _crc32c_hw(buf, start, end):
    c = np.int64(0xFFFFFFFF)
    i = np.int64(start)
    while i + 8 <= end:
        c = hw_crc32c_u64(c, load_u64_le(buf, i))
        i += 8
    while i < end:
        c = hw_crc32c_u8(c, np.int64(buf[i]))
        i += 1
    return (c ^ 0xFFFFFFFF) & 0xFFFFFFFF


if HW_CRC32C:

    @kernel
    def crc32c_range(buf, start, end):
        """CRC-32C of ``buf[start:end]``."""
        return _crc32c_hw(buf, start, end)

else:

    @kernel
    def crc32c_range(buf, start, end):
        """CRC-32C of ``buf[start:end]``."""
        return _crc_table(CRC32C_TABLE, buf, start, end)


@kernel
def crc32c_table_range(buf, start, end):
    """Table-driven CRC-32C (the path of hosts without SSE4.2; tested everywhere)."""
    return _crc_table(CRC32C_TABLE, buf, start, end)


@kernel
def crc32c_hw_range(buf, start, end):
    """SSE4.2 CRC-32C; only call when HW_CRC32C."""
    return _crc32c_hw(buf, start, end)


@kernel
def crc32_range(buf, start, end):
    """CRC-32 (zlib) of ``buf[start:end]``."""
    return _crc_table(CRC32_TABLE, buf, start, end)
