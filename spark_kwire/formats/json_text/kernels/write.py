"""JSON Schema's values as JSON text inside the kernels: strings escaped as RFC 8259 asks (quote, backslash and
control characters; UTF-8 passes through), numbers formatted before the kernel copied (``text``; NaN and the
infinities refused), dates and timestamps in RFC 3339, base64, JSON-text strings checked. The walk over objects,
arrays and maps, shared with plain JSON's ``to_json``, is ``json/kernels/encode.py``'s ``json_encode_rows``: it
writes, for each row, the Confluent header and the row's JSON (compact: no spaces); a row that cannot be written
(a null where the schema allows none, NaN or an infinity, a JSON-text string that is not JSON) becomes a null
value and is reported.
"""

from __future__ import annotations

import numpy as np

from ...vm.bytes_out import write_bytes
from ...vm.codes import E_OK, E_OVERFLOW, E_TRAILING, E_VALUE_RANGE
from ...vm.slots import S_BASE, S_DATA_BASE
from ..tables import W_BASE64, W_BOOL, W_DATE, W_INT32, W_INT64, W_RAW, W_STRING, W_TEXT, W_TIMESTAMP
from .text import skip_value

_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
HEX_LOWER = _HEX  # for the shared walk (json/kernels/encode.py): JSON Schema's escapes
_B64 = np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", dtype=np.uint8)
_SHORT_ESCAPES = np.zeros(32, dtype=np.uint8)
for _c, _e in ((8, ord("b")), (9, ord("t")), (10, ord("n")), (12, ord("f")), (13, ord("r"))):
    _SHORT_ESCAPES[_c] = _e


def put_byte(out, pos, cap, b):
    if pos < 0 or pos >= cap:
        return np.int64(-1)
    out[pos] = b
    return pos + 1


def write_escaped(out, pos, cap, src, start, n):
    """A JSON string of the UTF-8 bytes ``src[start:start+n]``, quotes included."""
    return write_escaped_hex(out, pos, cap, src, start, n, _HEX)


def write_escaped_hex(out, pos, cap, src, start, n, hex_digits):
    """:func:`write_escaped` with the hex digits of ``\\u00XX`` escapes taken from ``hex_digits``."""
    if pos < 0 or pos + n + 2 > cap:
        return np.int64(-1)
    out[pos] = 34
    pos += 1
    for i in range(n):
        c = src[start + i]
        if c == 34 or c == 92:
            if pos + 2 + (n - i) > cap:
                return np.int64(-1)
            out[pos] = 92
            out[pos + 1] = c
            pos += 2
        elif c < 32:
            if pos + 6 + (n - i) > cap:
                return np.int64(-1)
            short = _SHORT_ESCAPES[c]
            out[pos] = 92
            if short != 0:
                out[pos + 1] = short
                pos += 2
            else:
                out[pos + 1] = 117
                out[pos + 2] = 48
                out[pos + 3] = 48
                out[pos + 4] = hex_digits[c >> 4]
                out[pos + 5] = hex_digits[c & 15]
                pos += 6
        else:
            out[pos] = c
            pos += 1
    if pos >= cap:
        return np.int64(-1)
    out[pos] = 34
    return pos + 1


def trunc10(x):
    """``x / 10`` rounded toward zero, for x <= 0 (no overflow at -2^63)."""
    q = x // 10
    if q * 10 != x:
        q += 1
    return q


def write_decimal_int(out, pos, cap, v):
    """The decimal digits of ``v`` (int64)."""
    if pos < 0 or pos + 20 > cap:
        return np.int64(-1)
    t = v
    if v < 0:
        out[pos] = 45
        pos += 1
    else:
        t = -v  # digits are taken from the negative value, which holds -2^63 too
    digits = 1
    x = t
    while x <= -10:
        x = trunc10(x)
        digits += 1
    x = t
    for i in range(digits):
        q = trunc10(x)
        out[pos + digits - 1 - i] = 48 + (q * 10 - x)
        x = q
    return pos + digits


def write_padded(out, pos, v, width):
    for i in range(width):
        out[pos + width - 1 - i] = 48 + v % 10
        v //= 10
    return pos + width


def civil(days):
    """(year, month, day) of a day count since 1970-01-01."""
    z = days + 719468
    era = z // 146097  # floor division, days before year 0 included
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return (y + 1 if m <= 2 else y), m, d


def write_date(out, pos, cap, days, quoted):
    """``YYYY-MM-DD`` (years 0..9999, else -1 through the returned code)."""
    y, m, d = civil(days)
    if y < 0 or y > 9999:
        return E_VALUE_RANGE, pos
    if pos < 0 or pos + 12 > cap:
        return E_OVERFLOW, np.int64(-1)
    if quoted:
        out[pos] = 34
        pos += 1
    pos = write_padded(out, pos, y, 4)
    out[pos] = 45
    pos = write_padded(out, pos + 1, m, 2)
    out[pos] = 45
    pos = write_padded(out, pos + 1, d, 2)
    if quoted:
        out[pos] = 34
        pos += 1
    return E_OK, pos


def write_timestamp(out, pos, cap, micros):
    """``"YYYY-MM-DDTHH:MM:SS[.ffffff]Z"``."""
    days = micros // 86400000000
    rest = micros - days * 86400000000
    if pos < 0 or pos + 30 > cap:
        return E_OVERFLOW, np.int64(-1)
    out[pos] = 34
    code, pos = write_date(out, pos + 1, cap, days, False)
    if code != E_OK:
        return code, pos
    seconds = rest // 1000000
    fraction = rest - seconds * 1000000
    out[pos] = 84
    pos = write_padded(out, pos + 1, seconds // 3600, 2)
    out[pos] = 58
    pos = write_padded(out, pos + 1, (seconds // 60) % 60, 2)
    out[pos] = 58
    pos = write_padded(out, pos + 1, seconds % 60, 2)
    if fraction != 0:
        out[pos] = 46
        pos = write_padded(out, pos + 1, fraction, 6)
    out[pos] = 90
    out[pos + 1] = 34
    return E_OK, pos + 2


def write_base64(out, pos, cap, src, start, n):
    size = 4 * ((n + 2) // 3) + 2
    if pos < 0 or pos + size > cap:
        return np.int64(-1)
    out[pos] = 34
    pos += 1
    i = 0
    while i + 3 <= n:
        v = (np.int64(src[start + i]) << 16) | (np.int64(src[start + i + 1]) << 8) | np.int64(src[start + i + 2])
        out[pos] = _B64[(v >> 18) & 63]
        out[pos + 1] = _B64[(v >> 12) & 63]
        out[pos + 2] = _B64[(v >> 6) & 63]
        out[pos + 3] = _B64[v & 63]
        pos += 4
        i += 3
    left = n - i
    if left > 0:
        v = np.int64(src[start + i]) << 16
        if left == 2:
            v |= np.int64(src[start + i + 1]) << 8
        out[pos] = _B64[(v >> 18) & 63]
        out[pos + 1] = _B64[(v >> 12) & 63]
        out[pos + 2] = _B64[(v >> 6) & 63] if left == 2 else 61
        out[pos + 3] = 61
        pos += 4
    out[pos] = 34
    return pos + 1


def write_word(out, pos, cap, word, n):
    """``n`` ASCII bytes of ``word`` (little-endian), e.g. true, false, null."""
    if pos < 0 or pos + n > cap:
        return np.int64(-1)
    for i in range(n):
        out[pos + i] = (word >> (8 * i)) & 0xFF
    return pos + n


def write_leaf(op, node, idx, state, a64, a32, a8, abytes, text_base, text_offsets, text_bytes, out, pos, cap,
               bstack):
    """One non-null leaf value; (code, position)."""
    base = state[node, S_BASE]
    if op == W_STRING or op == W_RAW or op == W_BASE64:
        start = np.int64(a32[base + idx])
        n = np.int64(a32[base + idx + 1]) - start
        data = state[node, S_DATA_BASE] + start
        if op == W_STRING:
            return E_OK, write_escaped(out, pos, cap, abytes, data, n)
        if op == W_BASE64:
            return E_OK, write_base64(out, pos, cap, abytes, data, n)
        code, e = skip_value(abytes, data, data + n, bstack)
        if code != E_OK:
            return code, pos
        while e < data + n and (abytes[e] == 32 or abytes[e] == 10 or abytes[e] == 13 or abytes[e] == 9):
            e += 1
        if e != data + n:
            return E_TRAILING, pos
        return E_OK, write_bytes(out, pos, cap, abytes, data, n)
    if op == W_INT32:
        return E_OK, write_decimal_int(out, pos, cap, np.int64(a32[base + idx]))
    if op == W_INT64:
        return E_OK, write_decimal_int(out, pos, cap, a64[base + idx])
    if op == W_TEXT:
        t = text_base[node] + idx
        s = text_offsets[t]
        e = text_offsets[t + 1]
        c = text_bytes[s]
        if c == 110 or c == 105 or (c == 45 and e - s > 1 and text_bytes[s + 1] == 105):  # nan, inf, -inf
            return E_VALUE_RANGE, pos
        return E_OK, write_bytes(out, pos, cap, text_bytes, s, e - s)
    if op == W_BOOL:
        if a8[base + idx] != 0:
            return E_OK, write_word(out, pos, cap, np.int64(0x65757274), 4)
        return E_OK, write_word(out, pos, cap, np.int64(0x65736C6166), 5)
    if op == W_DATE:
        return write_date(out, pos, cap, np.int64(a32[base + idx]), True)
    if op == W_TIMESTAMP:
        return write_timestamp(out, pos, cap, a64[base + idx])
    return E_OK, write_word(out, pos, cap, np.int64(0x6C6C756E), 4)  # W_NULL


KERNELS = ("put_byte", "write_escaped", "write_escaped_hex", "trunc10", "write_decimal_int", "write_padded", "civil",
           "write_date", "write_timestamp", "write_base64", "write_word", "write_leaf")
