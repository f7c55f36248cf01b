"""JSON decoding checked against Python's ``json``: hypothesis values of every type of the mapping, written by
``json.dumps`` in several styles (ASCII escapes or raw UTF-8, spaces or not, shuffled property order, repeated
keys), decoded by kwire, equal the table's Spark values of what ``json.loads`` reads. Numbers at their edges
(doubles of 17 digits, exponents, integers at 64 bits), bad input per row (FAILFAST / PERMISSIVE), and mutated
payloads: never a crash or a hang, and what kwire accepts ``json.loads`` reads to the same values."""

from __future__ import annotations

import decimal
import json
import random

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kwire.formats import kernels
from spark_kwire.formats.errors import DecodeError
from spark_kwire.formats.json_schema import JsonSchemaDecoder
from spark_kwire.formats.vm import codes
from tests.formats.json_schema.oracle import SCHEMA, VALUES, compare, frame, spark


def decoder():
    d = JsonSchemaDecoder(json.dumps(SCHEMA))
    d.add_writer_schema(1, SCHEMA)
    return d


def styles(value: dict, rnd: random.Random) -> list[str]:
    shuffled = dict(sorted(value.items(), key=lambda _: rnd.random()))
    return [json.dumps(value), json.dumps(value, ensure_ascii=False, separators=(",", ":")),
            json.dumps(shuffled, indent=rnd.choice([None, 1, "\t"])),
            # a repeated key: the last one wins, as json.loads has it
            "{" + json.dumps("id")[0:] + ": 0, " + json.dumps(value)[1:]]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=st.lists(VALUES, min_size=1, max_size=8), seed=st.integers(0, 2**32))
def test_values_equal_json_loads_through_the_mapping(values, seed):
    rnd = random.Random(seed)
    texts = [t for v in values for t in styles(v, rnd)]
    d = decoder()
    result = d.decode(pa.array([frame(1, t) for t in texts]), mode="PERMISSIVE")
    assert result.error_count == 0, [(texts[i], result.describe(i)) for i in range(len(texts)) if result.errors[i]]
    for text, got in zip(texts, result.values.to_pylist()):
        expected = spark(SCHEMA, json.loads(text))
        assert compare(expected, got), (text, got, expected)


def test_both_kernel_implementations_agree():
    rnd = random.Random(5)
    texts = [t for v in [VALUES.example() for _ in range(20)] for t in styles(v, rnd)]
    column = pa.array([frame(1, t) for t in texts])
    got = []
    for implementation in ("numba", "python"):
        with kernels.using(implementation):
            got.append(decoder().decode(column, mode="PERMISSIVE").values.to_pylist())
    assert got[0] == got[1]


@settings(max_examples=200, deadline=None)
@given(x=st.floats(allow_nan=False, allow_infinity=False) | st.integers(-2**70, 2**70).map(float),
       form=st.sampled_from(["repr", "e", "g"]))
def test_doubles_are_read_exactly(x, form):
    text = {"repr": repr(x), "e": f"{x:.16e}", "g": f"{x:.17g}"}[form]
    if "inf" in text or "nan" in text:
        return
    d = decoder()
    got = d.decode(pa.array([frame(1, '{"id": 1, "score": %s}' % text)])).values.to_pylist()[0]["score"]
    assert got == float(text) and str(got) == str(float(text))


@pytest.mark.parametrize("text, value", [
    ("9223372036854775807", 2**63 - 1), ("-9223372036854775808", -2**63), ("1.0", 1), ("1.50e1", 15),
    ("1E2", 100), ("-0", 0), ("12300e-2", 123), ("0.0000", 0),
])
def test_integers_in_every_json_form(text, value):
    got = decoder().decode(pa.array([frame(1, '{"id": %s}' % text)])).values.to_pylist()[0]["id"]
    assert got == value


@pytest.mark.parametrize("text, code, field", [
    ('{"id": 9223372036854775808}', codes.E_JSON_NUMBER, "id"),
    ('{"id": 1.5}', codes.E_NOT_AN_INTEGER, "id"),
    ('{"id": "1"}', codes.E_JSON_TYPE, "id"),
    ('{"name": "x"}', codes.E_MISSING_REQUIRED, "id"),
    ('{"id": null}', codes.E_NULL, "id"),
    ('{"id": 1, "tags": ["a", null]}', codes.E_NULL, "tags[]"),
    ('{"id": 1, "day": "2023-02-29"}', codes.E_JSON_DATE, "day"),
    ('{"id": 1, "when": "2024-01-01T00:00:00"}', codes.E_JSON_DATE, "when"),
    ('{"id": 1, "blob": "abc"}', codes.E_JSON_TYPE, "blob"),
    ('{"id": 1, "name": "\\ud800"}', codes.E_BAD_UTF8, "name"),
    ('{"id": 1, "nothing": 0}', codes.E_JSON_TYPE, "nothing"),
    ('{"id": 1,}', codes.E_JSON_SYNTAX, None),
    ('{"id": 1} x', codes.E_TRAILING, None),
    ('{"id": 1, "extra": [1, {"a": }]}', codes.E_JSON_SYNTAX, "extra"),
    ('{"id": 01}', codes.E_JSON_SYNTAX, None),
    ('[1]', codes.E_JSON_TYPE, None),
    ('', codes.E_JSON_SYNTAX, None),
    (b'{"id": 1, "name": "\xff"}', codes.E_BAD_UTF8, "name"),
    ('{"id": 1, "unknown": ' + "[" * 1200 + "]" * 1200 + "}", codes.E_JSON_DEPTH, None),
])
def test_bad_rows(text, code, field):
    good = frame(1, '{"id": 7, "name": "seven"}')
    values = pa.array([good, frame(1, text), good])
    d = decoder()
    with pytest.raises(DecodeError) as info:
        d.decode(values, mode="FAILFAST")
    assert info.value.row == 1 and info.value.reason == codes.message(code), str(info.value)
    if field is not None:
        assert info.value.path == field
    result = d.decode(values, mode="PERMISSIVE")
    assert result.errors.tolist() == [False, True, False] and int(result.error_codes[1]) == code
    rows = result.values.to_pylist()
    assert rows[1] is None and rows[0] == rows[2] and rows[0]["name"] == "seven"


class WrittenNumber(float):
    """A JSON number with a fraction or exponent as ``json.loads`` reads it (a float), whose integer value is the
    text's exact one: a mutation can make an integer field ``-464675142741408e4``, exactly -4646751427414080000, which
    kwire reads as written and ``int(float(...))`` rounds to -4646751427414079488."""

    def __new__(cls, text: str):
        number = super().__new__(cls, text)
        number.text = text
        return number

    def __int__(self) -> int:
        return int(decimal.Decimal(self.text))


def test_mutated_payloads_never_crash_and_agree_with_json_loads():
    rnd = random.Random(99)
    base = [json.dumps(VALUES.example()) for _ in range(40)]
    texts = []
    for _ in range(2000):
        b = bytearray(rnd.choice(base).encode())
        for _ in range(rnd.randint(1, 3)):
            kind = rnd.random()
            if kind < 0.5 and b:
                b[rnd.randrange(len(b))] = rnd.choice(b'{}[]",:0123456789.eE-+ntfaelsrux\\ \xc3\xa9\xff')
            elif kind < 0.75 and b:
                del b[rnd.randrange(len(b)):]
            else:
                at = rnd.randrange(len(b) + 1)
                b[at:at] = bytes(rnd.choice(b'{}[]",: 0123456789') for _ in range(rnd.randint(1, 3)))
        texts.append(bytes(b))
    d = decoder()
    result = d.decode(pa.array([frame(1, t) for t in texts]), mode="PERMISSIVE")
    accepted = 0
    for text, got, bad in zip(texts, result.values.to_pylist(), result.errors.tolist()):
        if bad:
            continue
        accepted += 1
        assert compare(spark(SCHEMA, json.loads(text, parse_float=WrittenNumber)), got), (text, got)
    assert accepted > 100 and result.error_count > 500


pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.NonInteractiveExampleWarning")


@pytest.mark.parametrize("text", [
    "2.2250738585072011e-308", "2.2250738585072012e-308", "4.9e-324", "2.4703282292062327e-324", "1e-400", "1e400",
    "-0.0", "9007199254740993", "0.1000000000000000055511151231257827021181583404541015625",
    "179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953"
    "514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236"
    "90322294816580855933212334827479782620414472316873817718091929988125040402618412485836.8",
    "7.006492321624085e-46", "123456789012345678901234567890e-20",
])
def test_hard_doubles(text):
    """Near the smallest normal and subnormal doubles, halfway cases, long mantissas (handed to Python's float),
    overflow and underflow: the nearest double, as float() rounds it."""
    got = decoder().decode(pa.array([frame(1, '{"id": 1, "score": %s}' % text)])).values.to_pylist()[0]["score"]
    expected = float(text)
    assert got == expected and str(got) == str(expected)
