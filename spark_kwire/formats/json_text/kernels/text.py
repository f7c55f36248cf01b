"""JSON text inside the kernels (RFC 8259, strictly): whitespace, strings (escapes decoded, UTF-8 checked),
numbers (integers exactly; doubles exactly when the decimal is short, else left to Python's correctly rounded
``float``), RFC 3339 dates and date-times, and values skipped with their structure checked."""

from __future__ import annotations

import numpy as np

from ...vm.codes import E_BAD_UTF8, E_JSON_DATE, E_JSON_DEPTH, E_JSON_NUMBER, E_JSON_SYNTAX, E_NOT_AN_INTEGER, E_OK
from ...vm.utf8 import valid_utf8
from .floats import bits_to_double, eisel_lemire

_POW10_DOUBLE = np.array([10.0**i for i in range(23)], dtype=np.float64)
MAX_SAFE = np.int64(1) << 53
I64_MAX = np.int64(9223372036854775807)
I64_MIN = np.int64(-9223372036854775807 - 1)
LIMIT = np.int64(-922337203685477580)  # the most negative mantissa that can take one more digit (of at most 8)
_DAYS_BEFORE = np.array([0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334], dtype=np.int64)


def skip_ws(buf, pos, end):
    while pos < end:
        c = buf[pos]
        if c != 32 and c != 10 and c != 13 and c != 9:
            return pos
        pos += 1
    return pos


def scan_string(buf, pos, end):
    """``buf[pos]`` is a quote: (code, content start, content end, has escapes); the string's end is content end
    plus one. Control characters and invalid UTF-8 are errors; escapes are checked by :func:`unescape`."""
    start = pos + 1
    p = start
    escapes = False
    while p < end:
        c = buf[p]
        if c == 34:  # "
            if not valid_utf8(buf, start, p - start):
                return E_BAD_UTF8, start, p, escapes
            return E_OK, start, p, escapes
        if c == 92:  # backslash
            escapes = True
            p += 2
            continue
        if c < 32:
            return E_JSON_SYNTAX, start, p, escapes
        p += 1
    return E_JSON_SYNTAX, start, p, escapes


def hex4(buf, p):
    v = np.int64(0)
    for i in range(4):
        c = np.int64(buf[p + i])
        if 48 <= c <= 57:
            d = c - 48
        elif 97 <= c <= 102:
            d = c - 87
        elif 65 <= c <= 70:
            d = c - 55
        else:
            return np.int64(-1)
        v = v * 16 + d
    return v


ESC_SINGLE_QUOTE = 4  # decode_escapes flags (plain JSON's options share their bits): \\' is an escape
ESC_ANY = 32  # a backslash escapes any character


def unescape(buf, s, e, out):
    """Decodes the string content ``buf[s:e]`` into ``out``; (code, length). Lone surrogates are errors."""
    code, n = decode_escapes(buf, s, e, out, 0, np.int64(-1))
    if code == E_OK and not valid_utf8(out, 0, n):
        return E_BAD_UTF8, n
    return code, n


def decode_escapes(buf, s, e, out, flags, lone):
    """Decodes the string content ``buf[s:e]`` into ``out``; (code, length): E_JSON_SYNTAX for an escape JSON (or
    ``flags``) does not allow. A lone surrogate is E_BAD_UTF8 (``lone`` -1), or becomes the code point ``lone`` (Spark
    keeps ``?``), or with ``lone`` 0 its own three bytes (as Java holds it)."""
    n = np.int64(0)
    p = s
    while p < e:
        c = buf[p]
        if c != 92:
            out[n] = c
            n += 1
            p += 1
            continue
        if p + 1 >= e:
            return E_JSON_SYNTAX, n
        c = buf[p + 1]
        p += 2
        if c == 110:
            out[n] = 10
        elif c == 116:
            out[n] = 9
        elif c == 114:
            out[n] = 13
        elif c == 98:
            out[n] = 8
        elif c == 102:
            out[n] = 12
        elif c == 34 or c == 92 or c == 47 or (c == 39 and (flags & ESC_SINGLE_QUOTE) != 0):
            out[n] = c
        elif c == 117:
            if p + 4 > e:
                return E_JSON_SYNTAX, n
            cp = hex4(buf, p)
            if cp < 0:
                return E_JSON_SYNTAX, n
            p += 4
            if 0xD800 <= cp <= 0xDFFF:
                lo = hex4(buf, p + 2) if (cp <= 0xDBFF and p + 6 <= e and buf[p] == 92 and buf[p + 1] == 117) \
                    else np.int64(-1)
                if 0xDC00 <= lo <= 0xDFFF:
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00)
                    p += 6
                elif lone < 0:
                    return E_BAD_UTF8, n
                elif lone > 0:
                    cp = lone
            n = put_code_point(out, n, cp)
            continue
        elif (flags & ESC_ANY) != 0:
            out[n] = c
        else:
            return E_JSON_SYNTAX, n
        n += 1
    return E_OK, n


def put_code_point(out, n, cp):
    """Writes code point ``cp`` as UTF-8 at ``out[n]``; the new length."""
    if cp < 0x80:
        out[n] = cp
        return n + 1
    if cp < 0x800:
        out[n] = 0xC0 | (cp >> 6)
        out[n + 1] = 0x80 | (cp & 0x3F)
        return n + 2
    if cp < 0x10000:
        out[n] = 0xE0 | (cp >> 12)
        out[n + 1] = 0x80 | ((cp >> 6) & 0x3F)
        out[n + 2] = 0x80 | (cp & 0x3F)
        return n + 3
    out[n] = 0xF0 | (cp >> 18)
    out[n + 1] = 0x80 | ((cp >> 12) & 0x3F)
    out[n + 2] = 0x80 | ((cp >> 6) & 0x3F)
    out[n + 3] = 0x80 | (cp & 0x3F)
    return n + 4


def add_digit(mant, d):
    """``mant * 10 - d`` (mantissas are kept negative, so -2^63 fits), or 1 when that leaves 64 bits."""
    if mant < LIMIT or (mant == LIMIT and d > 8):
        return np.int64(1)
    return mant * 10 - d


def scan_number(buf, pos, end):
    """A JSON number at ``pos``: (code, end, negative, -mantissa (the digits, negated), digit count (-1 when they
    do not fit 64 bits), digits after the point, exponent, is a plain integer token)."""
    p = pos
    neg = False
    if p < end and buf[p] == 45:
        neg = True
        p += 1
    if p >= end or buf[p] < 48 or buf[p] > 57:
        return E_JSON_SYNTAX, p, neg, np.int64(0), np.int64(0), np.int64(0), np.int64(0), False
    mant = np.int64(0)
    digits = np.int64(0)
    frac = np.int64(0)
    if buf[p] == 48:
        p += 1
    else:
        while p < end and 48 <= buf[p] <= 57:
            if digits >= 0:
                mant = add_digit(mant, np.int64(buf[p]) - 48)
                digits = digits + 1 if mant <= 0 else np.int64(-1)
            p += 1
    plain = True
    if p < end and buf[p] == 46:
        plain = False
        p += 1
        if p >= end or buf[p] < 48 or buf[p] > 57:
            return E_JSON_SYNTAX, p, neg, mant, digits, frac, np.int64(0), False
        while p < end and 48 <= buf[p] <= 57:
            d = np.int64(buf[p]) - 48
            if digits >= 0:
                m2 = add_digit(mant, d)
                if m2 <= 0:
                    mant = m2
                    frac += 1
                    if mant != 0:
                        digits += 1
                elif d != 0:
                    digits = np.int64(-1)
            p += 1
    exp = np.int64(0)
    if p < end and (buf[p] == 101 or buf[p] == 69):
        plain = False
        p += 1
        eneg = False
        if p < end and (buf[p] == 43 or buf[p] == 45):
            eneg = buf[p] == 45
            p += 1
        if p >= end or buf[p] < 48 or buf[p] > 57:
            return E_JSON_SYNTAX, p, neg, mant, digits, frac, exp, False
        while p < end and 48 <= buf[p] <= 57:
            if exp < 100000:
                exp = exp * 10 + (np.int64(buf[p]) - 48)
            p += 1
        if eneg:
            exp = -exp
    return E_OK, p, neg, mant, digits, frac, exp, plain


def number_as_long(neg, mant, digits, frac, exp):
    """(code, value) of a scanned number read as a 64-bit integer: fractions and exponents are fine when the
    value is whole (1.0, 1e3); beyond 64 bits: E_JSON_NUMBER."""
    if digits < 0:
        return E_JSON_NUMBER, np.int64(0)
    shift = exp - frac
    v = mant
    if shift > 0:
        for _ in range(shift):
            if v == 0:
                break
            v = add_digit(v, np.int64(0))
            if v > 0:
                return E_JSON_NUMBER, np.int64(0)
    elif shift < 0:
        for _ in range(-shift):
            if v == 0:
                break
            if v % 10 != 0:
                return E_NOT_AN_INTEGER, np.int64(0)
            v = -((-v) // 10) if v != I64_MIN else v // 10
    if neg:
        return E_OK, v
    if v == I64_MIN:
        return E_JSON_NUMBER, np.int64(0)
    return E_OK, -v


def number_as_double(neg, mant, digits, frac, exp):
    """(exact, value): the double nearest to a scanned number: Clinger's fast path (a short mantissa, a small power
    of ten: one exact operation), else Eisel-Lemire; exact is False only when the mantissa has more than 19
    digits or Eisel-Lemire cannot decide, and then Python's float() reads the text."""
    if digits < 0:
        return False, 0.0
    if mant == 0:
        return True, -0.0 if neg else 0.0
    e = exp - frac
    if mant > -MAX_SAFE and -22 <= e <= 22:
        v = np.float64(-mant)
        v = v * _POW10_DOUBLE[e] if e >= 0 else v / _POW10_DOUBLE[-e]
        return True, -v if neg else v
    ok, bits = eisel_lemire(np.uint64(-(mant + 1)) + np.uint64(1), e)
    if not ok:
        return False, 0.0
    v = bits_to_double(bits)
    return True, -v if neg else v


def two_digits(buf, p):
    a = np.int64(buf[p]) - 48
    b = np.int64(buf[p + 1]) - 48
    if a < 0 or a > 9 or b < 0 or b > 9:
        return np.int64(-1)
    return a * 10 + b


def days_from_civil(y, m, d):
    """Days since 1970-01-01 of a proleptic Gregorian date."""
    if m <= 2:
        y -= 1
    era = y // 400  # floor division, negative years included
    yoe = y - era * 400
    mp = m + 9 if m <= 2 else m - 3
    doy = (153 * mp + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def parse_date(buf, s, n):
    """(code, days since 1970) of ``YYYY-MM-DD``."""
    if n != 10 or buf[s + 4] != 45 or buf[s + 7] != 45:
        return E_JSON_DATE, np.int64(0)
    hi = two_digits(buf, s)
    lo = two_digits(buf, s + 2)
    m = two_digits(buf, s + 5)
    d = two_digits(buf, s + 8)
    if hi < 0 or lo < 0 or m < 1 or m > 12 or d < 1:
        return E_JSON_DATE, np.int64(0)
    y = hi * 100 + lo
    leap = (y % 4 == 0 and y % 100 != 0) or y % 400 == 0
    month_days = np.int64(31)
    if m == 2:
        month_days = np.int64(29) if leap else np.int64(28)
    elif m == 4 or m == 6 or m == 9 or m == 11:
        month_days = np.int64(30)
    if d > month_days:
        return E_JSON_DATE, np.int64(0)
    return E_OK, days_from_civil(y, m, d)


def parse_date_time(buf, s, n):
    """(code, microseconds since 1970 UTC) of an RFC 3339 date-time: ``YYYY-MM-DD`` ``T`` (or ``t``, or a space)
    ``HH:MM:SS``, an optional fraction (digits past microseconds dropped), then ``Z`` or ``+HH:MM``/``-HH:MM``."""
    if n < 20:
        return E_JSON_DATE, np.int64(0)
    code, days = parse_date(buf, s, 10)
    sep = buf[s + 10]
    if code != E_OK or (sep != 84 and sep != 116 and sep != 32) or buf[s + 13] != 58 or buf[s + 16] != 58:
        return E_JSON_DATE, np.int64(0)
    h = two_digits(buf, s + 11)
    mi = two_digits(buf, s + 14)
    sec = two_digits(buf, s + 17)
    if h < 0 or h > 23 or mi < 0 or mi > 59 or sec < 0 or sec > 59:
        return E_JSON_DATE, np.int64(0)
    p = s + 19
    e = s + n
    micros = np.int64(0)
    if p < e and buf[p] == 46:
        p += 1
        count = 0
        while p < e and 48 <= buf[p] <= 57:
            if count < 6:
                micros = micros * 10 + (np.int64(buf[p]) - 48)
            count += 1
            p += 1
        if count == 0:
            return E_JSON_DATE, np.int64(0)
        for _ in range(count, 6):
            micros *= 10
    offset = np.int64(0)
    if p < e and (buf[p] == 90 or buf[p] == 122):
        p += 1
    elif p + 6 == e and (buf[p] == 43 or buf[p] == 45) and buf[p + 3] == 58:
        oh = two_digits(buf, p + 1)
        om = two_digits(buf, p + 4)
        if oh < 0 or oh > 23 or om < 0 or om > 59:
            return E_JSON_DATE, np.int64(0)
        offset = (oh * 60 + om) * 60
        if buf[p] == 45:
            offset = -offset
        p += 6
    else:
        return E_JSON_DATE, np.int64(0)
    if p != e:
        return E_JSON_DATE, np.int64(0)
    seconds = days * 86400 + h * 3600 + mi * 60 + sec - offset
    return E_OK, seconds * 1000000 + micros


def skip_value(buf, pos, end, bstack):
    """The end of the JSON value at ``pos`` (whitespace before it skipped), its structure checked; (code, end)."""
    depth = 0
    while True:
        pos = skip_ws(buf, pos, end)
        if pos >= end:
            return E_JSON_SYNTAX, pos
        c = buf[pos]
        if c == 123 or c == 91:  # { [
            if depth >= bstack.shape[0]:
                return E_JSON_DEPTH, pos
            bstack[depth] = c
            depth += 1
            pos = skip_ws(buf, pos + 1, end)
            if pos < end and buf[pos] == c + 2:  # } or ]
                pos += 1
                depth -= 1
            elif c == 123:
                code, pos = skip_key(buf, pos, end)
                if code != E_OK:
                    return code, pos
                continue
            else:
                continue
        elif c == 34:
            code, s, e, esc = scan_string(buf, pos, end)
            if code != E_OK:
                return code, e
            if esc:
                code, pos = check_escapes(buf, s, e)
                if code != E_OK:
                    return code, pos
            pos = e + 1
        elif c == 116 or c == 102 or c == 110:
            code, pos = skip_literal(buf, pos, end)
            if code != E_OK:
                return code, pos
        else:
            code, pos, neg, mant, digits, frac, exp, plain = scan_number(buf, pos, end)
            if code != E_OK:
                return code, pos
        while True:  # after a value: close containers, or go on after a comma
            if depth == 0:
                return E_OK, pos
            pos = skip_ws(buf, pos, end)
            if pos >= end:
                return E_JSON_SYNTAX, pos
            c = buf[pos]
            top = bstack[depth - 1]
            if c == 44:  # ,
                pos += 1
                if top == 123:
                    code, pos = skip_key(buf, skip_ws(buf, pos, end), end)
                    if code != E_OK:
                        return code, pos
                break
            if c == top + 2:
                pos += 1
                depth -= 1
                continue
            return E_JSON_SYNTAX, pos


def skip_key(buf, pos, end):
    """An object key and its colon at ``pos``; (code, position after the colon)."""
    if pos >= end or buf[pos] != 34:
        return E_JSON_SYNTAX, pos
    code, s, e, esc = scan_string(buf, pos, end)
    if code != E_OK:
        return code, e
    if esc:
        code, p = check_escapes(buf, s, e)
        if code != E_OK:
            return code, p
    pos = skip_ws(buf, e + 1, end)
    if pos >= end or buf[pos] != 58:
        return E_JSON_SYNTAX, pos
    return E_OK, pos + 1


def check_escapes(buf, s, e):
    """Checks a string's escapes without decoding it; (code, position)."""
    p = s
    while p < e:
        if buf[p] == 92:
            c = buf[p + 1] if p + 1 < e else 0
            if c == 117:
                if p + 6 > e or hex4(buf, p + 2) < 0:
                    return E_JSON_SYNTAX, p
                p += 6
                continue
            if c != 110 and c != 116 and c != 114 and c != 98 and c != 102 and c != 34 and c != 92 and c != 47:
                return E_JSON_SYNTAX, p
            p += 2
            continue
        p += 1
    return E_OK, p


def skip_literal(buf, pos, end):
    """``true``, ``false`` or ``null`` at ``pos``; (code, end)."""
    c = buf[pos]
    if c == 116:
        n = 4
        word = 0x65757274  # "true" little-endian
    elif c == 102:
        n = 5
        word = 0  # checked below
    else:
        n = 4
        word = 0x6C6C756E  # "null"
    if pos + n > end:
        return E_JSON_SYNTAX, pos
    if n == 5:
        if buf[pos + 1] != 97 or buf[pos + 2] != 108 or buf[pos + 3] != 115 or buf[pos + 4] != 101:
            return E_JSON_SYNTAX, pos
    else:
        got = (np.int64(buf[pos]) | (np.int64(buf[pos + 1]) << 8) | (np.int64(buf[pos + 2]) << 16)
               | (np.int64(buf[pos + 3]) << 24))
        if got != word:
            return E_JSON_SYNTAX, pos
    return E_OK, pos + n


KERNELS = ("skip_ws", "scan_string", "hex4", "unescape", "decode_escapes", "put_code_point", "add_digit", "scan_number", "number_as_long",
           "number_as_double", "two_digits", "days_from_civil", "parse_date", "parse_date_time", "skip_value", "skip_key", "check_escapes",
           "skip_literal")
