"""A JSON value written again as Jackson's generator copies it (``copyCurrentStructure``), inside the kernels:
what ``from_json`` puts in a STRING field that holds a number, an object or an array. No whitespace; strings and
keys decoded and escaped anew (``\\u00XX`` with capital hex digits, ``/`` and non-ASCII as they are, but a
character beyond U+FFFF as its surrogates ``\\uD83D\\uDE00``); integers
without leading zeros (``-0`` is ``0``); other numbers as the double Java reads them, printed as Java prints
doubles (``2.50`` -> ``2.5``, ``1e10`` -> ``1.0E10``, ``1e400`` -> ``"Infinity"``).
"""

from __future__ import annotations

import numpy as np

from ...json_text.kernels.numbers import (
    java17_whole_digits, number_digits, shortest_digits, write_java_digits, write_non_finite
)
from ...json_text.kernels.text import decode_escapes, number_as_double
from ...json_text.kernels.write import put_byte
from ...vm.bytes_in import copy_bytes
from ...vm.codes import E_JSON_DEPTH, E_JSON_SYNTAX, E_OK
from .lexer import (
    T_FLOAT, T_INT, T_NAN, T_NEG_INF, is_name_byte, is_quote, key_end, literal_end, scan_quoted, scan_token,
    skip_blank
)

HEX_DIGITS = np.frombuffer(b"0123456789ABCDEF", dtype=np.uint8)
SHORT_ESCAPES = np.zeros(32, dtype=np.uint8)
for _c, _e in ((8, "b"), (9, "t"), (10, "n"), (12, "f"), (13, "r")):
    SHORT_ESCAPES[_c] = ord(_e)


def write_u_escape(out, w, v):
    out[w] = 92
    out[w + 1] = 117
    for k in range(4):
        out[w + 2 + k] = HEX_DIGITS[(v >> (12 - 4 * k)) & 15]
    return w + 6


def write_generated_string(out, w, src, start, n):
    """A JSON string of the UTF-8 bytes ``src[start:start+n]`` as Jackson's UTF-8 generator writes it: quote,
    backslash and control characters escaped (``\\n``, ``\\u0001``), a character beyond U+FFFF as its two
    surrogates (``\\uD83D\\uDE00``), the rest as it is; the new position, -1 when ``out`` is full."""
    cap = out.shape[0]
    if w < 0 or w + n + 2 > cap:
        return np.int64(-1)
    out[w] = 34
    w += 1
    i = start
    stop = start + n
    while i < stop:
        c = np.int64(src[i])
        if w + 12 + (stop - i) > cap:
            return np.int64(-1)
        if c == 34 or c == 92:
            out[w] = 92
            out[w + 1] = c
            w += 2
        elif c < 32:
            short = SHORT_ESCAPES[c]
            if short != 0:
                out[w] = 92
                out[w + 1] = short
                w += 2
            else:
                w = write_u_escape(out, w, c)
        elif c == 0xED and i + 2 < stop and src[i + 1] >= 0xA0:  # a lone surrogate: escaped alone
            w = write_u_escape(out, w, ((c & 15) << 12) | ((np.int64(src[i + 1]) & 63) << 6)
                               | (np.int64(src[i + 2]) & 63))
            i += 3
            continue
        elif c >= 0xF0 and i + 3 < stop:
            cp = ((c & 7) << 18) | ((np.int64(src[i + 1]) & 63) << 12) | ((np.int64(src[i + 2]) & 63) << 6) \
                | (np.int64(src[i + 3]) & 63)
            cp -= 0x10000
            w = write_u_escape(out, w, 0xD800 + (cp >> 10))
            w = write_u_escape(out, w, 0xDC00 + (cp & 0x3FF))
            i += 4
            continue
        else:
            out[w] = c
            w += 1
        i += 1
    out[w] = 34
    return w + 1


def copy_text(data, s, e, escaped, flags, out, w, tmp):
    """A string's content written as a JSON string (decoded first when it has escapes); the new position, -1 when
    ``out`` is full, -2 for a bad escape."""
    src = data
    start = s
    n = e - s
    if escaped:
        code, n = decode_escapes(data, s, e, tmp, flags, np.int64(0))
        if code != E_OK:
            return np.int64(-2)
        src = tmp
        start = np.int64(0)
    return write_generated_string(out, w, src, start, n)


def copy_number(data, pos, end, flags, out, w, dig):
    """The number token at ``pos`` as Jackson writes it; (end of the token, new position), end -1 if malformed."""
    tk, q, neg, mant, digits, frac, exp = scan_token(data, pos, end, flags)
    if tk == 0 or (q < end and is_name_byte(data[q])):
        return np.int64(-1), w
    if tk == T_INT:
        p = pos + 1 if neg else pos
        while p + 1 < q and data[p] == 48:
            p += 1
        if w < 0 or w + (q - p) + 1 > out.shape[0]:
            return q, np.int64(-1)
        if neg and not (q - p == 1 and data[p] == 48):
            out[w] = 45
            w += 1
        copy_bytes(out, w, data, p, q - p)
        return q, w + (q - p)
    if tk != T_FLOAT:
        return q, write_non_finite(out, w, out.shape[0], tk == T_NEG_INF, tk == T_NAN)
    exact, x = number_as_double(neg, mant, digits, frac, exp)
    if exact and (x == np.inf or x == -np.inf):
        return q, write_non_finite(out, w, out.shape[0], x < 0, False)
    n, sci = number_digits(data, pos + 1 if neg else pos, q, dig)
    if exact and x == 0.0:
        n = np.int64(0)
    elif exact:
        m, e10 = java17_whole_digits(x, False, dig)
        if m > 0:
            n, sci = m, e10
        else:
            n, sci = shortest_digits(dig, n, sci, abs(x))
    elif n > 17:
        n = np.int64(17)
    return q, write_java_digits(out, w, out.shape[0], neg, dig, n, sci)


def regenerate(data, pos, end, flags, out, tmp, bstack, dig):
    """Writes the JSON value at ``pos`` into ``out`` as Jackson copies it; (code, end of the value, length)."""
    w = np.int64(0)
    depth = 0
    expect_value = True
    while True:
        if expect_value:
            pos = skip_blank(data, pos, end, flags)
            if pos < 0 or pos >= end:
                return E_JSON_SYNTAX, pos, w
            c = data[pos]
            if c == 123 or c == 91:
                if depth >= bstack.shape[0]:
                    return E_JSON_DEPTH, pos, w
                bstack[depth] = c
                depth += 1
                w = put_byte(out, w, out.shape[0], c)
                pos = skip_blank(data, pos + 1, end, flags)
                if pos < 0 or pos >= end:
                    return E_JSON_SYNTAX, pos, w
                if data[pos] == c + 2:
                    w = put_byte(out, w, out.shape[0], c + 2)
                    pos += 1
                    depth -= 1
                elif c == 123:
                    ok, s, e, esc, after = key_end(data, pos, end, flags)
                    if not ok:
                        return E_JSON_SYNTAX, pos, w
                    w = copy_text(data, s, e, esc, flags, out, w, tmp)
                    w = put_byte(out, w, out.shape[0], 58)
                    pos = after
                    if w == -2:
                        return E_JSON_SYNTAX, pos, w
                    continue
                else:
                    continue
            elif is_quote(c, flags):
                ok, s, e, esc = scan_quoted(data, pos, end, flags)
                if not ok:
                    return E_JSON_SYNTAX, pos, w
                w = copy_text(data, s, e, esc, flags, out, w, tmp)
                if w == -2:
                    return E_JSON_SYNTAX, pos, w
                pos = e + 1
            elif c == 116 or c == 102 or c == 110:
                q = literal_end(data, pos, end)
                if q < 0:
                    return E_JSON_SYNTAX, pos, w
                if w >= 0 and w + (q - pos) <= out.shape[0]:
                    copy_bytes(out, w, data, pos, q - pos)
                    w += q - pos
                else:
                    w = np.int64(-1)
                pos = q
            else:
                q, w = copy_number(data, pos, end, flags, out, w, dig)
                if q < 0:
                    return E_JSON_SYNTAX, pos, w
                pos = q
            if w < 0:
                return E_OK, pos, w  # full: the caller sized ``out`` for the record
        expect_value = True
        while True:  # after a value
            if depth == 0:
                return E_OK, pos, w
            pos = skip_blank(data, pos, end, flags)
            if pos < 0 or pos >= end:
                return E_JSON_SYNTAX, pos, w
            c = data[pos]
            top = bstack[depth - 1]
            if c == 44:
                w = put_byte(out, w, out.shape[0], 44)
                pos = skip_blank(data, pos + 1, end, flags)
                if pos < 0:
                    return E_JSON_SYNTAX, pos, w
                if top == 123:
                    ok, s, e, esc, after = key_end(data, pos, end, flags)
                    if not ok:
                        return E_JSON_SYNTAX, pos, w
                    w = copy_text(data, s, e, esc, flags, out, w, tmp)
                    if w == -2:
                        return E_JSON_SYNTAX, pos, w
                    w = put_byte(out, w, out.shape[0], 58)
                    pos = after
                break
            if c == top + 2:
                w = put_byte(out, w, out.shape[0], c)
                pos += 1
                depth -= 1
                continue
            return E_JSON_SYNTAX, pos, w


KERNELS = ("write_u_escape", "write_generated_string", "copy_text", "copy_number", "regenerate")
