"""Generated JSON documents (hypothesis): every kind of value, written in every style Spark's options allow
(white space, comments, single quotes, unquoted names, leading zeros, escapes), sometimes damaged.

The strategies serve the Spark oracle test too (tests/spark/test_json_inference_generated.py). Here, without
Spark, the fast path (Python's C scanner) must agree with the Scanner on every document it decides: same
type, or both malformed.
"""

from __future__ import annotations

import json
import random
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kwire.formats.json.inference.fast import FastPath
from spark_kwire.formats.json.options import JsonOptions
from spark_kwire.formats.json.inference.scan import Malformed, Scanner
from spark_kwire.formats.json.inference.infer import _string_typer
from spark_kwire.formats.json.inference.types import Merger

NAMES = ["a", "b", "c", "A", "B", "ab", "a_b", "$x", "é", "Ω", "😀", "\uff00", "", "x y", "1", "_", "ß", "SS"]
STRINGS = ["", "x", "2020-01-01", "2020-01-01T12:00:00Z", "2024-02-29 23:59:59.123456", "12:00", "2020-13-01",
           "1.5", "0.001", "1,234.5", "12345678901234567890.123", ".5", "-7", "NaN", "true", "null", " ", "\t\n",
           "\u2028", "'", '"', "\\", "😀"]
BIG_NUMBERS = ["9223372036854775807", "9223372036854775808", "-9223372036854775809", "1" * 38, "1" * 40, "-0",
               "0"]
OPTION_SETS = [
    {},
    {"prefersDecimal": True},
    {"primitivesAsString": True},
    {"allowComments": True, "allowUnquotedFieldNames": True, "allowNumericLeadingZeros": True,
     "allowBackslashEscapingAnyCharacter": True},
    {"inferTimestamp": True},
    {"dropFieldIfAllNull": True},
    {"allowSingleQuotes": False, "allowNonNumericNumbers": False},
]


def _float_text(parts) -> str:
    whole, fraction, exponent, marker = parts
    if exponent is None:
        return f"{whole}.{fraction}"
    plus = "+" if exponent >= 0 and exponent % 2 else ""
    return f"{whole}.{fraction}{marker}{plus}{exponent}"


scalars = st.one_of(
    st.integers(-2**70, 2**70).map(lambda i: ("num", str(i))),
    st.sampled_from(BIG_NUMBERS).map(lambda t: ("num", t)),
    st.tuples(st.integers(-10**6, 10**6), st.text("0123456789", min_size=1, max_size=5),
              st.one_of(st.none(), st.integers(-20, 20)), st.sampled_from("eE")).map(lambda p: ("float", p)),
    st.sampled_from(["NaN", "Infinity", "-Infinity"]).map(lambda t: ("nonnum", t)),
    st.one_of(st.text(max_size=8), st.sampled_from(STRINGS)).map(lambda s: ("str", s)),
    st.booleans().map(lambda b: ("lit", "true" if b else "false")),
    st.just(("lit", "null")),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4).map(lambda items: ("arr", items)),
        st.lists(st.tuples(st.sampled_from(NAMES), inner), max_size=5).map(lambda fields: ("obj", fields)),
    ),
    max_leaves=12,
)
objects = st.lists(st.tuples(st.sampled_from(NAMES), values), max_size=6).map(lambda fields: ("obj", fields))
documents = st.tuples(objects, st.integers(0, 2**32), st.integers(0, 19))  # tree, style seed, damage (0 = none)


_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


class Writer:
    """Writes a tree in a random style that ``options`` allow."""

    def __init__(self, options: dict, seed: int) -> None:
        self.o = {k: bool(v) for k, v in options.items()}
        self.rng = random.Random(seed)

    def ws(self) -> str:
        choice = self.rng.choice(["", "", "", " ", "\n", "\t", "  ", "\r\n"])
        if self.o.get("allowComments") and self.rng.random() < 0.2:
            choice += self.rng.choice(["/* c */", "// c\n", "/**/", "/* * / */"])
        return choice

    def string(self, s: str) -> str:
        if self.o.get("allowSingleQuotes", True) and self.rng.random() < 0.25:
            body = json.dumps(s)[1:-1].replace('\\"', '"').replace("'", "\\'")
            return f"'{body}'"
        return json.dumps(s, ensure_ascii=self.rng.random() < 0.5)

    def name(self, n: str) -> str:
        if self.o.get("allowUnquotedFieldNames") and _IDENTIFIER.fullmatch(n) and self.rng.random() < 0.5:
            return n
        return self.string(n)

    def write(self, node) -> str:
        kind, value = node
        if kind == "num":
            if self.o.get("allowNumericLeadingZeros") and self.rng.random() < 0.3:
                return value.replace("-", "-00") if value.startswith("-") else "00" + value
            return value
        if kind == "float":
            whole, fraction, exponent, marker = value
            if self.o.get("prefersDecimal"):
                exponent = None  # a negative decimal scale makes Spark's inference fail as a whole
            return _float_text((whole, fraction, exponent, marker))
        if kind in ("nonnum", "lit"):
            return value
        if kind == "str":
            return self.string(value)
        if kind == "arr":
            return "[" + self.ws() + ("," + self.ws()).join(self.write(v) + self.ws() for v in value) + "]"
        items = (self.ws() + self.name(n) + self.ws() + ":" + self.ws() + self.write(v) + self.ws() for n, v in value)
        return "{" + ",".join(items) + self.ws() + "}"


def render(document, options: dict) -> str:
    """The text of a generated document; damaged (cut short or given a stray character) when asked."""
    tree, seed, damage = document
    text = Writer(options, seed).write(tree)
    if damage == 1 and len(text) > 1:
        text = text[: random.Random(seed).randrange(1, len(text))]
    elif damage == 2:
        at = random.Random(seed).randrange(0, len(text) + 1)
        text = text[:at] + random.Random(seed + 1).choice(",:{}[]\"'\\ x\x00/#") + text[at:]
    return text


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=documents, which=st.integers(0, len(OPTION_SETS) - 1))
def test_fast_path_agrees_with_the_scanner(document, which):
    options = OPTION_SETS[which]
    opts = JsonOptions.for_inference(options)
    merger = Merger()
    typer = _string_typer(opts)
    fast, scanner = FastPath(opts, typer, merger), Scanner(opts, typer, merger)
    text = render(document, options)
    try:
        expected = scanner.document(text)
    except Malformed:
        expected = "malformed"
    try:
        actual = fast.document(text)
    except Malformed:
        actual = "malformed"
    if actual is not None:  # None: the fast path leaves it to the Scanner
        assert actual == expected, text
