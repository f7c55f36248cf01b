"""Time zones as Spark names them (``timeZone``, a zone inside a timestamp's text): a fixed offset or a region of
the tz database, turned into the transition table the kernels place local times with (``vm_time.local_to_utc``),
and the few timestamps the kernels leave to Python (a region named in the text, a time without a date).

Zone ids are read as Spark's ``getZoneId`` reads them: ``(+|-)h:mm`` and ``(+|-)hh:m`` padded, then Java's
``ZoneId.of`` with its short ids (``EST``, ``PST``...): offsets ``Z``, ``+01:00``, ``-5``, prefixes ``UTC``, ``GMT``,
``UT``, else a region (``Europe/Paris``).
"""

from __future__ import annotations

import datetime as _dt
import re
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np

from ..errors import SchemaError

__all__ = ["zone_table", "zone_of", "timestamp_in_python"]

# java.time.ZoneId.SHORT_IDS
SHORT_IDS = {
    "ACT": "Australia/Darwin", "AET": "Australia/Sydney", "AGT": "America/Argentina/Buenos_Aires",
    "ART": "Africa/Cairo", "AST": "America/Anchorage", "BET": "America/Sao_Paulo", "BST": "Asia/Dhaka",
    "CAT": "Africa/Harare", "CNT": "America/St_Johns", "CST": "America/Chicago", "CTT": "Asia/Shanghai",
    "EAT": "Africa/Addis_Ababa", "ECT": "Europe/Paris", "IET": "America/Indiana/Indianapolis", "IST": "Asia/Kolkata",
    "JST": "Asia/Tokyo", "MIT": "Pacific/Apia", "NET": "Asia/Yerevan", "NST": "Pacific/Auckland",
    "PLT": "Asia/Karachi", "PNT": "America/Phoenix", "PRT": "America/Puerto_Rico", "PST": "America/Los_Angeles",
    "SST": "Pacific/Guadalcanal", "VST": "Asia/Ho_Chi_Minh", "EST": "-05:00", "MST": "-07:00", "HST": "-10:00",
}
_REGION = re.compile(r"[A-Za-z][A-Za-z0-9~/._+-]+")  # java.time.ZoneRegion's ids
_OFFSET = re.compile(r"([+-])(?:(\d)|(\d\d)|(\d\d):?(\d\d)|(\d\d):(\d\d):(\d\d)|(\d\d)(\d\d)(\d\d))")
_FIRST_YEAR, _RULES_YEAR, _LAST_YEAR = 1850, 2040, 2500  # transitions listed between; outside, the nearest
# offset holds. After _RULES_YEAR zones change twice a year at most (the tz database's rules): a coarser scan.


def _offset(text: str) -> int | None:
    """Seconds of Java's ``ZoneOffset.of``; None if ``text`` is not one."""
    if text == "Z":
        return 0
    m = _OFFSET.fullmatch(text)
    if not m:
        return None
    parts = [int(x) for x in m.groups()[1:] if x is not None] + [0, 0]
    h, mi, s = parts[0], parts[1], parts[2]
    if h > 18 or mi > 59 or s > 59 or h * 3600 + mi * 60 + s > 18 * 3600:
        return None
    total = h * 3600 + mi * 60 + s
    return -total if m.group(1) == "-" else total


def zone_of(zone_id: str) -> int | ZoneInfo:
    """A fixed offset (seconds) or a tz database region for Spark's zone id; ValueError if it names none."""
    text = re.sub(r"([+-])(\d):", r"\g<1>0\2:", zone_id, count=1)
    text = re.sub(r"([+-])(\d\d):(\d)$", r"\1\2:0\3", text)
    text = SHORT_IDS.get(text, text)
    if len(text) <= 1 or text[0] in "+-":
        found = _offset(text)
    else:
        for prefix in ("UTC", "GMT", "UT"):
            if text.startswith(prefix):
                rest = text[len(prefix):]
                if not rest:
                    return 0
                if rest[0] in "+-":
                    found = _offset(rest)
                    break
        else:
            found = None
            if _REGION.fullmatch(text) and text in _regions():
                try:
                    return ZoneInfo(text)
                except (ZoneInfoNotFoundError, ValueError):
                    pass
    if found is None:
        raise ValueError(f"{zone_id!r} is not a time zone (an offset such as +01:00 or UTC+1, or a region such as "
                         f"Europe/Paris)")
    return found


@lru_cache(maxsize=1)
def _regions() -> frozenset:
    """The tz database's region names (Java's ZoneId.of knows the same database; a file beside it, such as
    ``posixrules``, is no region)."""
    import zoneinfo

    return frozenset(zoneinfo.available_timezones())


@lru_cache(maxsize=64)
def zone_table(zone_id: str) -> tuple[np.ndarray, np.ndarray]:
    """(transition instants in UTC seconds, offsets: the one before the first transition, then the one each
    transition brings) of a zone, as ``vm_time.local_to_utc`` reads them. :class:`SchemaError` for an unknown
    zone."""
    try:
        zone = zone_of(zone_id)
    except ValueError as e:
        raise SchemaError(f"timeZone: {e}") from None
    if isinstance(zone, int):
        return np.zeros(0, dtype=np.int64), np.array([zone], dtype=np.int64)
    at, offsets = [], []
    t = int(_dt.datetime(_FIRST_YEAR, 1, 1, tzinfo=_dt.timezone.utc).timestamp())
    rules = int(_dt.datetime(_RULES_YEAR, 1, 1, tzinfo=_dt.timezone.utc).timestamp())
    last = int(_dt.datetime(_LAST_YEAR, 1, 1, tzinfo=_dt.timezone.utc).timestamp())

    def offset_at(seconds: int) -> int:
        when = _dt.datetime.fromtimestamp(seconds, _dt.timezone.utc).astimezone(zone)
        return int(when.utcoffset().total_seconds())

    current = offset_at(t)
    offsets.append(current)
    while t < last:
        step = (4 if t < rules else 14) * 86400  # transitions lie weeks apart: a step sees each, then bisected
        following = offset_at(t + step)
        if following != current:
            lo, hi = t, t + step  # the transition is in (lo, hi]
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if offset_at(mid) == current:
                    lo = mid
                else:
                    hi = mid
            at.append(hi)
            offsets.append(following)
            current = following
        t += step
    return np.array(at, dtype=np.int64), np.array(offsets, dtype=np.int64)


def _local_to_utc_seconds(local: _dt.datetime, zone) -> int:
    """Seconds since 1970 UTC of a naive local date-time in ``zone``, as Java's ``ZonedDateTime.of`` resolves
    gaps and overlaps (the offset before the transition), like ``fold=0``."""
    if isinstance(zone, int):
        aware = local.replace(tzinfo=_dt.timezone(_dt.timedelta(seconds=zone)))
    else:
        aware = local.replace(tzinfo=zone, fold=0)
    return int((aware - _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)).total_seconds() // 1)


_FIELDS = re.compile(r"(?P<sign>[+-])?(?P<y>\d{4,6})(?:-(?P<mo>\d{1,2})(?:-(?P<d>\d{1,2}))?)?"
                     r"(?:[ T](?P<h>\d{1,2})(?::(?P<mi>\d{1,2})(?::(?P<s>\d{1,2})(?:\.(?P<f>\d*))?)?)?)?(?P<zone>.*)",
                     re.S)
_TIME = re.compile(r"T?(?P<h>\d{1,2}):(?P<mi>\d{1,2})(?::(?P<s>\d{1,2})(?:\.(?P<f>\d*))?)?(?P<zone>.*)", re.S)


def timestamp_in_python(text: str, reading_zone: str) -> int | None:
    """Micros since 1970 of what the kernels leave to Python: a timestamp naming a region (``2024-05-01 10:00
    Europe/Paris``) or a time alone (``10:00:00``: today's date in the zone); None if Spark reads no timestamp."""
    s = text.strip(" \t\n\r\x0b\x0c\x00\x7f")
    m = _TIME.fullmatch(s) if (s.startswith("T") or re.match(r"\d{1,2}:", s)) else _FIELDS.fullmatch(s)
    if not m:
        return None
    zone_text = m.group("zone").strip()
    try:
        zone = zone_of(zone_text) if zone_text else zone_of(reading_zone)
    except ValueError:
        return None
    g = m.groupdict()
    try:
        if "y" in g:
            year = int(g["y"]) * (-1 if g.get("sign") == "-" else 1)
            date = _dt.date(year, int(g["mo"] or 1), int(g["d"] or 1))
        else:
            tz = _dt.timezone(_dt.timedelta(seconds=zone)) if isinstance(zone, int) else zone
            date = _dt.datetime.now(tz).date()
        fraction = (g.get("f") or "")[:6].ljust(6, "0")
        local = _dt.datetime(date.year, date.month, date.day, int(g["h"] or 0), int(g["mi"] or 0), int(g["s"] or 0))
    except ValueError:
        return None
    return _local_to_utc_seconds(local, zone) * 1_000_000 + int(fraction)
