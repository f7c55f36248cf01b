"""UTF-8 validation inside the kernels (strict, as Java's and Python's decoders are: no overlong forms, no
surrogates, nothing past U+10FFFF), with an 8-bytes-at-a-time path over ASCII."""

from __future__ import annotations

import numpy as np

from .bytes_in import load_u64_le

HIGH_BITS = np.int64(-9187201950435737472)  # 0x8080808080808080


def valid_utf8(buf, pos, n):
    """Whether ``buf[pos:pos+n]`` is valid UTF-8 (bounds already checked)."""
    i = pos
    end = pos + n
    while i < end:
        if end - i >= 8 and (load_u64_le(buf, i) & HIGH_BITS) == 0:
            i += 8
            continue
        b = np.int64(buf[i])
        if b < 0x80:
            i += 1
            continue
        if b < 0xC2 or b > 0xF4:
            return False
        if b < 0xE0:
            size = 2
            lo = np.int64(0x80)
            hi = np.int64(0xBF)
        elif b < 0xF0:
            size = 3
            lo = np.int64(0xA0) if b == 0xE0 else np.int64(0x80)
            hi = np.int64(0x9F) if b == 0xED else np.int64(0xBF)
        else:
            size = 4
            lo = np.int64(0x90) if b == 0xF0 else np.int64(0x80)
            hi = np.int64(0x8F) if b == 0xF4 else np.int64(0xBF)
        if end - i < size:
            return False
        c = np.int64(buf[i + 1])
        if c < lo or c > hi:
            return False
        for k in range(2, size):
            c = np.int64(buf[i + k])
            if c < 0x80 or c > 0xBF:
                return False
        i += size
    return True


KERNELS = ("valid_utf8",)
