"""Which strings Spark's default timestamp parsers accept, for ``inferTimestamp`` (no timestampFormat).

A port of ``SparkDateTimeUtils.parseTimestampString`` and the three functions inference calls on it:
``stringToTimestamp`` (TIMESTAMP), ``stringToTimestampWithoutTimeZone(s, allowTimeZone=false)``
(TIMESTAMP_NTZ, when the session's default timestamp type is TIMESTAMP_NTZ) and ``stringToTime`` (TIME, when
the session enables the TIME type). Accepted forms, after trimming ASCII controls and spaces::

    [+-]yyyy*  [+-]yyyy*-[m]m  [+-]yyyy*-[m]m-[d]d  [+-]yyyy*-[m]m-[d]d[ T][h]h:[m]m:[s]s.[fraction][zone]
    [h]h:[m]m:[s]s.[fraction][zone]  T[h]h:[m]m:[s]s.[fraction][zone]

with 4 to 6 year digits; the zone as ``getZoneId`` reads it (Z, +h[h][:mm[:ss]], UTC/GMT/UT with an offset,
Java's short ids such as PST, a region such as Europe/Paris). A value must also fit in a long of
microseconds since the epoch.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from functools import lru_cache

__all__ = ["is_timestamp", "is_timestamp_ntz", "is_time", "zone_offset_seconds"]

_MIN_MICROS, _MAX_MICROS = -(2**63), 2**63 - 1
_DAYS_BEFORE_MONTH = (0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)
# java.time.ZoneId.SHORT_IDS
_SHORT_IDS = {
    "ACT": "Australia/Darwin", "AET": "Australia/Sydney", "AGT": "America/Argentina/Buenos_Aires",
    "ART": "Africa/Cairo", "AST": "America/Anchorage", "BET": "America/Sao_Paulo", "BST": "Asia/Dhaka",
    "CAT": "Africa/Harare", "CNT": "America/St_Johns", "CST": "America/Chicago", "CTT": "Asia/Shanghai",
    "EAT": "Africa/Addis_Ababa", "ECT": "Europe/Paris", "IET": "America/Indiana/Indianapolis",
    "IST": "Asia/Kolkata", "JST": "Asia/Tokyo", "MIT": "Pacific/Apia", "NET": "Asia/Yerevan",
    "NST": "Pacific/Auckland", "PLT": "Asia/Karachi", "PNT": "America/Phoenix", "PRT": "America/Puerto_Rico",
    "PST": "America/Los_Angeles", "SST": "Pacific/Guadalcanal", "VST": "Asia/Ho_Chi_Minh",
    "EST": "-05:00", "MST": "-07:00", "HST": "-10:00",
}
_REGION_NAME = re.compile(r"[A-Za-z][A-Za-z0-9~/._+-]+")
_SINGLE_HOUR = re.compile(r"([+\-])(\d):")
_SINGLE_MINUTE = re.compile(r"([+\-])(\d\d):(\d)$")


def _valid_digits(segment: int, digits: int) -> bool:
    return (segment == 6 or (segment == 0 and 4 <= digits <= 6) or (segment == 7 and digits <= 2)
            or (segment not in (0, 6, 7) and 0 < digits <= 2))


def _trimmed(text: str) -> tuple[int, int]:
    start, end = 0, len(text)
    while start < end and (text[start] <= " " or text[start] == "\x7f"):
        start += 1
    while end > start + 1 and (text[end - 1] <= " " or text[end - 1] == "\x7f"):
        end -= 1
    return start, end


def parse_timestamp_string(text: str):
    """(segments [y, mo, d, h, mi, s, micros, ...], zone text or None, just_time), or None."""
    segments = [1, 1, 1, 0, 0, 0, 0, 0, 0]
    j, end = _trimmed(text)
    if j == end:
        return None
    i = value = digits = millis_digits = 0
    tz = None
    just_time = False
    year_sign = None
    if text[j] in "+-":
        year_sign = -1 if text[j] == "-" else 1
        j += 1
    while j < end:
        ch = text[j]
        if not ("0" <= ch <= "9"):
            if j == 0 and ch == "T":
                just_time = True
                i += 3
            elif i < 2:
                if ch == "-":
                    if not _valid_digits(i, digits):
                        return None
                    segments[i], value, digits = value, 0, 0
                    i += 1
                elif i == 0 and ch == ":" and year_sign is None:
                    just_time = True
                    if not _valid_digits(3, digits):
                        return None
                    segments[3], value, digits = value, 0, 0
                    i = 4
                else:
                    return None
            elif i == 2:
                if ch not in " T" or not _valid_digits(i, digits):
                    return None
                segments[i], value, digits = value, 0, 0
                i += 1
            elif i in (3, 4):
                if ch != ":" or not _valid_digits(i, digits):
                    return None
                segments[i], value, digits = value, 0, 0
                i += 1
            elif i in (5, 6):
                if not _valid_digits(i, digits):
                    return None
                segments[i], value, digits = value, 0, 0
                i += 1
                if not (ch == "." and i == 6):
                    tz = text[j:end]
                    j = end - 1
                if i == 6 and ch != ".":
                    i += 1
            else:
                if i < len(segments) and ch in ": ":
                    if not _valid_digits(i, digits):
                        return None
                    segments[i], value, digits = value, 0, 0
                    i += 1
                else:
                    return None
        else:
            if i == 6:
                millis_digits += 1
            if i != 6 or digits < 6:
                value = value * 10 + ord(ch) - 48
            digits += 1
        j += 1
    if not _valid_digits(i, digits):
        return None
    segments[i] = value
    while millis_digits < 6:
        segments[6] *= 10
        millis_digits += 1
    segments[0] *= year_sign or 1
    return segments, tz, just_time


def _days_from_civil(year: int, month: int, day: int) -> int | None:
    """Days since 1970-01-01 of a proleptic Gregorian date (LocalDate.of's checks), None when invalid."""
    if not 1 <= month <= 12 or day < 1:
        return None
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    length = (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[month - 1]
    if day > length:
        return None
    y = year - 1
    days = 365 * y + y // 4 - y // 100 + y // 400 + _DAYS_BEFORE_MONTH[month] + day - 1
    if month > 2 and leap:
        days += 1
    return days - 719162  # days from 0001-01-01 to 1970-01-01


def _local_micros(segments) -> int | None:
    year, month, day, hour, minute, second, micros = segments[:7]
    if not (0 <= hour <= 23 and 0 <= minute <= 59 and 0 <= second <= 59):
        return None
    days = _days_from_civil(year, month, day)
    if days is None:
        return None
    return ((days * 86400 + hour * 3600 + minute * 60 + second) * 1_000_000) + micros


def _time_valid(segments) -> bool:
    return 0 <= segments[3] <= 23 and 0 <= segments[4] <= 59 and 0 <= segments[5] <= 59


def is_timestamp(text: str, session_zone: str = "UTC") -> bool:
    """stringToTimestamp(text, zone).isDefined."""
    parsed = parse_timestamp_string(text)
    if parsed is None:
        return False
    segments, tz, just_time = parsed
    zone = session_zone
    if tz is not None:
        zone = _zone(_java_trim(tz))
        if zone is None:
            return False
    if just_time:
        return _time_valid(segments)
    local = _local_micros(segments)
    if local is None:
        return False
    offset = zone_offset_seconds(zone, segments)
    if offset is None:
        return False
    return _MIN_MICROS <= local - offset * 1_000_000 <= _MAX_MICROS


def is_timestamp_ntz(text: str) -> bool:
    """stringToTimestampWithoutTimeZone(text, allowTimeZone = false).isDefined."""
    parsed = parse_timestamp_string(text)
    if parsed is None or parsed[2] or parsed[1] is not None:
        return False
    local = _local_micros(parsed[0])
    return local is not None and _MIN_MICROS <= local <= _MAX_MICROS


def is_time(text: str) -> bool:
    """stringToTime(text).isDefined: a time of day without a date or zone."""
    parsed = parse_timestamp_string(text)
    return parsed is not None and parsed[2] and parsed[1] is None and _time_valid(parsed[0])


def _java_trim(text: str) -> str:
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


@lru_cache(maxsize=256)
def _zone(zone_id: str):
    """What getZoneId makes of ``zone_id``: ("offset", seconds) or ("region", name), None when it throws."""
    zone_id = _SINGLE_HOUR.sub(r"\g<1>0\g<2>:", zone_id, count=1)
    zone_id = _SINGLE_MINUTE.sub(r"\g<1>\g<2>:0\g<3>", zone_id, count=1)
    zone_id = _SHORT_IDS.get(zone_id, zone_id)
    if len(zone_id) <= 1 or zone_id[0] in "+-":
        seconds = _offset(zone_id)
        return None if seconds is None else ("offset", seconds)
    for prefix in ("UTC", "GMT", "UT"):
        if zone_id.startswith(prefix):
            rest = zone_id[len(prefix):]
            if not rest:
                return ("offset", 0)
            if rest[0] not in "+-":
                return _region(zone_id)
            seconds = _offset(rest)
            return None if seconds is None else ("offset", seconds)
    return _region(zone_id)


def _region(name: str):
    if not _REGION_NAME.fullmatch(name) or name not in _regions():
        return None
    return ("region", name)


@lru_cache(maxsize=1)
def _regions() -> frozenset:
    import zoneinfo

    return frozenset(zoneinfo.available_timezones())


def _offset(text: str) -> int | None:
    """ZoneOffset.of(text) in seconds, None when it throws."""
    if text == "Z":
        return 0
    if not text or text[0] not in "+-":
        return None
    if len(text) == 2:
        text = text[0] + "0" + text[1]
    n = len(text)
    layouts = {3: (1, None, None), 5: (1, 3, None), 6: (1, 4, None), 7: (1, 3, 5), 9: (1, 4, 7)}
    if n not in layouts:
        return None
    positions = layouts[n]
    colons = {6: (3,), 9: (3, 6)}.get(n, ())
    if any(text[c] != ":" for c in colons):
        return None
    parts = []
    for pos in positions:
        if pos is None:
            parts.append(0)
            continue
        pair = text[pos:pos + 2]
        if len(pair) != 2 or not ("0" <= pair[0] <= "9" and "0" <= pair[1] <= "9"):
            return None
        parts.append(int(pair))
    hours, minutes, seconds = parts
    if hours > 18 or minutes > 59 or seconds > 59:
        return None
    total = hours * 3600 + minutes * 60 + seconds
    if total > 18 * 3600:
        return None
    return -total if text[0] == "-" else total


def zone_offset_seconds(zone, segments) -> int | None:
    """The offset from UTC of a local date-time in ``zone`` (a zone id text, or what _zone returned)."""
    if isinstance(zone, str):
        zone = _zone(zone)
        if zone is None:
            return None
    kind, value = zone
    if kind == "offset":
        return value
    import zoneinfo

    year, month, day, hour, minute, second = segments[:6]
    # Only a date near the ends of the representable range (years beyond +-290,000) can depend on the exact
    # offset; outside the years Python's datetime covers, the zone's first or last rules stand in.
    year = min(max(year, 1), 9999)
    if month == 2 and day == 29 and _days_from_civil(year, 2, 29) is None:
        day = 28
    local = datetime(year, month, day, hour, minute, second)
    offset = zoneinfo.ZoneInfo(value).utcoffset(local) or timedelta(0)
    return int(offset.total_seconds())
