"""JSON text as Spark's ``from_json`` reads it (Jackson with the features Spark's options turn on), inside the
kernels: whitespace and comments, strings in double (or single) quotes, object keys (quoted, or bare names),
number tokens (integers apart from the rest, leading zeros when allowed), the non-numeric tokens ``NaN`` and
``Infinity``, and values skipped with their structure checked.

``flags`` carries the options (``LX_*``); a position -1 or an error code says the text is malformed.
"""

from __future__ import annotations

import numpy as np

from ...json_text.kernels.text import ESC_ANY, ESC_SINGLE_QUOTE, scan_number
from ...vm.codes import E_JSON_DEPTH, E_JSON_SYNTAX, E_OK

LX_COMMENTS = 1  # allowComments: /* */ and // comments are whitespace
LX_BARE_NAMES = 2  # allowUnquotedFieldNames
LX_SINGLE_QUOTES = ESC_SINGLE_QUOTE  # allowSingleQuotes (Spark's default: on); also makes \\' an escape
LX_LEADING_ZEROS = 8  # allowNumericLeadingZeros
LX_NON_NUMERIC = 16  # allowNonNumericNumbers (Spark's default: on): NaN, Infinity, -Infinity, +Infinity...
LX_ANY_ESCAPE = ESC_ANY  # allowBackslashEscapingAnyCharacter
LX_CONTROL_CHARS = 64  # allowUnquotedControlChars

T_INT = 1  # token kinds of scan_token
T_FLOAT = 2
T_NAN = 3
T_POS_INF = 4
T_NEG_INF = 5


def skip_blank(buf, pos, end, flags):
    """The position of the next token (whitespace and, when allowed, comments passed over); -1 inside an unclosed
    comment or at a ``/`` that starts none."""
    while pos < end:
        c = buf[pos]
        if c == 32 or c == 10 or c == 13 or c == 9:
            pos += 1
            continue
        if c != 47 or (flags & LX_COMMENTS) == 0:
            return pos
        if pos + 1 >= end:
            return np.int64(-1)
        if buf[pos + 1] == 47:  # // to the end of the line
            pos += 2
            while pos < end and buf[pos] != 10 and buf[pos] != 13:
                pos += 1
        elif buf[pos + 1] == 42:  # /* ... */
            pos += 2
            while True:
                if pos + 1 >= end:
                    return np.int64(-1)
                if buf[pos] == 42 and buf[pos + 1] == 47:
                    pos += 2
                    break
                pos += 1
        else:
            return np.int64(-1)
    return pos


def is_quote(c, flags):
    return c == 34 or (c == 39 and (flags & LX_SINGLE_QUOTES) != 0)


def scan_quoted(buf, pos, end, flags):
    """``buf[pos]`` opens a string: (ok, content start, content end, has escapes); the closing quote is at content
    end. Raw control characters are malformed unless allowed; escapes are checked when decoded."""
    quote = buf[pos]
    p = pos + 1
    escapes = False
    while p < end:
        c = buf[p]
        if c == quote:
            return True, pos + 1, p, escapes
        if c == 92:
            escapes = True
            p += 2
            continue
        if c < 32 and (flags & LX_CONTROL_CHARS) == 0:
            return False, pos + 1, p, escapes
        p += 1
    return False, pos + 1, p, escapes


def is_name_byte(c):
    return (97 <= c <= 122) or (65 <= c <= 90) or (48 <= c <= 57) or c == 95 or c == 36 or c >= 128


def scan_bare_name(buf, pos, end):
    """The end of an unquoted field name at ``pos`` (letters, digits, ``_``, ``$``, non-ASCII), or -1."""
    p = pos
    while p < end and is_name_byte(buf[p]):
        p += 1
    return p if p > pos else np.int64(-1)


def word_at(buf, pos, end, word, n):
    """Whether the ASCII ``word`` (an int, little-endian, n <= 8 bytes) is at ``pos``, case-sensitively."""
    if pos + n > end:
        return False
    for i in range(n):
        if np.int64(buf[pos + i]) != (word >> (8 * i)) & 0xFF:
            return False
    return True


NAN_WORD = 0x4E614E  # NaN
INFINITY_WORD = 0x7974696E69666E49  # Infinity
INF_WORD = 0x464E49  # INF


def scan_token(buf, pos, end, flags):
    """A number (or non-numeric) token at ``pos``: (kind, end, negative, -mantissa, digits, fraction digits,
    exponent); kind 0 when malformed. The number's digits are read by ``scan_number`` (leading zeros skipped
    first when allowed)."""
    c = buf[pos]
    p = pos
    neg = c == 45
    q = p + 1 if (c == 45 or c == 43) else p
    if (flags & LX_NON_NUMERIC) != 0 and q < end and (buf[q] == 73 or buf[q] == 78):  # Infinity, INF, NaN
        if word_at(buf, q, end, INFINITY_WORD, 8) or word_at(buf, q, end, INF_WORD, 3):
            n = 8 if buf[q + 2] == 102 else 3
            if q == p and n == 3:
                return 0, pos, neg, np.int64(0), np.int64(0), np.int64(0), np.int64(0)
            return (T_NEG_INF if neg else T_POS_INF), q + n, neg, np.int64(0), np.int64(0), np.int64(0), np.int64(0)
        if q == p and word_at(buf, p, end, NAN_WORD, 3):
            return T_NAN, p + 3, False, np.int64(0), np.int64(0), np.int64(0), np.int64(0)
    if neg:
        p += 1
    if (flags & LX_LEADING_ZEROS) != 0:
        while p + 1 < end and buf[p] == 48 and 48 <= buf[p + 1] <= 57:
            p += 1
    if p >= end or buf[p] < 48 or buf[p] > 57:
        return 0, pos, neg, np.int64(0), np.int64(0), np.int64(0), np.int64(0)
    code, q, _neg, mant, digits, frac, exp, plain = scan_number(buf, p, end)
    if code != E_OK:
        return 0, pos, neg, np.int64(0), np.int64(0), np.int64(0), np.int64(0)
    return (T_INT if plain else T_FLOAT), q, neg, mant, digits, frac, exp


# exact doubles 10^0 .. 10^22, for the short decimals plain_number reads (Clinger's fast path)
EXACT_POWERS_OF_TEN = np.array([10.0 ** i for i in range(23)], dtype=np.float64)


def plain_number(buf, pos, end):
    """The common number token ``[-]digits[.digits]`` at ``pos`` (no exponent, no leading zero before a digit, not
    followed by a name byte): (end, negative, its digits as an integer, digit count, digits after the point, 0
    without one); end -1 for any other token, which ``scan_token`` reads. The integer is meaningless past 18
    digits: callers check the count (an integer token up to 18, a decimal up to 15, which one exact division
    reads as the nearest double)."""
    p = pos
    neg = buf[p] == 45
    if neg:
        p += 1
    if p >= end:
        return np.int64(-1), neg, np.int64(0), np.int64(0), np.int64(0)
    first = buf[p]
    if first < 48 or first > 57 or (first == 48 and p + 1 < end and 48 <= buf[p + 1] <= 57):
        return np.int64(-1), neg, np.int64(0), np.int64(0), np.int64(0)
    mant = np.int64(0)
    digits = np.int64(0)
    while p < end and 48 <= buf[p] <= 57:
        mant = mant * 10 + (np.int64(buf[p]) - 48)
        digits += 1
        p += 1
    frac = np.int64(0)
    if p < end and buf[p] == 46:
        p += 1
        if p >= end or buf[p] < 48 or buf[p] > 57:
            return np.int64(-1), neg, np.int64(0), np.int64(0), np.int64(0)
        while p < end and 48 <= buf[p] <= 57:
            mant = mant * 10 + (np.int64(buf[p]) - 48)
            digits += 1
            frac += 1
            p += 1
    if p < end and is_name_byte(buf[p]):
        return np.int64(-1), neg, np.int64(0), np.int64(0), np.int64(0)
    return p, neg, mant, digits, frac


def literal_end(buf, pos, end):
    """The end of ``true``, ``false`` or ``null`` at ``pos`` (not followed by a name character), or -1."""
    c = buf[pos]
    if c == 116 and word_at(buf, pos, end, 0x65757274, 4):
        p = pos + 4
    elif c == 110 and word_at(buf, pos, end, 0x6C6C756E, 4):
        p = pos + 4
    elif c == 102 and word_at(buf, pos, end, 0x65736C6166, 5):
        p = pos + 5
    else:
        return np.int64(-1)
    if p < end and is_name_byte(buf[p]):
        return np.int64(-1)
    return p


def scalar_end(buf, pos, end, flags):
    """The end of the scalar token at ``pos`` (string, number, literal), or -1 when malformed."""
    c = buf[pos]
    if is_quote(c, flags):
        ok, s, e, esc = scan_quoted(buf, pos, end, flags)
        if not ok or (esc and not escapes_ok(buf, s, e, flags)):
            return np.int64(-1)
        return e + 1
    if c == 116 or c == 102 or c == 110:
        return literal_end(buf, pos, end)
    kind, q, neg, mant, digits, frac, exp = scan_token(buf, pos, end, flags)
    if kind == 0 or (q < end and is_name_byte(buf[q])):
        return np.int64(-1)
    return q


def escapes_ok(buf, s, e, flags):
    """Whether every escape of the string content ``buf[s:e]`` is one Jackson accepts under ``flags``."""
    p = s
    while p < e:
        if buf[p] == 92:
            c = buf[p + 1] if p + 1 < e else 0
            if c == 117:
                for i in range(2, 6):
                    h = buf[p + i] if p + i < e else 0
                    if not ((48 <= h <= 57) or (97 <= h <= 102) or (65 <= h <= 70)):
                        return False
                p += 6
                continue
            if not (c == 110 or c == 116 or c == 114 or c == 98 or c == 102 or c == 34 or c == 92 or c == 47
                    or (c == 39 and (flags & LX_SINGLE_QUOTES) != 0) or (c != 0 and (flags & LX_ANY_ESCAPE) != 0)):
                return False
            p += 2
            continue
        p += 1
    return True


def key_end(buf, pos, end, flags):
    """An object key and its colon at ``pos``: (ok, key start, key end, has escapes, position after the colon).
    The key's text is ``buf[start:end]`` (inside the quotes for a quoted one)."""
    if pos >= end:
        return False, pos, pos, False, pos
    c = buf[pos]
    if is_quote(c, flags):
        ok, s, e, esc = scan_quoted(buf, pos, end, flags)
        if not ok:
            return False, s, e, esc, pos
        after = e + 1
    elif (flags & LX_BARE_NAMES) != 0:
        s = pos
        e = scan_bare_name(buf, pos, end)
        esc = False
        if e < 0:
            return False, pos, pos, False, pos
        after = e
    else:
        return False, pos, pos, False, pos
    after = skip_blank(buf, after, end, flags)
    if after < 0 or after >= end or buf[after] != 58:
        return False, s, e, esc, pos
    return True, s, e, esc, after + 1


def skip_json(buf, pos, end, flags, bstack, depth):
    """Skips what is left of a value: from ``pos`` where a value starts (``depth`` 0), or inside ``depth``
    containers already open (their brackets in ``bstack``, ``pos`` after a member); (code, end), the structure
    and every token checked."""
    expect_value = depth == 0
    while True:
        if expect_value:
            pos = skip_blank(buf, pos, end, flags)
            if pos < 0 or pos >= end:
                return E_JSON_SYNTAX, pos
            c = buf[pos]
            if c == 123 or c == 91:
                if depth >= bstack.shape[0]:
                    return E_JSON_DEPTH, pos
                bstack[depth] = c
                depth += 1
                pos = skip_blank(buf, pos + 1, end, flags)
                if pos < 0 or pos >= end:
                    return E_JSON_SYNTAX, pos
                if buf[pos] == c + 2:
                    pos += 1
                    depth -= 1
                elif c == 123:
                    ok, s, e, esc, pos = key_end(buf, pos, end, flags)
                    if not ok or (esc and not escapes_ok(buf, s, e, flags)):
                        return E_JSON_SYNTAX, pos
                    continue
                else:
                    continue
            else:
                pos = scalar_end(buf, pos, end, flags)
                if pos < 0:
                    return E_JSON_SYNTAX, pos
        expect_value = True
        while True:  # after a value: close containers, or a comma and the next member
            if depth == 0:
                return E_OK, pos
            pos = skip_blank(buf, pos, end, flags)
            if pos < 0 or pos >= end:
                return E_JSON_SYNTAX, pos
            c = buf[pos]
            top = bstack[depth - 1]
            if c == 44:
                pos += 1
                if top == 123:
                    pos = skip_blank(buf, pos, end, flags)
                    if pos < 0:
                        return E_JSON_SYNTAX, pos
                    ok, s, e, esc, pos = key_end(buf, pos, end, flags)
                    if not ok or (esc and not escapes_ok(buf, s, e, flags)):
                        return E_JSON_SYNTAX, pos
                break
            if c == top + 2:
                pos += 1
                depth -= 1
                continue
            return E_JSON_SYNTAX, pos


KERNELS = ("skip_blank", "is_quote", "scan_quoted", "is_name_byte", "scan_bare_name", "word_at", "plain_number",
           "scan_token", "literal_end", "scalar_end", "escapes_ok", "key_end", "skip_json")
# the small helpers called per token, put into their callers (LLVM left them as calls): the benchmark's 300-byte
# order decodes ~15 % faster (1,440 -> 1,230 ns, one process) for ~5 s more CPU compiling the plain JSON kernels once
# (29 -> 34 s, cached after); the bigger helpers (key_end, scan_quoted) inlined too gained no more and cost more
# plain_number, shared by integer and double tokens, is inlined too: as a call it cost ~3 ns a number
INLINE = ("skip_blank", "is_quote", "is_name_byte", "word_at", "plain_number")
