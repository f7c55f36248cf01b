"""One JSON scalar into a column of its Spark type, as ``from_json``'s converters take it (JacksonParser): numbers
by token (an integer type takes only integer tokens, in range; DOUBLE and FLOAT any number, and ``NaN``/
``Infinity`` also as strings; DECIMAL numbers and numeric strings, rounded half up to the scale), strings
(escapes decoded), base64 for BINARY, dates and timestamps (``vm_time.py``, or a pattern, ``vm_pattern.py``),
BOOLEAN only ``true``/``false``; a STRING column takes any other token as its JSON text.

A value that does not fit is a mismatch (its code, the row goes on: ``from_json``'s partial results); a
malformed token is E_JSON_SYNTAX (the record fails whole).
"""

from __future__ import annotations

import math

import numpy as np

from ...json_text.kernels.floats import mul_64
from ...json_text.kernels.text import decode_escapes, number_as_double, number_as_long
from ...vm.codes import (
    E_DECIMAL_RANGE, E_JSON_BASE64, E_JSON_EMPTY, E_JSON_NUMBER, E_JSON_SYNTAX, E_JSON_TIMESTAMP, E_JSON_TYPE, E_OK,
    E_OVERFLOW
)
from ...vm.column_writes import append_value, full, put_bytes, put_dec
from ...vm.slots import ROOM_SCRATCH, S_LEN
from ..program import (
    PK_BINARY, PK_BOOLEAN, PK_DATE, PK_DECIMAL, PK_DOUBLE, PK_FLOAT, PK_INT, PK_STRING, PK_TIMESTAMP, PK_TIMESTAMP_NTZ,
    V_AUX, V_AUX2, V_KIND, V_NODE
)
from .lexer import (
    EXACT_POWERS_OF_TEN, T_FLOAT, T_INT, T_NAN, T_NEG_INF, T_POS_INF, is_name_byte, is_quote, literal_end,
    plain_number, scan_quoted, scan_token
)
from .pattern import parse_with_pattern
from .regenerate import regenerate
from .times import LATER, text_to_date, text_to_day_number, text_to_local_timestamp, text_to_timestamp, without_gmt

# deferred values, finished in Python: columns of ``deferred``
D_NODE = 0
D_INDEX = 1
D_START = 2
D_END = 3
D_KIND = 4
D_ESCAPED = 5
DEFERRED_WORDS = 6
DF_DOUBLE = 1
DF_FLOAT = 2
DF_TIMESTAMP = 3
# options of a read: the int64 array ``opts``
O_TS_PATTERN = 0  # start of the timestampFormat program in ``patterns``, -1: Spark's default parsing
O_DATE_PATTERN = 1  # dateFormat, likewise
O_RESCUE = 2  # 1: mismatches and unknown fields go to the rescued-data column instead of failing the row
OPT_WORDS = 3

U0 = np.uint64(0)
U10 = np.uint64(10)
_B64 = np.full(256, -1, dtype=np.int64)
for _i, _c in enumerate(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"):
    _B64[_c] = _i
B64_VALUES = _B64
POW10_U_HI = np.array([(10**p) >> 64 for p in range(39)], dtype=np.uint64)
POW10_U_LO = np.array([(10**p) & (2**64 - 1) for p in range(39)], dtype=np.uint64)


def base64_bytes(buf, s, e, out):
    """(ok, length) of Jackson's base64 (MIME without line feeds): whitespace allowed between quads, padding
    required; decoded into ``out`` (which may be ``buf``: bytes land behind the text read)."""
    w = np.int64(0)
    p = s
    while True:
        while p < e and buf[p] <= 32:
            p += 1
        if p >= e:
            return True, w
        if e - p < 4:
            return False, w
        a = B64_VALUES[buf[p]]
        b = B64_VALUES[buf[p + 1]]
        if a < 0 or b < 0:
            return False, w
        out[w] = ((a << 2) | (b >> 4)) & 0xFF
        w += 1
        if buf[p + 2] == 61:
            if buf[p + 3] != 61:
                return False, w
        else:
            c = B64_VALUES[buf[p + 2]]
            if c < 0:
                return False, w
            out[w] = (((b & 15) << 4) | (c >> 2)) & 0xFF
            w += 1
            if buf[p + 3] != 61:
                d = B64_VALUES[buf[p + 3]]
                if d < 0:
                    return False, w
                out[w] = (((c & 3) << 6) | d) & 0xFF
                w += 1
        p += 4


def text_to_decimal(buf, s, e, precision, scale):
    """(ok, low, high) of Java's ``new BigDecimal(text)`` set to ``scale`` rounding half up, if it fits ``precision``
    digits."""
    p = s
    neg = False
    if p < e and (buf[p] == 45 or buf[p] == 43):
        neg = buf[p] == 45
        p += 1
    digits_start = p
    int_digits = np.int64(0)
    total = np.int64(0)
    point = False
    while p < e:
        c = buf[p]
        if 48 <= c <= 57:
            total += 1
            if not point:
                int_digits += 1
        elif c == 46 and not point:
            point = True
        else:
            break
        p += 1
    digits_end = p
    if total == 0:
        return False, np.int64(0), np.int64(0)
    exp = np.int64(0)
    if p < e and (buf[p] == 101 or buf[p] == 69):
        p += 1
        eneg = False
        if p < e and (buf[p] == 43 or buf[p] == 45):
            eneg = buf[p] == 45
            p += 1
        if p >= e:
            return False, np.int64(0), np.int64(0)
        while p < e and 48 <= buf[p] <= 57:
            if exp < 100000000:
                exp = exp * 10 + (np.int64(buf[p]) - 48)
            p += 1
        if eneg:
            exp = -exp
    if p != e:
        return False, np.int64(0), np.int64(0)
    keep = int_digits + exp + scale  # digits of the text that make the unscaled value
    hi = U0
    lo = U0
    seen = np.int64(0)
    significant = np.int64(0)
    round_up = False
    for q in range(digits_start, digits_end):
        c = np.int64(buf[q])
        if c < 48 or c > 57:
            continue
        d = c - 48
        if seen < keep:
            if significant > 0 or d != 0:
                significant += 1
                if significant > 38:
                    return False, np.int64(0), np.int64(0)
                ph, pl = mul_64(lo, U10)
                nl = pl + np.uint64(d)
                carry = np.uint64(1) if nl < pl else U0
                hi = hi * U10 + ph + carry
                lo = nl
        elif seen == keep:
            round_up = d >= 5
        seen += 1
    for _ in range(seen, keep):  # trailing zeros the scale asks for
        if significant > 0:
            significant += 1
            if significant > 38:
                return False, np.int64(0), np.int64(0)
            ph, pl = mul_64(lo, U10)
            hi = hi * U10 + ph
            lo = pl
    if round_up:
        lo += np.uint64(1)
        if lo == U0:
            hi += np.uint64(1)
    ph = POW10_U_HI[precision]
    pl = POW10_U_LO[precision]
    if hi > ph or (hi == ph and lo >= pl):
        return False, np.int64(0), np.int64(0)
    slo = np.int64(lo)
    shi = np.int64(hi)
    if neg:
        shi = ~shi + (np.int64(1) if slo == 0 else np.int64(0))
        slo = -slo
    return True, slo, shi


def defer(deferred, ctx, out, node, index, s, e, kind, escaped):
    d = ctx[0]
    if d >= deferred.shape[0]:
        full(out, np.int64(-1), ROOM_SCRATCH, 1)
        return False
    deferred[d, D_NODE] = node
    deferred[d, D_INDEX] = index
    deferred[d, D_START] = s
    deferred[d, D_END] = e
    deferred[d, D_KIND] = kind
    deferred[d, D_ESCAPED] = 1 if escaped else 0
    ctx[0] = d + 1
    return True


def special_double(buf, s, n):
    """The value of the strings ``from_json`` reads as non-numeric doubles (NaN, Infinity, +Infinity, +INF,
    -Infinity, -INF); 0 when ``buf[s:s+n]`` is none of them."""
    if n == 3 and buf[s] == 78 and buf[s + 1] == 97 and buf[s + 2] == 78:
        return np.float64(np.nan)
    sign = 1.0
    p = s
    if n > 0 and (buf[p] == 43 or buf[p] == 45):
        sign = -1.0 if buf[p] == 45 else 1.0
        p += 1
    rest = s + n - p
    if rest == 8 and buf[p] == 73 and buf[p + 1] == 110 and buf[p + 2] == 102 and buf[p + 3] == 105 \
            and buf[p + 4] == 110 and buf[p + 5] == 105 and buf[p + 6] == 116 and buf[p + 7] == 121:
        return sign * np.inf
    if rest == 3 and p > s and buf[p] == 73 and buf[p + 1] == 78 and buf[p + 2] == 70:
        return sign * np.inf
    return 0.0


def float_halfway(x):
    """Whether rounding the double ``x`` to float might differ from rounding its decimal text directly (``x`` a
    float halfway point, or float's subnormal range): Python then reads the text."""
    if abs(x) < 1.2e-38:
        return True
    if abs(x) == np.inf:  # beyond every double: float's infinity too
        return False
    m, _e = math.frexp(x)
    bits = np.int64(abs(m) * 9007199254740992.0)  # the 53-bit mantissa
    return (bits & np.int64(0x1FFFFFFF)) == np.int64(0x10000000)


def put_double(kind, node, v, state, f64, a32, f32, a8, out):
    if kind == PK_DOUBLE:
        ok = append_value(state, f64, a8, out, node, v)
    else:
        ok = append_value(state, f32, a8, out, node, np.float32(v))
    return E_OK if ok else E_OVERFLOW


def read_text_value(kind, vals, v, node, text, s, n, state, a64, f64, a32, f32, a8, abytes, out, scratch8, fields,
                   tscratch, zone_at, zone_offsets, opts, patterns, deferred, ctx, raw_s, raw_e, escaped):
    """A string's content ``text[s:s+n]`` into a column of ``kind``; the code."""
    if kind == PK_STRING:
        return E_OK if put_bytes(state, a32, a8, abytes, out, node, text, s, n) else E_OVERFLOW
    if kind == PK_BINARY:
        ok, w = base64_bytes(text, s, s + n, scratch8)
        if not ok:
            return E_JSON_BASE64
        return E_OK if put_bytes(state, a32, a8, abytes, out, node, scratch8, 0, w) else E_OVERFLOW
    if n == 0:
        return E_JSON_EMPTY
    if kind == PK_DOUBLE or kind == PK_FLOAT:
        x = special_double(text, s, n)
        if x == 0.0:
            return E_JSON_TYPE
        return put_double(kind, node, x, state, f64, a32, f32, a8, out)
    if kind == PK_DECIMAL:
        ok, lo, hi = text_to_decimal(text, s, s + n, vals[v, V_AUX], vals[v, V_AUX2])
        if not ok:
            return E_JSON_NUMBER
        return E_OK if put_dec(state, a64, a8, out, node, lo, hi) else E_OVERFLOW
    pattern = opts[O_DATE_PATTERN] if kind == PK_DATE else opts[O_TS_PATTERN]
    if pattern >= 0 and (kind == PK_DATE or kind == PK_TIMESTAMP):  # dateFormat, timestampFormat: no fallback
        if not parse_with_pattern(text, s, s + n, patterns, pattern, fields, zone_at, zone_offsets, kind == PK_DATE):
            return E_JSON_TIMESTAMP
        ok = append_value(state, a32, a8, out, node, fields[0]) if kind == PK_DATE else \
            append_value(state, a64, a8, out, node, fields[0])
        return E_OK if ok else E_OVERFLOW
    if kind == PK_DATE:
        got, days = text_to_date(text, s, s + n)
        if not got:
            got, days = text_to_day_number(text, s, s + n)
        if not got:
            return E_JSON_TIMESTAMP
        return E_OK if append_value(state, a32, a8, out, node, days) else E_OVERFLOW
    if kind == PK_TIMESTAMP_NTZ:
        got, micros = text_to_local_timestamp(text, s, s + n, fields)
        if not got:
            return E_JSON_TIMESTAMP
        return E_OK if append_value(state, a64, a8, out, node, micros) else E_OVERFLOW
    if kind == PK_TIMESTAMP:
        got, micros = text_to_timestamp(text, s, s + n, fields, tscratch, zone_at, zone_offsets)
        if got == 0:  # Spark's fallback: the text without its "GMT"s
            m = without_gmt(text, s, s + n, tscratch)
            if m < n:
                got, micros = text_to_timestamp(tscratch, 0, m, fields, tscratch[m:], zone_at, zone_offsets)
        if got == 0:
            return E_JSON_TIMESTAMP
        if got == LATER:
            if not defer(deferred, ctx, out, node, state[node, S_LEN], raw_s, raw_e, DF_TIMESTAMP, escaped):
                return E_OVERFLOW
            micros = np.int64(0)
        return E_OK if append_value(state, a64, a8, out, node, micros) else E_OVERFLOW
    if kind == PK_INT or kind == PK_BOOLEAN:
        return E_JSON_TYPE
    return E_OK if append_value(state, a8, a8, out, node, np.int64(0)) else E_OVERFLOW  # unreachable: VOID


def int_token(data, pos, end, flags, bits):
    """(code, value, end) of the integer token at ``pos`` for a column of ``bits`` (8, 16, 32, 64; 0: a timestamp's
    seconds, as micros): E_JSON_SYNTAX when malformed, E_JSON_TYPE when not an integer token, E_JSON_NUMBER when
    out of range. Jackson reads 128..255 as bytes too (wrapped); seconds times a million wrap as Spark's long
    multiplication does."""
    q, neg, mant, digits, frac = plain_number(data, pos, end)
    x = -mant if neg else mant
    if q < 0 or frac > 0 or digits > 18:
        tk, q, neg, mant, digits, frac, exp = scan_token(data, pos, end, flags)
        if tk == 0 or (q < end and is_name_byte(data[q])):
            return E_JSON_SYNTAX, np.int64(0), pos
        if tk != T_INT:
            return E_JSON_TYPE, np.int64(0), q
        code, x = number_as_long(neg, mant, digits, frac, exp)
        if code != E_OK:
            return E_JSON_NUMBER, np.int64(0), q
    if bits == 0:
        return E_OK, x * np.int64(1000000), q
    if bits < 64:
        limit = np.int64(1) << (bits - 1)
        if bits == 8 and limit <= x < 256:
            x -= 256
        if x < -limit or x >= limit:
            return E_JSON_NUMBER, np.int64(0), q
    return E_OK, x, q


def double_token(data, pos, end, flags, single):
    """(code, value, exact, end) of the number token at ``pos`` as a double (``single``: to become a float);
    ``exact`` False when Python must read the text (too many digits, or a float's halfway point)."""
    q, neg, mant, digits, frac = plain_number(data, pos, end)
    if q >= 0 and digits <= 15:
        x = np.float64(mant) / EXACT_POWERS_OF_TEN[frac]
        x = -x if neg else x
        exact = True
        if single and x != 0.0:
            exact = not float_halfway(x)
        return E_OK, x, exact, q
    tk, q, neg, mant, digits, frac, exp = scan_token(data, pos, end, flags)
    if tk == 0 or (q < end and is_name_byte(data[q])):
        return E_JSON_SYNTAX, 0.0, True, pos
    if tk == T_NAN:
        return E_OK, np.float64(np.nan), True, q
    if tk == T_POS_INF or tk == T_NEG_INF:
        return E_OK, (np.float64(-np.inf) if tk == T_NEG_INF else np.float64(np.inf)), True, q
    exact, x = number_as_double(neg, mant, digits, frac, exp)
    if single and exact and x != 0.0:
        exact = not float_halfway(x)
    return E_OK, x, exact, q


def read_number(kind, vals, v, node, data, pos, end, flags, state, a64, f64, a32, f32, a8, abytes, out, deferred, ctx):
    """A number token at ``pos`` into a column of ``kind``; (code, its end)."""
    if kind == PK_DOUBLE or kind == PK_FLOAT:
        code, x, exact, q = double_token(data, pos, end, flags, kind == PK_FLOAT)
        if code != E_OK:
            return code, q
        if not exact and not defer(deferred, ctx, out, node, state[node, S_LEN], pos, q,
                                   DF_DOUBLE if kind == PK_DOUBLE else DF_FLOAT, False):
            return E_OVERFLOW, pos
        return put_double(kind, node, x, state, f64, a32, f32, a8, out), q
    if kind == PK_DECIMAL:
        tk, q, neg, mant, digits, frac, exp = scan_token(data, pos, end, flags)
        if tk == 0 or (q < end and is_name_byte(data[q])):
            return E_JSON_SYNTAX, pos
        if tk != T_INT and tk != T_FLOAT:
            return E_JSON_TYPE, q  # NaN, Infinity: only the floating types take them
        ok, lo, hi = text_to_decimal(data, pos, q, vals[v, V_AUX], vals[v, V_AUX2])
        if not ok:
            return E_DECIMAL_RANGE, q
        return (E_OK if put_dec(state, a64, a8, out, node, lo, hi) else E_OVERFLOW), q
    if kind != PK_INT and kind != PK_TIMESTAMP:
        code, x, q = int_token(data, pos, end, flags, np.int64(64))  # only its syntax matters: no number fits
        return (code if code == E_JSON_SYNTAX else E_JSON_TYPE), q
    bits = vals[v, V_AUX] if kind == PK_INT else np.int64(0)
    code, x, q = int_token(data, pos, end, flags, bits)
    if code != E_OK:
        return code, q
    ok = append_value(state, a32, a8, out, node, x) if 0 < bits < 64 else append_value(state, a64, a8, out, node, x)
    return (E_OK if ok else E_OVERFLOW), q


def read_scalar(vals, v, data, pos, end, flags, state, a64, f64, a32, f32, a8, abytes, out, scratch8, fields, tscratch,
                zone_at, zone_offsets, opts, patterns, deferred, ctx, bstack):
    """The non-null scalar (or, for a STRING column, any value) at ``pos`` into value program ``v``'s column;
    (code, end of the value). A mismatch leaves the value unread (its end is ``pos``)."""
    kind = vals[v, V_KIND]
    node = vals[v, V_NODE]
    c = data[pos]
    if is_quote(c, flags):
        ok, s, e, esc = scan_quoted(data, pos, end, flags)
        if not ok:
            return E_JSON_SYNTAX, pos
        if esc:
            code, n = decode_escapes(data, s, e, scratch8, flags, np.int64(63))
            if code != E_OK:
                return E_JSON_SYNTAX, pos
            code = read_text_value(kind, vals, v, node, scratch8, np.int64(0), n, state, a64, f64, a32, f32, a8,
                                   abytes, out, scratch8[n:], fields, tscratch, zone_at, zone_offsets, opts, patterns,
                                   deferred, ctx, s, e, True)
        else:
            code = read_text_value(kind, vals, v, node, data, s, e - s, state, a64, f64, a32, f32, a8, abytes, out,
                                   scratch8, fields, tscratch, zone_at, zone_offsets, opts, patterns, deferred, ctx, s,
                                   e, False)
        return code, (e + 1 if code == E_OK or code == E_OVERFLOW else pos)
    if kind == PK_STRING:  # any other value: its JSON text, as Jackson's generator copies it
        code, q, n = regenerate(data, pos, end, flags, tscratch[32:], scratch8, bstack, tscratch[:32])
        if code != E_OK:
            return code, pos
        return (E_OK if put_bytes(state, a32, a8, abytes, out, node, tscratch, 32, n) else E_OVERFLOW), q
    if c == 116 or c == 102:
        q = literal_end(data, pos, end)
        if q < 0:
            return E_JSON_SYNTAX, pos
        if kind == PK_BOOLEAN:
            return (E_OK if append_value(state, a8, a8, out, node, np.int64(1) if c == 116 else np.int64(0))
                    else E_OVERFLOW), q
        return E_JSON_TYPE, pos
    if c == 123 or c == 91:
        return E_JSON_TYPE, pos
    code, q = read_number(kind, vals, v, node, data, pos, end, flags, state, a64, f64, a32, f32, a8, abytes, out,
                          deferred, ctx)
    return code, (q if code == E_OK or code == E_OVERFLOW or code == E_JSON_SYNTAX else pos)


KERNELS = ("int_token", "double_token", "base64_bytes", "text_to_decimal", "defer", "special_double",
           "float_halfway", "put_double",
           "read_text_value", "read_number", "read_scalar")
