"""Which strings Spark's default timestamp parsers accept, for ``inferTimestamp``: read by the decoding kernels'
own port of ``SparkDateTimeUtils.parseTimestampString`` (``json/kernels/times.py``, run here as plain Python), so
that inference and ``from_json`` read a timestamp alike.

Inference asks, of a string, what ``stringToTimestamp(s, zone).isDefined`` (TIMESTAMP),
``stringToTimestampWithoutTimeZone(s, allowTimeZone = false).isDefined`` (TIMESTAMP_NTZ, when the session's
default timestamp type is TIMESTAMP_NTZ) and ``stringToTime(s).isDefined`` (TIME, when the session enables the TIME
type) answer: the text's form, a valid date and time of day, a zone ``getZoneId`` reads (a fixed offset read by the
kernel, a region or Java's short id by ``zones.py``), and an instant that fits Spark's long of microseconds.
"""

from __future__ import annotations

import numpy as np

from ..kernels.times import LATER, text_to_timestamp_fields, valid_day, zone_text
from ..zones import zone_of
from ...json_text.kernels.text import days_from_civil

__all__ = ["is_timestamp", "is_timestamp_ntz", "is_time", "valid_zone"]

_MIN_MICROS, _MAX_MICROS = -(2**63), 2**63 - 1
_FIELDS = 10  # what text_to_timestamp_fields fills: y, mo, d, h, mi, s, micros, zone start, zone end, time alone
_JAVA_BLANKS = "".join(map(chr, range(33)))
_YEAR_AT_THE_LIMITS = 290_000  # only years beyond this can make an instant overflow Spark's long of microseconds


def _parsed(text: str) -> tuple[bytes, list] | None:
    buf = text.encode("utf-8", "surrogatepass")
    fields = [0] * _FIELDS
    with np.errstate(over="ignore"):  # digits past a segment's few wrap, as in the compiled kernel; refused anyway
        found = text_to_timestamp_fields(buf, 0, len(buf), fields)
    return (buf, fields) if found else None


def _time_valid(fields: list) -> bool:
    return 0 <= fields[3] <= 23 and 0 <= fields[4] <= 59 and 0 <= fields[5] <= 59


def _local_micros(fields: list) -> int | None:
    """Microseconds since 1970 of the date-time as if at UTC, None for an invalid date or time of day."""
    if not _time_valid(fields) or not valid_day(fields[0], fields[1], fields[2]):
        return None
    seconds = days_from_civil(fields[0], fields[1], fields[2]) * 86400 + fields[3] * 3600 + fields[4] * 60 + fields[5]
    return int(seconds) * 1_000_000 + int(fields[6])


def _text_zone(buf: bytes, fields: list):
    """The zone a timestamp names (an offset in seconds, or a region), None when ``getZoneId`` refuses it."""
    start, end = int(fields[7]), int(fields[8])
    zone = buf[start:end].decode("utf-8", "surrogatepass").strip(_JAVA_BLANKS)  # as Java's String.trim
    if not (zone.isascii() and zone.isprintable()):
        return None  # every zone id Java reads is printable ASCII (the kernel also trims DEL, which Java keeps)
    outcome, offset = zone_text(buf, start, end, bytearray(end - start + 4))
    if outcome == LATER:
        try:
            return zone_of(zone)
        except ValueError:
            return None
    return int(offset) if outcome == 1 else None


def _offset(zone, fields: list) -> int:
    """Seconds east of UTC of the local date-time ``fields`` in ``zone`` (an offset or a region)."""
    if isinstance(zone, int):
        return zone
    import datetime

    # Only years near the ends of the range need the offset (the instant may not fit); outside the years Python's
    # datetime covers, the zone's first or last rules stand in.
    year = min(max(int(fields[0]), 1), 9999)
    month, day = int(fields[1]), int(fields[2])
    if month == 2 and day == 29 and not valid_day(year, 2, 29):
        day = 28
    local = datetime.datetime(year, month, day, int(fields[3]), int(fields[4]), int(fields[5]))
    return int((zone.utcoffset(local) or datetime.timedelta(0)).total_seconds())


def valid_zone(zone_id: str) -> bool:
    """Whether ``zone_id`` (a ``timeZone`` option or the session's) names a zone Spark accepts."""
    try:
        zone_of(zone_id)
    except ValueError:
        return False
    return True


def is_timestamp(text: str, session_zone: str = "UTC") -> bool:
    """stringToTimestamp(text, zone).isDefined."""
    parsed = _parsed(text)
    if parsed is None:
        return False
    buf, fields = parsed
    if fields[8] >= 0:
        zone = _text_zone(buf, fields)
        if zone is None:
            return False
    else:
        zone = None
    if fields[9]:  # a time alone: today's date in the zone
        return _time_valid(fields)
    local = _local_micros(fields)
    if local is None:
        return False
    if abs(int(fields[0])) < _YEAR_AT_THE_LIMITS:
        return True
    if zone is None:
        try:
            zone = zone_of(session_zone)
        except ValueError:
            return False
    return _MIN_MICROS <= local - _offset(zone, fields) * 1_000_000 <= _MAX_MICROS


def is_timestamp_ntz(text: str) -> bool:
    """stringToTimestampWithoutTimeZone(text, allowTimeZone = false).isDefined."""
    parsed = _parsed(text)
    if parsed is None or parsed[1][9] or parsed[1][8] >= 0:
        return False
    local = _local_micros(parsed[1])
    return local is not None and _MIN_MICROS <= local <= _MAX_MICROS


def is_time(text: str) -> bool:
    """stringToTime(text).isDefined: a time of day without a date or zone."""
    parsed = _parsed(text)
    return parsed is not None and bool(parsed[1][9]) and parsed[1][8] < 0 and _time_valid(parsed[1])
