"""The types JSON schema inference works with, and Spark's rules for merging them (``JsonInferSchema``).

A type is a small tuple, so that equal types compare and hash cheaply:

* ``NULL``, ``BOOL``, ``LONG``, ``DOUBLE``, ``STRING``, ``TIMESTAMP``, ``TIMESTAMP_NTZ``, ``TIME``: one-tuples;
* ``("M", precision, scale)``: a decimal;
* ``("A", element)``: an array (its elements are always nullable, as Spark infers them);
* ``("R", ((name, type), ...))``: a struct, fields sorted by name as Java's ``String.compareTo`` sorts them
  (UTF-16 code units); names may repeat (a document with a duplicate key gives two fields, as in Spark).

``compatible`` is Spark's ``JsonInferSchema.compatibleType`` (``TypeCoercion.findTightestCommonType`` first),
``merge_root`` its ``compatibleRootType`` and ``canonical`` its ``canonicalizeType``.
"""

from __future__ import annotations

import re
from operator import itemgetter

NULL = ("N",)
BOOL = ("B",)
LONG = ("L",)
DOUBLE = ("D",)
STRING = ("S",)
TIMESTAMP = ("T",)
TIMESTAMP_NTZ = ("Z",)
TIME = ("H",)
EMPTY_STRUCT = ("R", ())

MAX_PRECISION = 38
_LONG_AS_DECIMAL = ("M", 20, 0)  # DecimalType.forType(LongType)
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def name_key(name: str) -> str:
    """A key that orders names as Java's String.compareTo does: by UTF-16 code unit, so a character beyond
    U+FFFF (a surrogate pair, D800-DFFF) sorts before U+E000-U+FFFF."""
    if name.isascii() or not _ASTRAL.search(name):
        return name
    return _ASTRAL.sub(lambda m: _surrogates(m.group()), name)


def _surrogates(ch: str) -> str:
    code = ord(ch) - 0x10000
    return chr(0xD800 | (code >> 10)) + chr(0xDC00 | (code & 0x3FF))


def struct(fields: list, ascii_names: bool | None = None) -> tuple:
    """A struct of ``fields`` [(name, type)] in document order, sorted (stably) as Spark sorts them.
    ``ascii_names``: whether all names are ASCII, when the caller knows."""
    if len(fields) > 1:
        if ascii_names is None:
            ascii_names = "".join(map(_first, fields)).isascii()
        if ascii_names:
            fields.sort(key=_first)
        else:
            fields.sort(key=lambda f: name_key(f[0]))
    return ("R", tuple(fields))


_first = itemgetter(0)


class Merger:
    """Spark's merge rules with the session's setting for name case (``spark.sql.caseSensitive``), which
    ``findTightestCommonType`` consults when it lines up the fields of two structs."""

    def __init__(self, case_sensitive: bool = False) -> None:
        self.case_sensitive = case_sensitive

    # -- TypeCoercion.findTightestCommonType ------------------------------------------------------------
    def tightest(self, t1: tuple, t2: tuple):
        if t1 == t2:
            return t1
        k1, k2 = t1[0], t2[0]
        if k1 == "N":
            return t2
        if k2 == "N":
            return t1
        if k1 == "L" and k2 == "M" and t2[1] - t2[2] >= 20:
            return t2
        if k1 == "M" and k2 == "L" and t1[1] - t1[2] >= 20:
            return t1
        if {k1, k2} == {"L", "D"}:
            return DOUBLE
        if {k1, k2} == {"T", "Z"}:
            return TIMESTAMP
        if k1 == "A" and k2 == "A":
            element = self.tightest(t1[1], t2[1])
            return None if element is None else ("A", element)
        if k1 == "R" and k2 == "R" and len(t1[1]) == len(t2[1]):
            fields = []
            for (n1, f1), (n2, f2) in zip(t1[1], t2[1]):
                if not self.same_name(n1, n2):
                    return None
                merged = self.tightest(f1, f2)
                if merged is None:
                    return None
                fields.append((n1, merged))
            return ("R", tuple(fields))
        return None

    def same_name(self, a: str, b: str) -> bool:
        """Spark's resolver: equal names, or equal ignoring case (Java's equalsIgnoreCase) unless the
        session is case sensitive."""
        if a == b:
            return True
        if self.case_sensitive or len(a) != len(b):
            return False
        if a.isascii() and b.isascii():
            return a.lower() == b.lower()
        return all(x == y or _upper(x) == _upper(y) or _upper(x).lower() == _upper(y).lower()
                   for x, y in zip(a, b))

    # -- JsonInferSchema.compatibleType -----------------------------------------------------------------
    def compatible(self, t1: tuple, t2: tuple) -> tuple:
        if t1 is t2:
            return t1
        tight = self.tightest(t1, t2)
        if tight is not None:
            return tight
        k1, k2 = t1[0], t2[0]
        if (k1 == "D" and k2 == "M") or (k1 == "M" and k2 == "D"):
            return DOUBLE
        if k1 == "M" and k2 == "M":
            scale = max(t1[2], t2[2])
            digits = max(t1[1] - t1[2], t2[1] - t2[2])
            return DOUBLE if digits + scale > MAX_PRECISION else ("M", digits + scale, scale)
        if k1 == "R" and k2 == "R":
            return ("R", self._merge_fields(t1[1], t2[1]))
        if k1 == "A" and k2 == "A":
            return ("A", self.compatible(t1[1], t2[1]))
        if k1 == "L" and k2 == "M":
            return self.compatible(_LONG_AS_DECIMAL, t2)
        if k1 == "M" and k2 == "L":
            return self.compatible(t1, _LONG_AS_DECIMAL)
        return STRING

    def _merge_fields(self, fields1: tuple, fields2: tuple) -> tuple:
        """Both sorted by name: merged as Spark merges them, walking the two lists side by side."""
        merged = []
        i = j = 0
        n1, n2 = len(fields1), len(fields2)
        while i < n1 and j < n2:
            name1, type1 = fields1[i]
            name2, type2 = fields2[j]
            if name1 == name2:
                merged.append((name1, self.compatible(type1, type2)))
                i += 1
                j += 1
            elif name_key(name1) < name_key(name2):
                merged.append(fields1[i])
                i += 1
            else:
                merged.append(fields2[j])
                j += 1
        merged.extend(fields1[i:])
        merged.extend(fields2[j:])
        return tuple(merged)

    # -- JsonInferSchema.compatibleRootType -------------------------------------------------------------
    def merge_root(self, root: tuple, other: tuple, mode: str, corrupt_name: str):
        """``root`` (a struct) merged with one document's type. A document that is not an object (nor an
        array of them, nor null) adds the corrupt-record column (PERMISSIVE), is left out (DROPMALFORMED), or
        makes this return None (FAILFAST: the caller raises)."""
        while other[0] == "A":
            other = other[1]
        if other[0] == "R":
            return self.compatible(root, other)
        if other == NULL:
            return root
        if mode == "FAILFAST":
            return None
        if mode == "DROPMALFORMED" or any(name == corrupt_name for name, _ in root[1]):
            return root
        return struct([(corrupt_name, STRING)] + list(root[1]))


def _upper(ch: str) -> str:
    up = ch.upper()
    return up if len(up) == 1 else ch


def canonical(t: tuple, drop_all_null: bool):
    """Spark's canonicalizeType: NULL becomes STRING (or is dropped with dropFieldIfAllNull), empty structs
    and fields with empty names are dropped, arrays of something dropped are dropped. None when dropped."""
    kind = t[0]
    if kind == "N":
        return None if drop_all_null else STRING
    if kind == "A":
        element = canonical(t[1], drop_all_null)
        return None if element is None else ("A", element)
    if kind == "R":
        fields = []
        for name, field in t[1]:
            if not name:
                continue
            kept = canonical(field, drop_all_null)
            if kept is not None:
                fields.append((name, kept))
        return ("R", tuple(fields)) if fields else None
    return t


def describe(t: tuple) -> str:
    """Spark's simpleString of a type, for messages and tests."""
    kind = t[0]
    simple = {"N": "void", "B": "boolean", "L": "bigint", "D": "double", "S": "string", "T": "timestamp",
              "Z": "timestamp_ntz", "H": "time(6)"}
    if kind in simple:
        return simple[kind]
    if kind == "M":
        return f"decimal({t[1]},{t[2]})"
    if kind == "A":
        return f"array<{describe(t[1])}>"
    return "struct<" + ",".join(f"{name}:{describe(field)}" for name, field in t[1]) + ">"
