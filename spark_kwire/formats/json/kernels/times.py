"""Dates and timestamps as ``from_json`` reads them by default, inside the kernels: Spark's lenient ISO forms
(``stringToTimestamp`` / ``stringToDate``: ``2024-05-01``, ``2024-5-1 7:05:09.5``, ``2024-05-01T07:05:09Z``,
``+01:00``, ``UTC+1``, a year alone...), local times placed in the reading time zone (a fixed offset, or a
region's offsets from ``zones.py``), and the days-since-1970 number Spark 1.5 wrote for dates.

A zone named by region inside the text (``... Europe/Paris``), or a time without a date (today's date in that
zone) cannot be finished here: :data:`LATER` leaves such a value to Python (``zones.py``), as the doubles too
long for the kernel are.
"""

from __future__ import annotations

import numpy as np

from ...json_text.kernels.text import days_from_civil
from ...json_text.patterns import OFF_COLON, OFF_MINUTES, OFF_MINUTES_OPT, OFF_SECONDS, OFF_SECONDS_OPT

LATER = 2  # outcome of the parsers beside True (1) / False (0): Python finishes the value
MICROS = np.int64(1000000)
DAY_SECONDS = np.int64(86400)
I64_MAX = np.int64(9223372036854775807)
_MONTH_DAYS = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], dtype=np.int64)


def blank_byte(c):
    """Whitespace or an ISO control character, as Spark trims them (``UTF8String.isWhitespaceOrISOControl``)."""
    return c <= 32 or c == 127


def trimmed(buf, s, e):
    while s < e and blank_byte(buf[s]):
        s += 1
    while e > s and blank_byte(buf[e - 1]):
        e -= 1
    return s, e


def valid_day(y, m, d):
    if m < 1 or m > 12 or d < 1:
        return False
    if m == 2:
        leap = (y % 4 == 0 and y % 100 != 0) or y % 400 == 0
        return d <= (29 if leap else 28)
    return d <= _MONTH_DAYS[m - 1]


def text_to_date(buf, s, e):
    """(ok, days) of ``stringToDate``: ``[+-]yyyy*[-[m]m[-[d]d[ |T]*]]`` (year of 4 to 7 digits), trimmed."""
    j, stop = trimmed(buf, s, e)
    if j == stop:
        return False, np.int64(0)
    sign = np.int64(1)
    if buf[j] == 45 or buf[j] == 43:
        sign = np.int64(-1) if buf[j] == 45 else np.int64(1)
        j += 1
    seg0 = np.int64(1)
    seg1 = np.int64(1)
    seg2 = np.int64(1)
    i = 0
    value = np.int64(0)
    digits = 0
    while j < stop and i < 3 and not (buf[j] == 32 or buf[j] == 84):
        b = np.int64(buf[j])
        if i < 2 and b == 45:
            if not date_digits_ok(i, digits):
                return False, np.int64(0)
            if i == 0:
                seg0 = value
            else:
                seg1 = value
            value = np.int64(0)
            digits = 0
            i += 1
        elif 48 <= b <= 57:
            value = value * 10 + (b - 48)
            digits += 1
        else:
            return False, np.int64(0)
        j += 1
    if not date_digits_ok(i, digits):
        return False, np.int64(0)
    if i < 2 and j < stop:
        return False, np.int64(0)
    if i == 0:
        seg0 = value
    elif i == 1:
        seg1 = value
    else:
        seg2 = value
    y = sign * seg0
    if not valid_day(y, seg1, seg2):
        return False, np.int64(0)
    return True, days_from_civil(y, seg1, seg2)


def date_digits_ok(segment, digits):
    return (segment == 0 and 4 <= digits <= 7) or (segment != 0 and 0 < digits <= 2)


def text_to_day_number(buf, s, e):
    """(ok, days) of Java's ``Integer.parseInt`` of the whole text (Spark 1.5 stored dates as day numbers);
    days before 1582-10-15 are read as Julian calendar dates, as Spark rebases them."""
    p = s
    neg = False
    if p < e and (buf[p] == 45 or buf[p] == 43):
        neg = buf[p] == 45
        p += 1
    if p >= e:
        return False, np.int64(0)
    v = np.int64(0)
    while p < e:
        c = np.int64(buf[p])
        if c < 48 or c > 57:
            return False, np.int64(0)
        v = v * 10 + (c - 48)
        if v > 2147483648:
            return False, np.int64(0)
        p += 1
    if neg:
        v = -v
    elif v > 2147483647:
        return False, np.int64(0)
    if v < -141427:
        v = julian_to_gregorian_days(v)
    return True, v


def julian_to_gregorian_days(days):
    """The proleptic Gregorian day number of the Julian calendar date that ``days`` (since 1970) names."""
    jdn = days + 2440588  # Julian day number (day count is the same in both calendars)
    c = jdn + 32082
    d = (4 * c + 3) // 1461
    e = c - (1461 * d) // 4
    m = (5 * e + 2) // 153
    day = e - (153 * m + 2) // 5 + 1
    month = m + 3 - 12 * (m // 10)
    year = d - 4800 + m // 10
    return days_from_civil(year, month, day)


def text_to_timestamp_fields(buf, s, e, fields):
    """Spark's ``parseTimestampString``: True with ``fields`` = [year, month, day, hour, minute, second, micros,
    zone start, zone end (-1: none), just a time (0/1)], or False. ``s`` is the text's first byte (a leading ``T``
    only counts there)."""
    j, stop = trimmed(buf, s, e)
    if j == stop:
        return False
    for k in range(9):
        fields[k] = 0
    fields[0] = 1
    fields[1] = 1
    fields[2] = 1
    fields[7] = -1
    fields[8] = -1
    fields[9] = 0
    i = 0
    value = np.int64(0)
    digits = 0
    micro_digits = 0
    sign = np.int64(0)
    if buf[j] == 45 or buf[j] == 43:
        sign = np.int64(-1) if buf[j] == 45 else np.int64(1)
        j += 1
    while j < stop:
        b = np.int64(buf[j])
        if 48 <= b <= 57:
            if i == 6:
                micro_digits += 1
            if i != 6 or digits < 6:
                value = value * 10 + (b - 48)
            digits += 1
            j += 1
            continue
        if j == s and b == 84:  # a time alone: T10:00:00
            fields[9] = 1
            i += 3
            j += 1
            continue
        zone = False
        if i < 2 and b == 45:
            nxt = i + 1
        elif i == 0 and b == 58 and sign == 0:  # a time alone: 10:00:00
            fields[9] = 1
            i = 3
            nxt = 4
        elif i == 2 and (b == 32 or b == 84):
            nxt = 3
        elif (i == 3 or i == 4) and b == 58:
            nxt = i + 1
        elif i == 5 and b == 46:
            nxt = 6
        elif i == 5 or i == 6:  # the rest is a zone
            nxt = 7
            zone = True
        else:
            return False
        if not ts_digits_ok(i, digits):
            return False
        fields[i] = value
        value = np.int64(0)
        digits = 0
        i = nxt
        if zone:
            fields[7] = j
            fields[8] = stop
            break
        j += 1
    if not ts_digits_ok(i, digits):
        return False
    if i < 7:
        fields[i] = value
    while micro_digits < 6:
        fields[6] *= 10
        micro_digits += 1
    if sign != 0:
        fields[0] *= sign
    return True


def ts_digits_ok(segment, digits):
    return (segment == 6 or (segment == 0 and 4 <= digits <= 6) or (segment == 7 and digits <= 2)
            or (segment != 0 and segment != 6 and segment != 7 and 0 < digits <= 2))


def digits_at(buf, p, e, least, most):
    """(value, end) of ``least`` to ``most`` digits at ``p`` (as many as there are); end -1 if fewer."""
    v = np.int64(0)
    q = p
    while q < e and q - p < most and 48 <= buf[q] <= 57:
        v = v * 10 + (np.int64(buf[q]) - 48)
        q += 1
    if q - p < least:
        return np.int64(0), np.int64(-1)
    return v, q


def offset_at(buf, p, e, style, zero_z):
    """(seconds, end) of an offset written as ``style`` says (``Z`` for zero when ``zero_z``); end -1 if none."""
    if zero_z == 1 and p < e and buf[p] == 90:
        return np.int64(0), p + 1
    if p >= e or (buf[p] != 43 and buf[p] != 45):
        return np.int64(0), np.int64(-1)
    neg = buf[p] == 45
    h, q = digits_at(buf, p + 1, e, 2, 2)
    if q < 0 or h > 18:
        return np.int64(0), np.int64(-1)
    mi = np.int64(0)
    sec = np.int64(0)
    for part in range(2):  # minutes, then seconds: each required, optional or absent as the style says
        required = OFF_MINUTES if part == 0 else OFF_SECONDS
        if (style & (required | (OFF_MINUTES_OPT if part == 0 else OFF_SECONDS_OPT))) == 0:
            break
        r = q
        if (style & OFF_COLON) != 0:
            r = q + 1 if (q < e and buf[q] == 58) else np.int64(-1)
        v = np.int64(0)
        t = np.int64(-1)
        if r >= 0:
            v, t = digits_at(buf, r, e, 2, 2)
        if t < 0 or v > 59:
            if (style & required) != 0:
                return np.int64(0), np.int64(-1)
            break
        if part == 0:
            mi = v
        else:
            sec = v
        q = t
    total = h * 3600 + mi * 60 + sec
    return (-total if neg else total), q


def offset_text(buf, s, e):
    """(ok, seconds) of Java's ``ZoneOffset.of``: ``Z``, ``±h``, ``±hh``, ``±hh:mm``, ``±hhmm``, ``±hh:mm:ss``,
    ``±hhmmss``, within ±18:00."""
    n = e - s
    if n == 2 and (buf[s] == 43 or buf[s] == 45) and 48 <= buf[s + 1] <= 57:
        h = np.int64(buf[s + 1]) - 48
        return True, (-h * 3600 if buf[s] == 45 else h * 3600)
    colon = OFF_COLON if n >= 4 and buf[s + 3] == 58 else 0
    seconds, q = offset_at(buf, s, e, colon | OFF_MINUTES_OPT | OFF_SECONDS_OPT, 1 if n == 1 else 0)
    if q != e or seconds > 18 * 3600 or seconds < -18 * 3600:
        return False, np.int64(0)
    return True, seconds


def zone_text(buf, s, e, scratch):
    """(outcome, offset seconds) of a zone named in a timestamp, as Spark's ``getZoneId`` reads it: a fixed offset
    (``Z``, ``+01:00``, ``-5``, ``UTC``, ``GMT+1``, ``UT-03:30``, ``EST``...) is read here (True); a region or
    another short id is :data:`LATER`; text that no zone can be, False."""
    s, e = trimmed(buf, s, e)
    n = e - s
    if n <= 0:
        return False, np.int64(0)
    # Spark rewrites (+|-)h: as (+|-)0h: and a final (+|-)hh:m as (+|-)hh:0m before Java reads the id
    m = np.int64(0)
    k = s
    replaced = False
    while k < e:
        c = buf[k]
        if (c == 43 or c == 45) and k + 2 < e and 48 <= buf[k + 1] <= 57 and buf[k + 2] == 58 and not replaced:
            scratch[m] = c
            scratch[m + 1] = 48
            m += 2
            k += 1
            replaced = True
            continue
        scratch[m] = c
        m += 1
        k += 1
    if m >= 5 and (scratch[m - 5] == 43 or scratch[m - 5] == 45) and 48 <= scratch[m - 4] <= 57 \
            and 48 <= scratch[m - 3] <= 57 and scratch[m - 2] == 58 and 48 <= scratch[m - 1] <= 57:
        scratch[m] = scratch[m - 1]
        scratch[m - 1] = 48
        m += 1
    c0 = scratch[0]
    if m <= 1 or c0 == 43 or c0 == 45:
        ok, off = offset_text(scratch, 0, m)
        return (1 if ok else 0), off
    prefix = 0
    if m >= 3 and ((scratch[0] == 85 and scratch[1] == 84 and scratch[2] == 67)
                   or (scratch[0] == 71 and scratch[1] == 77 and scratch[2] == 84)):
        prefix = 3
    elif m >= 2 and scratch[0] == 85 and scratch[1] == 84:
        prefix = 2
    if prefix > 0:
        if m == prefix:
            return 1, np.int64(0)
        if scratch[prefix] == 43 or scratch[prefix] == 45:
            ok, off = offset_text(scratch, prefix, m)
            return (1 if ok else 0), off
        return LATER, np.int64(0)
    if m == 3 and scratch[1] == 83 and scratch[2] == 84:  # EST, MST, HST: fixed offsets among Java's short ids
        if c0 == 69:
            return 1, np.int64(-5 * 3600)
        if c0 == 77:
            return 1, np.int64(-7 * 3600)
        if c0 == 72:
            return 1, np.int64(-10 * 3600)
    return LATER, np.int64(0)


def local_to_utc(local_seconds, zone_at, zone_offsets):
    """UTC seconds of a local date-time (seconds since 1970 as if UTC) in a zone: ``zone_offsets[0]`` before the
    first transition, ``zone_at[k]`` (UTC seconds) the transitions to ``zone_offsets[k + 1]``. In a gap or an
    overlap the offset before the transition applies, as Java's ``ZonedDateTime.of`` does."""
    n = zone_at.shape[0]
    lo = 0
    hi = n
    while lo < hi:  # the first transition whose local times both lie after local_seconds
        mid = (lo + hi) // 2
        before = zone_offsets[mid]
        after = zone_offsets[mid + 1]
        if zone_at[mid] + (before if before < after else after) <= local_seconds:
            lo = mid + 1
        else:
            hi = mid
    if lo == 0:
        return local_seconds - zone_offsets[0]
    k = lo - 1
    before = zone_offsets[k]
    after = zone_offsets[k + 1]
    if local_seconds < zone_at[k] + (before if before > after else after):
        return local_seconds - before
    return local_seconds - after


def fields_to_micros(fields, offset, zone_at, zone_offsets, fixed):
    """(ok, micros since 1970 UTC) of parsed date-time ``fields`` at a fixed ``offset`` (``fixed``) or in the
    reading zone; False for an invalid date or time, or out of the 64-bit range."""
    y = fields[0]
    mo = fields[1]
    d = fields[2]
    h = fields[3]
    mi = fields[4]
    sec = fields[5]
    if not valid_day(y, mo, d) or h > 23 or mi > 59 or sec > 59:
        return False, np.int64(0)
    local = days_from_civil(y, mo, d) * DAY_SECONDS + h * 3600 + mi * 60 + sec
    utc = local - offset if fixed else local_to_utc(local, zone_at, zone_offsets)
    limit = I64_MAX // MICROS - 1
    if utc > limit or utc < -limit:
        return False, np.int64(0)
    return True, utc * MICROS + fields[6]


def text_to_timestamp(buf, s, e, fields, scratch, zone_at, zone_offsets):
    """(outcome, micros) of ``stringToTimestamp`` in the reading zone: True, False, or :data:`LATER` (a region
    named in the text, or a time alone)."""
    if not text_to_timestamp_fields(buf, s, e, fields):
        return 0, np.int64(0)
    if fields[9] != 0:
        return LATER, np.int64(0)
    fixed = False
    offset = np.int64(0)
    if fields[7] >= 0:
        got, offset = zone_text(buf, fields[7], fields[8], scratch)
        if got != 1:
            return got, np.int64(0)
        fixed = True
    ok, micros = fields_to_micros(fields, offset, zone_at, zone_offsets, fixed)
    return (1 if ok else 0), micros


def text_to_local_timestamp(buf, s, e, fields):
    """(ok, micros) of ``stringToTimestampWithoutTimeZone`` (TIMESTAMP_NTZ): no zone, no time alone."""
    if not text_to_timestamp_fields(buf, s, e, fields) or fields[9] != 0 or fields[7] >= 0:
        return False, np.int64(0)
    return fields_to_micros(fields, np.int64(0), fields, fields, True)


def without_gmt(buf, s, e, out):
    """Copies ``buf[s:e]`` into ``out`` without its ``GMT``s (Spark's ``cleanLegacyTimestampStr``); the length."""
    n = np.int64(0)
    p = s
    while p < e:
        if p + 3 <= e and buf[p] == 71 and buf[p + 1] == 77 and buf[p + 2] == 84:
            p += 3
            continue
        out[n] = buf[p]
        n += 1
        p += 1
    return n


KERNELS = ("blank_byte", "trimmed", "valid_day", "text_to_date", "date_digits_ok", "text_to_day_number",
           "julian_to_gregorian_days", "text_to_timestamp_fields", "ts_digits_ok", "digits_at", "offset_at",
           "offset_text", "zone_text", "local_to_utc", "fields_to_micros", "text_to_timestamp",
           "text_to_local_timestamp", "without_gmt")
