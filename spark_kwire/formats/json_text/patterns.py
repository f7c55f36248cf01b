"""``timestampFormat`` / ``dateFormat`` patterns (Java's ``DateTimeFormatter`` letters, as Spark 3+ reads them) as
the small programs the JSON kernels read text with (``json/kernels/pattern.py``) and write it with
(``kernels/encode.py``).

Read as Spark does: letters compared case-insensitively, ``y`` the proleptic year (``yy`` two digits from 2000),
``S`` runs taking one up to that many digits, the whole text consumed, dates checked strictly (no 30 February).
Supported: ``y``/``yyyy``/``yy``, ``M``/``MM``/``MMM``/``MMMM`` (and ``L``), ``d``/``dd``, ``H``/``HH``, ``h``/``hh``
with ``a``, ``m``/``mm``, ``s``/``ss``, ``S``..., offsets ``X``..``XXXXX``, ``x``..``xxxxx``, ``Z``..``ZZZ``,
``ZZZZZ``, ``'quoted'`` text, other punctuation, and ``[optional]`` sections. Anything else (day names, zone
names or ids, week fields, eras, day of year...) is refused with :class:`SchemaError`, never guessed.
"""

from __future__ import annotations

import re

import numpy as np

from ..errors import SchemaError

__all__ = ["compile_pattern"]

# ops (a program is [op, a, b] triples, after a first word giving their count)
P_LIT = 1  # a: the byte (letters matched in any case)
P_NUM = 2  # a: field, b: min digits | max digits << 8
P_FRAC = 3  # a: max digits (at least one)
P_MONTH_NAME = 4  # a: 0 short (Jan), 1 full (January)
P_AMPM = 5
P_OFFSET = 6  # a: style bits (OFF_*), b: 1 when "Z" means zero, 2 when the zero text is +00[00][:00]...
P_OPT_START = 7  # a: index of the matching P_OPT_END
P_OPT_END = 8
# fields (slots of the kernel's ``fields``)
F_YEAR = 1
F_YEAR2 = 2
F_MONTH = 3
F_DAY = 4
F_HOUR = 5
F_HOUR12 = 6
F_MINUTE = 7
F_SECOND = 8
F_MICROS = 9
F_OFFSET = 10
F_HAS_OFFSET = 11
F_PM = 12  # -1 none, 0 AM, 1 PM
FIELD_WORDS = 13
OFF_COLON = 1
OFF_MINUTES = 2  # minutes required
OFF_MINUTES_OPT = 4
OFF_SECONDS = 8
OFF_SECONDS_OPT = 16
# month names (MMM, MMMM), lower case, each padded to 9 bytes (the kernels compare them against the text in any case)
_NAMES = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december"]
MONTH_NAMES = np.array([list(n.ljust(9, " ").encode()) for n in _NAMES], dtype=np.int64)
MONTH_LENGTHS = np.array([len(n) for n in _NAMES], dtype=np.int64)
MAX_OPTIONAL = 8  # optional sections open at once
FIELDS_SIZE = FIELD_WORDS * (MAX_OPTIONAL + 1) + MAX_OPTIONAL  # what ``fields`` must hold

_OFFSETS = {  # letter run: (style bits, zero as Z)
    "X": (OFF_MINUTES_OPT, 1), "XX": (OFF_MINUTES, 1), "XXX": (OFF_COLON | OFF_MINUTES, 1),
    "XXXX": (OFF_MINUTES | OFF_SECONDS_OPT, 1), "XXXXX": (OFF_COLON | OFF_MINUTES | OFF_SECONDS_OPT, 1),
    "x": (OFF_MINUTES_OPT, 0), "xx": (OFF_MINUTES, 0), "xxx": (OFF_COLON | OFF_MINUTES, 0),
    "xxxx": (OFF_MINUTES | OFF_SECONDS_OPT, 0), "xxxxx": (OFF_COLON | OFF_MINUTES | OFF_SECONDS_OPT, 0),
    "Z": (OFF_MINUTES, 0), "ZZ": (OFF_MINUTES, 0), "ZZZ": (OFF_MINUTES, 0),
    "ZZZZZ": (OFF_COLON | OFF_MINUTES | OFF_SECONDS_OPT, 1),
}
_NUMBERS = {"d": F_DAY, "H": F_HOUR, "h": F_HOUR12, "m": F_MINUTE, "s": F_SECOND, "M": F_MONTH, "L": F_MONTH}
_REFUSED = {
    "E": "day-of-week names", "e": "day-of-week numbers", "c": "day-of-week numbers", "u": "week-based fields",
    "Y": "week-based years", "w": "week numbers", "W": "week of month", "D": "day of year", "F": "day of week in month",
    "G": "eras", "Q": "quarters", "q": "quarters", "k": "clock hours 1-24", "K": "hours 0-11", "V": "zone ids",
    "z": "zone names", "O": "localized offsets", "n": "nanoseconds", "N": "nanoseconds of day",
    "A": "milliseconds of day",
    "B": "day periods", "g": "modified Julian days", "p": "padding",
}


def compile_pattern(pattern: str, date_only: bool) -> list[int]:
    """The program of a ``timestampFormat`` (``date_only`` False) or ``dateFormat`` pattern."""
    what = "dateFormat" if date_only else "timestampFormat"
    ops: list[list[int]] = []
    opens: list[int] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "'":
            j = pattern.find("'", i + 1)
            while j >= 0 and j + 1 < len(pattern) and pattern[j + 1] == "'":
                j = pattern.find("'", j + 2)
            if j < 0:
                raise SchemaError(f"{what} {pattern!r}: a quote is not closed")
            text = pattern[i + 1:j].replace("''", "'") if j > i + 1 else "'"
            ops.extend([P_LIT, b, 0] for b in text.encode("utf-8"))
            i = j + 1
            continue
        if c == "[":
            opens.append(len(ops))
            ops.append([P_OPT_START, 0, 0])
            i += 1
            continue
        if c == "]":
            if not opens:
                raise SchemaError(f"{what} {pattern!r}: ']' closes no optional section")
            ops[opens.pop()][1] = len(ops)
            ops.append([P_OPT_END, 0, 0])
            i += 1
            continue
        if not c.isascii() or not c.isalpha():
            ops.extend([P_LIT, b, 0] for b in c.encode("utf-8"))
            i += 1
            continue
        run = re.match(f"{re.escape(c)}+", pattern[i:]).group(0)
        i += len(run)
        ops.append(_letter(run, pattern, what))
    if opens:
        raise SchemaError(f"{what} {pattern!r}: an optional section '[' is not closed")
    return [len(ops)] + [word for op in ops for word in op]


def _letter(run: str, pattern: str, what: str) -> list[int]:
    c, n = run[0], len(run)
    if c in _REFUSED:
        raise SchemaError(f"{what} {pattern!r}: the letter {c!r} ({_REFUSED[c]}) is not supported by kwire's JSON "
                          f"reader; supported: y, M, L, d, H, h, a, m, s, S, X, x, Z, quoted text, [optional]")
    if c == "y":
        if n == 2:
            return [P_NUM, F_YEAR2, 2 | (2 << 8)]
        return [P_NUM, F_YEAR, (4 | (4 << 8)) if n == 4 else (n | (9 << 8))]
    if c in ("M", "L") and n >= 3:
        if n > 4:
            raise SchemaError(f"{what} {pattern!r}: too many letters {run!r}")
        return [P_MONTH_NAME, n - 3, 0]
    if c in _NUMBERS:
        if n > 2:
            raise SchemaError(f"{what} {pattern!r}: too many letters {run!r}")
        return [P_NUM, _NUMBERS[c], (2 | (2 << 8)) if n == 2 else (1 | (2 << 8))]
    if c == "S":
        if n > 9:
            raise SchemaError(f"{what} {pattern!r}: too many letters {run!r}")
        return [P_FRAC, n, 0]
    if c == "a":
        if n > 1:
            raise SchemaError(f"{what} {pattern!r}: too many letters {run!r}")
        return [P_AMPM, 0, 0]
    if run in _OFFSETS:
        style, zero_z = _OFFSETS[run]
        return [P_OFFSET, style, zero_z]
    raise SchemaError(f"{what} {pattern!r}: {run!r} is not a pattern kwire's JSON reader supports (letters y, M, L, "
                      f"d, H, h, a, m, s, S, X, x, Z; quote other text, e.g. 'T')")
