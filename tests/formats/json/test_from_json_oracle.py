"""kwire's plain JSON decode against Spark's ``from_json`` (PERMISSIVE, the corrupt-record field in the schema) on
the same texts: every Spark type, nesting, nulls, missing and unknown fields, values of another type (partial
rows), numbers at their edges, Spark's date and timestamp forms, unicode escapes and surrogate pairs, and malformed
text. Rows are compared as Spark's ``to_json`` prints them (``oracle.py``)."""

from __future__ import annotations

import json

import pytest

from tests.formats.json.oracle import differences

pytestmark = pytest.mark.timeout(900)

CASES = [
    # every type, well-formed
    '{"a": 1, "b": "x", "c": 1.5, "d": 1.005, "e": true, "f": [1, null, 3], "g": {"k": 2, "n": null}, '
    '"h": {"x": 1, "y": "z"}, "i": "2024-01-01T10:00:00Z", "j": "2024-01-05", "k": "aGk=", "l": 0.1, '
    '"m": -9223372036854775808, "n": -128, "o": [{"x": 1}, null, {}], "p": "2024-01-01 10:00:00", "q": 32767, '
    '"r": 1234567890123456789012345678.0123456789}',
    '{}', '{"a": null, "b": null, "h": null, "f": null, "g": {}}', '{"A": 1, "zz": [1, {"a": 2}], "a": 3}',
    # a value of another type: that field null, the rest kept
    '{"a": "1"}', '{"a": 1.0}', '{"a": 1e2}', '{"a": 2147483648}', '{"q": 32768}', '{"n": 128}', '{"n": 256}',
    '{"m": 9223372036854775808}', '{"e": "true"}', '{"e": 1}', '{"k": 5}', '{"j": 1}', '{"i": 1.5}', '{"p": 5}',
    '{"f": [1, "x", 3], "a": 5}', '{"f": 5, "a": 5}', '{"f": [[1]], "a": 2}', '{"g": {"k": "x", "a": 2}, "a": 5}',
    '{"g": {"k": 1, "k": 2}}', '{"h": {"x": "bad", "y": "ok"}, "a": 5}', '{"h": 5, "a": 5}',
    '{"o": [{"x": 1}, {"x": "bad"}]}', '{"o": [{"x": 1}, {"x": "bad"}, 5]}', '{"a": "x", "a": 3}',
    # strings: any other value as JSON text, as Jackson writes it again
    '{"b": 123}', '{"b": -0}', '{"b": 1.50}', '{"b": 1e10}', '{"b": 2.5e-7}',
    '{"b": {"x" : 1, "y": [1, 2.50, "\\u00e9\\/", "\\ud83d", "\\udc00x", "😀"]}}',
    '{"b": [1,  2, true, null]}', '{"b": true}', '{"b": 12345678901234567890}', '{"b": 0.1}', '{"b": 1e400}',
    # doubles, floats, decimals
    '{"c": "NaN"}', '{"c": NaN}', '{"c": "Infinity"}', '{"c": Infinity}', '{"c": -Infinity}', '{"c": "+INF"}',
    '{"c": +INF}', '{"c": -INF}', '{"c": "-INF"}', '{"c": +Infinity}', '{"c": 1e400}', '{"c": ""}', '{"c": "1.5"}',
    '{"c": 12345678901234567890123}', '{"c": 1E5}', '{"c": -0.0}', '{"c": 0.1e-400}', '{"c": 2.2250738585072011e-308}',
    '{"c": 9007199254740993}', '{"l": 3.4e39}', '{"l": "NaN"}', '{"l": 1.00000017881393432617187499}',
    '{"d": 1.005}', '{"d": 1.004}', '{"d": 999.995}', '{"d": -1.005}', '{"d": 0.0000001}', '{"d": "12"}',
    '{"d": "1e2"}', '{"d": " 12"}', '{"d": "1,234.5"}', '{"d": 1000}', '{"d": 1e2}', '{"d": NaN}',
    '{"r": 12345678901234567890123456789}', '{"r": 1234567890123456789012345678.01234567895}', '{"r": -1e-11}',
    # timestamps and dates as Spark reads them by default
    '{"i": "2024-01-01 10:00:00"}', '{"i": "2024-01-01"}', '{"i": "2024-1-1 1:2:3.45"}', '{"i": "2024"}',
    '{"i": "2024-01-01T10:00:00.123456789+01:00"}', '{"i": "2024-01-01T10:00:00 America/New_York"}',
    '{"i": 1700000000}', '{"i": 99999999999999999}', '{"i": "2024-01-01T10:00Z"}',
    '{"i": "2024-01-01T10:00:00GMT+01:00"}',
    '{"i": "2024-01-01T10:00:00UTC"}', '{"i": "2024-01-01T10:00:00 PST"}', '{"i": "  2024-01-01 "}',
    '{"i": "2024-01-01T10:00:00+1:00"}', '{"i": "2024-01-01T10:00:00+01"}', '{"i": "2024-01-01T10:00:00+0130"}',
    '{"i": "2024-01-01T10:00:00.5Z"}', '{"i": "2024-01-01T25:00:00"}', '{"i": "2024-02-30T00:00:00"}',
    '{"i": "-2024-01-01T00:00:00Z"}', '{"i": "2024-01-01T10:00:00 Europe/Nowhere"}', '{"i": ""}',
    '{"j": "2024-1-1"}', '{"j": "2024"}', '{"j": "2024-01"}', '{"j": "2024-01-01T10:00"}', '{"j": "2024-01-01 xyz"}',
    '{"j": "18000"}', '{"j": "20240101"}', '{"j": "123"}', '{"j": "+2024-01-01"}', '{"j": "2024-02-30"}',
    '{"p": "2024-01-01T10:00:00Z"}', '{"p": "2024-01-01T10:00:00.123"}',
    # binary
    '{"k": "aGVsbG8="}', '{"k": "aGVsbG8"}', '{"k": "aGVs bG8="}', '{"k": "!!"}', '{"k": ""}',
    # unicode
    '{"b": "\\ud83d\\ude00"}', '{"b": "\\ud83d"}', '{"b": "\\u00e9\\u0000"}', '{"b": "é😀"}', '{"b": "a\\"b\\\\c"}',
    '{"\\u0061": 7}',
    # malformed, or not an object: a row of nulls, the text in the corrupt-record field
    '{"a": 1', '{"a": tru}', '{"a": 1,}', '{"b": "x\\qy", "a": 2}', '{"b": "x', '[{"a":1}]', '[]', '5', '"str"',
    'null', '', '   ', '{"a": 1} garbage', '{a: 1}', "{'a': 1}", '{"a": 01}', '{"a": -01}', '{"a": 1} {"a": 2}',
    '{"a": 1, "a": 2}', '{"a":1 /* c */}', '{"a": -}', '{"a": 1.}', '{"a": .5}', '{"a": +1}', '{"c": INF}',
    json.dumps({"b": "a\tb"}).replace("\\t", "\t"), '{"zz": tru, "a": 1}', '{"zz": "x\\qy", "a": 1}',
    '{"_corrupt_record": "x", "a": 1}', None,
]


def test_rows_equal_from_json(spark):
    assert differences(spark, CASES) == []


OPTION_CASES = [
    "{a: 1, 'b': 'x', /* c */ \"c\": 2.5, // d\n \"f\": [01, 007]}", "{\"a\": 007, \"c\": NaN}",
    "{'a': 1}", "{\"c\": Infinity, \"l\": -Infinity}", '{"a": 1 /* open', '{"a": 1} // done',
]


@pytest.mark.parametrize("options", [
    {"allowComments": "true", "allowUnquotedFieldNames": "true", "allowNumericLeadingZeros": "true"},
    {"allowSingleQuotes": "false", "allowNonNumericNumbers": "false"},
    {"allowComments": "false", "allowUnquotedFieldNames": "false"},
])
def test_parser_options_are_from_jsons(spark, options):
    assert differences(spark, OPTION_CASES, options=options) == []


TIME_CASES = ['{"i": "01/05/2024 12:30:15.5 +0200", "j": "2024/5/1"}',
              '{"i": "01/05/2024 12:30:15 Z", "j": "1 May 2024"}',
              '{"i": "31/02/2024 12:30:15 +0200"}', '{"i": "01/05/2024 12:30:15", "j": "2024-05-01"}',
              '{"i": "1/5/2024 12:30:15 +0200", "j": "2024/05/01"}', '{"i": "2024-05-01T10:00:00"}']


@pytest.mark.parametrize("options", [
    {"timestampFormat": "dd/MM/yyyy HH:mm:ss[.SSS] XX", "dateFormat": "yyyy/M/d"},
    {"timestampFormat": "dd/MM/yyyy HH:mm:ss[.SSS][ X]", "dateFormat": "d MMM yyyy"},
    {"timeZone": "America/New_York"}, {"timeZone": "+05:30"}, {"timeZone": "Australia/Lord_Howe"},
])
def test_time_options_are_from_jsons(spark, options):
    cases = TIME_CASES + ['{"i": "2024-03-10 02:30:00", "p": "2024-03-10 02:30:00"}',  # in New York's gap
                          '{"i": "2024-11-03 01:30:00"}', '{"i": "1850-01-01 00:00:00"}',
                          '{"i": "2300-07-01 12:00:00"}']
    assert differences(spark, cases, options=options) == []
