"""Parsing a date or timestamp with a ``timestampFormat`` / ``dateFormat`` program (``json_text/patterns.py``)
inside the kernels, and resolving what it read as Spark does: a missing year is 1970, a missing month or day 1,
``h`` without ``a`` a morning hour, no offset in the text the reading zone."""

from __future__ import annotations

import numpy as np

from ...json_text.kernels.text import days_from_civil
from ...json_text.patterns import (
    F_DAY, F_HAS_OFFSET, F_HOUR, F_HOUR12, F_MICROS, F_MINUTE, F_MONTH, F_OFFSET, F_PM, F_SECOND, F_YEAR, F_YEAR2,
    FIELD_WORDS, MAX_OPTIONAL, MONTH_LENGTHS, MONTH_NAMES, P_AMPM, P_FRAC, P_LIT, P_MONTH_NAME, P_NUM, P_OFFSET,
    P_OPT_END, P_OPT_START
)
from .times import DAY_SECONDS, I64_MAX, MICROS, digits_at, local_to_utc, offset_at, valid_day


def lower(c):
    return c + 32 if 65 <= c <= 90 else c


def month_name(buf, p, e, full):
    """(month, end) of an English month name (``full`` or its first three letters) at ``p``; end -1 if none."""
    for m in range(12):
        n = MONTH_LENGTHS[m] if full else 3
        if p + n > e:
            continue
        same = True
        for i in range(n):
            if lower(np.int64(buf[p + i])) != MONTH_NAMES[m, i]:
                same = False
                break
        if same:
            return np.int64(m + 1), p + n
    return np.int64(0), np.int64(-1)


def run_pattern(buf, s, e, patterns, start, fields):
    """Parses ``buf[s:e]`` with the program at ``start`` into ``fields`` (F_* slots; per open optional section, a
    copy FIELD_WORDS further and its start position at the end); whether all of the text was read."""
    count = patterns[start]
    for k in range(FIELD_WORDS):
        fields[k] = -1
    fields[F_HAS_OFFSET] = 0
    p = s
    depth = 0
    saved = fields.shape[0] - MAX_OPTIONAL  # where the optional sections' start positions are kept
    i = np.int64(0)
    while i < count:
        w = start + 1 + 3 * i
        op = patterns[w]
        a = patterns[w + 1]
        b = patterns[w + 2]
        q = np.int64(-1)
        if op == P_OPT_START:
            if depth < MAX_OPTIONAL:
                fields[saved + depth] = p
                for k in range(FIELD_WORDS):
                    fields[(depth + 1) * FIELD_WORDS + k] = fields[k]
                depth += 1
            i += 1
            continue
        if op == P_OPT_END:
            depth -= 1
            i += 1
            continue
        if op == P_LIT:
            if p < e and lower(np.int64(buf[p])) == lower(a):
                q = p + 1
        elif op == P_NUM:
            v, q = digits_at(buf, p, e, b & 255, b >> 8)
            if q >= 0:
                fields[a] = v
        elif op == P_FRAC:
            v, q = digits_at(buf, p, e, 1, a)
            if q >= 0:
                for _ in range(q - p, 6):
                    v *= 10
                for _ in range(6, q - p):
                    v //= 10
                fields[F_MICROS] = v
        elif op == P_MONTH_NAME:
            v, q = month_name(buf, p, e, a == 1)
            if q >= 0:
                fields[F_MONTH] = v
        elif op == P_AMPM:
            if p + 2 <= e and lower(np.int64(buf[p + 1])) == 109:
                c = lower(np.int64(buf[p]))
                if c == 97 or c == 112:
                    fields[F_PM] = 1 if c == 112 else 0
                    q = p + 2
        elif op == P_OFFSET:
            v, q = offset_at(buf, p, e, a, b)
            if q >= 0:
                fields[F_OFFSET] = v
                fields[F_HAS_OFFSET] = 1
        if q >= 0:
            p = q
            i += 1
            continue
        if depth == 0:
            return False
        depth -= 1  # an optional section that does not match: as if it were not there
        p = fields[saved + depth]
        for k in range(FIELD_WORDS):
            fields[k] = fields[(depth + 1) * FIELD_WORDS + k]
        nesting = 0
        while True:  # past its P_OPT_END
            i += 1
            op = patterns[start + 1 + 3 * i]
            if op == P_OPT_START:
                nesting += 1
            elif op == P_OPT_END:
                if nesting == 0:
                    break
                nesting -= 1
        i += 1
    return p == e


def parse_with_pattern(buf, s, e, patterns, start, fields, zone_at, zone_offsets, date_only):
    """Whether ``buf[s:e]`` is a date (``date_only``: days since 1970 in ``fields[0]``) or a timestamp (micros
    since 1970 UTC in ``fields[0]``) of the pattern at ``start``."""
    if not run_pattern(buf, s, e, patterns, start, fields):
        return False
    y = fields[F_YEAR]
    if fields[F_YEAR2] >= 0:
        y = 2000 + fields[F_YEAR2]
    elif y < 0:
        y = np.int64(1970)
    mo = fields[F_MONTH] if fields[F_MONTH] >= 0 else np.int64(1)
    d = fields[F_DAY] if fields[F_DAY] >= 0 else np.int64(1)
    if not valid_day(y, mo, d):
        return False
    days = days_from_civil(y, mo, d)
    if date_only:
        fields[0] = days
        return True
    h = np.int64(0)
    if fields[F_HOUR] >= 0:
        h = fields[F_HOUR]
        if h > 23:
            return False
    elif fields[F_HOUR12] >= 0:
        if fields[F_HOUR12] < 1 or fields[F_HOUR12] > 12:
            return False
        h = fields[F_HOUR12] % 12 + (12 if fields[F_PM] == 1 else 0)
    mi = fields[F_MINUTE] if fields[F_MINUTE] >= 0 else np.int64(0)
    sec = fields[F_SECOND] if fields[F_SECOND] >= 0 else np.int64(0)
    if mi > 59 or sec > 59:
        return False
    local = days * DAY_SECONDS + h * 3600 + mi * 60 + sec
    utc = local - fields[F_OFFSET] if fields[F_HAS_OFFSET] == 1 else local_to_utc(local, zone_at, zone_offsets)
    limit = I64_MAX // MICROS - 1
    if utc > limit or utc < -limit:
        return False
    fields[0] = utc * MICROS + (fields[F_MICROS] if fields[F_MICROS] >= 0 else np.int64(0))
    return True


KERNELS = ("lower", "month_name", "run_pattern", "parse_with_pattern")
