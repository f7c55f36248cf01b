"""The fast way to a document's type: Python's C JSON scanner, with hooks that build types, not values.

Python's ``json`` accepts strict JSON (plus NaN, Infinity, -Infinity), all of which Jackson accepts with
Spark's settings and reads to the same type; so a document it reads gives the same type the full
:class:`~.inference_scan.Scanner` would. Whatever it cannot read (comments, single quotes, leading zeros, a
lone surrogate in a name, a top-level scalar, very deep nesting...) goes to the Scanner, which decides.
"""

from __future__ import annotations

import json
import re
import sys
from operator import itemgetter

from ..options import JsonOptions
from .scan import MAX_NAME_BYTES, Malformed, Unreadable, number_type
from .text import utf16_length
from .types import BOOL, DOUBLE, LONG, NULL, STRING, Merger, struct

__all__ = ["FastPath"]

_WS = re.compile(r"[ \t\n\r]*")
_SURROGATE = re.compile("[\ud800-\udfff]")
_first = itemgetter(0)
_NUMBER = re.compile(r"(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?)([0-9]+))?")


class _Undecided(Exception):
    """The Scanner must read this document (it knows what Jackson would do)."""


class FastPath:
    def __init__(self, opts: JsonOptions, string_type, merger: Merger) -> None:
        self.opts = opts
        self.string_type = string_type
        self.compatible = merger.compatible
        decoder = json.JSONDecoder(parse_float=self._float, parse_int=self._int, parse_constant=self._constant,
                                   object_pairs_hook=self._object, strict=not opts.allow_unquoted_control_chars)
        self._scan = decoder.scan_once
        self._bool = STRING if opts.primitives_as_string else BOOL
        self._limit = min(opts.max_num_len, opts.max_string_len)
        self._short_int = 0 if opts.primitives_as_string else min(18, opts.max_num_len)
        self._plain_floats = not opts.primitives_as_string and not opts.prefers_decimal
        self._plain_strings = not opts.prefers_decimal and not opts.infer_timestamp
        self._short_string = opts.max_string_len // 2  # no longer than this in UTF-16 either
        # The C scanner recurses once per nesting level: it must give up (RecursionError) before going deeper
        # than maxNestingDepth, which the Scanner checks.
        self.usable = opts.max_nesting_depth >= sys.getrecursionlimit()

    def document(self, text: str):
        """The type of ``text``'s first value, None when the Scanner must decide. Raises Malformed."""
        i = _WS.match(text).end()
        if i >= len(text) or text[i] not in "{[":
            return None  # nothing, a BOM, a comment, a top-level scalar: the Scanner's rules for them
        try:
            value, _end = self._scan(text, i)
            return value if value.__class__ is tuple else self._list(value)
        except (StopIteration, ValueError, RecursionError, _Undecided):
            return None

    # -- hooks: numbers become types as they are read --------------------------------------------------
    def _int(self, token: str) -> tuple:
        if len(token) <= self._short_int:
            return LONG
        negative = token[0] == "-"
        return number_type(self.opts, negative, token[1:] if negative else token, None, "", None)

    def _float(self, token: str) -> tuple:
        if self._plain_floats and len(token) <= self._limit:
            return DOUBLE
        m = _NUMBER.fullmatch(token)
        try:
            return number_type(self.opts, m.group(1) == "-", m.group(2), m.group(3), m.group(4) or "", m.group(5))
        except Unreadable:
            raise _Undecided from None  # the Scanner reads in Jackson's order: an earlier error may come first

    def _constant(self, token: str) -> tuple:
        opts = self.opts
        if not opts.allow_non_numeric_numbers:
            raise Malformed("NaN or Infinity (allowNonNumericNumbers is off)")
        if opts.primitives_as_string:
            return STRING
        if opts.prefers_decimal:
            raise Malformed("NaN or Infinity has no decimal value")
        return DOUBLE

    # -- containers -----------------------------------------------------------------------------------
    def _object(self, pairs: list) -> tuple:
        convert = self._type
        fields = [(name, value if value.__class__ is tuple else convert(value)) for name, value in pairs]
        names = "".join(map(_first, pairs))
        ascii_names = names.isascii()
        if not ascii_names or len(names) > MAX_NAME_BYTES:
            for name, _ in pairs:
                if not name.isascii() and not self.opts.lenient_surrogates and _SURROGATE.search(name):
                    raise Malformed("lone surrogate in a field name")  # Jackson 2.21 refuses it
                if len(name) > MAX_NAME_BYTES // 4 and len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
                    raise Malformed("field name longer than 50,000 bytes")
        return struct(fields, ascii_names)

    def _type(self, value) -> tuple:
        kind = value.__class__
        if kind is str:
            if len(value) > self._short_string and utf16_length(value) > self.opts.max_string_len:
                raise Malformed(f"string longer than maxStringLen ({self.opts.max_string_len})")
            if self._plain_strings:
                return STRING if value else NULL
            return self.string_type(value)
        if kind is bool:
            return self._bool
        if value is None:
            return NULL
        if kind is list:
            return self._list(value)
        return value  # a type a hook made

    def _list(self, values: list) -> tuple:
        element = NULL
        compatible, convert = self.compatible, self._type
        for value in values:
            element = compatible(element, value if value.__class__ is tuple else convert(value))
        return ("A", element)
