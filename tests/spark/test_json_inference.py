"""JSON schema inference against its oracle, Spark's own ``spark.read.json`` on the same strings.

Each Spark job here infers many cases at once: every case's documents are wrapped as
``{"g<case>": <document>, "h<case>_<n>": 1}``, so cases cannot merge into one another, and the marker field
``h..`` is in Spark's schema exactly when that document parsed (a malformed one adds only the corrupt-record
column). kwire infers the same wrapped strings; the two StructTypes must be equal. Cases about the top level
(scalars, arrays, nulls, modes) cannot be wrapped and take a job each.
"""

from __future__ import annotations

import functools
import json

import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from spark_kwire.formats.json.inference.infer import JsonInferenceError, infer_schema
from spark_kwire.formats.json.inference.render import spark_ddl, spark_json
from spark_kwire.spark.typed.spark_types import spark_type

pytestmark = pytest.mark.timeout(300)


def spark_inferred(spark, docs, options=None):
    """The schema spark.read.json infers from ``docs`` (str, or bytes given to Spark as CAST(binary AS
    STRING), which keeps invalid UTF-8), in one partition so that merges happen in the documents' order."""
    rows = [(d.hex(), True) if isinstance(d, bytes) else (d, False) for d in docs]
    frame = spark.createDataFrame(rows, "v string, hex boolean").coalesce(1)
    frame = frame.select(F.when(F.col("hex"), F.unhex("v").cast("string")).otherwise(F.col("v")).alias("v"))
    jvm = spark.sparkContext._jvm
    strings = getattr(frame._jdf, "as")(jvm.org.apache.spark.sql.Encoders.STRING())
    reader = spark._jsparkSession.read()
    for key, value in (options or {}).items():
        reader = reader.option(key, str(value).lower() if isinstance(value, bool) else str(value))
    return DataFrame(reader.json(strings), spark).schema


def kwire_inferred(docs, options=None, **session):
    return spark_type(infer_schema(docs, options, **session))


@functools.lru_cache(maxsize=None)
def lenient_surrogates(spark) -> bool:
    """Whether this Spark's Jackson accepts a lone escaped surrogate in a field name (2.18, Spark 4.0) or
    refuses it (2.21, Spark 4.1+): the one way the releases' inference differs."""
    parser = spark.sparkContext._jvm.com.fasterxml.jackson.core.JsonFactory().createParser(bytearray(b'{"\\ud800":1}'))
    try:
        parser.nextToken()
        parser.nextToken()
        return True
    except Exception:  # noqa: BLE001 - py4j's error for the JsonParseException
        return False


def assert_same(spark, docs, options=None, **session):
    session.setdefault("lenient_surrogates", lenient_surrogates(spark))
    expected = spark_inferred(spark, docs, options)
    actual = kwire_inferred(docs, options, **session)
    assert actual == expected, f"\nkwire: {actual.simpleString()}\nspark: {expected.simpleString()}"
    return expected


def wrapped(cases) -> list:
    """Each case (a list of JSON value texts, str or bytes) as documents that keep it apart from the others."""
    docs = []
    for k, values in enumerate(cases):
        for n, value in enumerate(values):
            if isinstance(value, bytes):
                docs.append(b'{"g%d":' % k + value + b',"h%d_%d":1}' % (k, n))
            else:
                docs.append(f'{{"g{k}":{value},"h{k}_{n}":1}}')
    return docs


def single(*values) -> list:
    return [[v] for v in values]


NUMBERS = single(
    "0", "-0", "1", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
    "1e400", "1E5", "1.0", "-0.0", "0e0", "1e-400", "1.5e+3", "1" * 38, "1" * 39, "1" * 1000, "1" * 1001,
    "0." + "1" * 998, "0." + "1" * 999, "1.5e" + "1" * 997, "NaN", "Infinity", "-Infinity", "+Infinity", "+INF",
    "-INF", "INF", "+NaN", "-NaN", "nan", "+1", "007", "-007", "00.5", "00", "-", "1.", ".5", "1e", "1e+", "--1",
    "1.5.5", "-.5", "0x10", "1_000", "١",
)
LITERALS_AND_STRINGS = single(
    "true", "false", "null", "tru", "True", "nul", "nullx", "true1", "null_", "false$", "null/**/", "NaNx",
    '""', '"x"', r'"\u00e9\ud83d\ude00"', r'"\ud800"', r'"\udc00x"', r'"\q"', '"x\ty"', r'"it\'s"', r'"\u12G4"',
    '"unterminated', r'"\/\b\f\n\r\t\"\\"', "'b'", r"'it\'s'", "'x\"y'", "''", "'x\ty'", '"\x7f"', '"\u2028"',
    '"' + "x" * 5000 + '"',
)
CONTAINERS = single(
    "[]", "[null]", '[1, "x"]', "[1, 2.5]", '[1, {"b":1}]', "[[1], [2.5]]", "[[], [1]]", '[{}, {"b":1}]',
    "[null, [null]]", "[1,]", "[,1]", "[1 2]", "[1}", "{}", '{"":1}', '{"":1,"b":2}', '{"a":{}}', '{"a":[]}',
    '{"a":[{}]}', '{"a":[[]]}', '{"a":1,"a":"x"}', '{"a":1,"A":2}', r'{"\u0041":1}', r'{"\ud800":1}',
    r'{"\udc00":1}', r'{"\ud800\u0041":1}', r'{"\ud83d\ude00":1}', r'{"\uff00":1,"\ud83d\ude00":2}',
    "{'a':1}", "{'':1}", "{a:1}", '{"a":1,}', '{"a" 1}', '{"a":1]', '{"a"::1}', '{"a":1 "b":2}',
    '{"a" : 1 ,\r\n "b" :\t2}', '{"a\tb":1}', '{"a":{"b":{"c":{"d":[{"e":[1,{"f":null}]}]}}}}',
    '{"a":"x", "b":[{"c":1},{"d":"y"}], "e":{"f":[1.5, 2]}}', '{"z":1, "y":2, "Y":3, "_":4, "1":5, "é":6}',
)
MERGES = [
    ["1", "1.5"], ["1", '"x"'], ["true", "1"], ['{"b":1}', '"x"'], ["1", "[1]"], ["99999999999999999999", "1"],
    ["99999999999999999999", "1.5"], ["99999999999999999999", '"x"'], ['{"b":{"a":1}}', '{"b":{"A":2}}'],
    ['{"a":1}', '{"A":"x"}'], ['{"b":[{"a":1}]}', '{"b":[{"A":2.5}]}'], ['{"b":null}', '{"b":1}'],
    ["null", "[1]"], ['""', "2"], ["[]", '[{"a":1}]'], ['{"a":[1]}', '{"a":[[1]]}'], ['{"a":{"b":1}}', '{"a":{}}'],
    ['{"A":1,"a":2}', '{"a":1.5,"A":2}'], ['{"a":1,"b":2}', '{"A":1,"b":"x"}'], ["[1]", "[1.5]", '["x"]'],
    ['{"x":true}', '{"y":false}', '{"x":null,"y":[]}'],
]


@pytest.mark.parametrize("options, cases", [
    pytest.param({}, NUMBERS + LITERALS_AND_STRINGS + CONTAINERS + MERGES, id="defaults"),
    pytest.param({"prefersDecimal": True}, single(
        "1.0", "1.50", "0.0", "-0.0", "0.001", "0e0", "1.5e1", "1.0e-3", "1e-400", "12.5e1", "0." + "1" * 40, "1" * 39,
        "NaN", '"1,234.5"', '"0.00"', '".5"', '"5."', '"1e5"', '"+5"', '"00012"', '"0.001"', '"1.50"', '" 12"',
        '"NaN"', '","', '"1,,2"', '"١٢"', '"0"', '"1.5e1"', '"-1.5E-1"', '"1" ', '"' + "9" * 39 + '"',
        '"1e-2147483648"',
        '"1e99999999999"', '"x1"', '"--1"', '"1.2.3"', '"Infinity"',
    ) + [["1", "1.5"], ["1.5", "1.25"], ["1" * 38, "0.5"], ["1.5", "9" * 22], ["[1, " + "9" * 22 + "]"],
         ['"1.5"', "2"], ['"1.5"', '"x"'], ["1.5", '"2.25"'], ["1.5", "2.5"]], id="prefersDecimal"),
    pytest.param({"primitivesAsString": True}, single(
        "1", "1.5", "true", "NaN", "null", '""', '"x"', "[1, true]", '{"a":[1.5]}', "1" * 1001, "9" * 30,
    ), id="primitivesAsString"),
    pytest.param({"allowComments": True, "allowUnquotedFieldNames": True, "allowNumericLeadingZeros": True,
                  "allowBackslashEscapingAnyCharacter": True, "allowUnquotedControlChars": True}, single(
        "1 /* c */", "1 // c\n", "/* c */ 1", "1 /* c", "1 /", "1 /x", "1 # c\n", "1 /* \x01 */", "1 // \x01\n",
        "1 /* \t\n\r */", "/**/ /**/ 2", '{a:1}', '{a-b@c#d*e+f$g_h:1}', '{1a:1}', '{é:1}', '{ª:1}', '{a b:1}',
        '{a.b:1}', '{a/*c*/:1}', '{$:1}', '{"a":1, b:2}', "{a\x7f:1}", "{\u00b5:1}", "{a\u00a0:1}", "007", "-007",
        "00.5", "000", "0001.5e1", r'"\q"', r'"\é"', r'"\'"', '"x\ty"', "'x\ty'", "{'a\tb':1}", '{"a\x01b":1}',
        "[1, /* c */ 2]", '{"a" /* c */ : /* d */ 1}',
    ), id="lenient"),
    pytest.param({"allowSingleQuotes": False, "allowNonNumericNumbers": False}, single(
        "'b'", r'"it\'s"', "{'a':1}", "NaN", "-Infinity", "+INF", '"NaN"', "1",
    ), id="strict"),
    pytest.param({"inferTimestamp": True}, single(*[json.dumps(s) for s in [
        "2020", "2020-01", "2020-01-01", "2020-1-1", "2020-01-01T00:00:00Z", "2020-01-01 00:00:00", "2020-01-01T00",
        "12:00", "T12:00", "T12", "1:2:3", "2020-01-01T00:00:00+01:00", "2020-01-01T00:00:00 PST",
        "2020-01-01T00:00:00America/New_York", "+2020-01-01", "12020-01-01", " 2020-01-01 ", "2020-13-01",
        "2020-02-30", "2020-02-29", "2019-02-29", "1", "99", "-2020", "2020-01-01T25:00:00", "2020-01-01T00:00Z",
        "2020-01-01T00:00:00UTC+1", "2020-01-01T00:00:00+1:5", "2020-01-01T00:00:00+0130", "2020-01-01T00:00:00 pst",
        "2020-01-01T00:00:00 Mars/Base", "2020-01-01T00:00:00+18:01", "294247-01-10T04:00:54Z",
        "294247-01-10T04:00:55Z", "-290308-12-21T19:59:05Z", "-290308-12-21T19:59:06Z", " T12:00", "24:00:00",
        "2020-01-01T00:00:00.123456789", "2020-01-01Tabc", "2020-01-01\u00a0", "0000-01-01", ""]]) + [
        ['"2020-01-01"', '"12:00:00"'], ['"2020-01-01"', "1"], ['"2020-01-01"', '""'], ['"2020"', '"x"']],
        id="inferTimestamp"),
    pytest.param({"inferTimestamp": True, "timeZone": "America/Los_Angeles"}, single(
        '"294247-01-10T04:00:54"', '"294247-01-09T20:00:54"', '"-290308-12-21T19:59:06"', '"2020-06-01"'),
        id="inferTimestamp-timeZone"),
    pytest.param({"dropFieldIfAllNull": True}, single(
        "null", "[]", "[[]]", "{}", '{"b":null}', '{"b":[]}', '[{"b":null}]', '{"a":{"b":[]}, "c":1}', '""',
    ) + [["null", "1"], ["[]", "[1]"]], id="dropFieldIfAllNull"),
    pytest.param({"maxNumLen": 10, "maxStringLen": 10, "maxNestingDepth": 5}, single(
        "1" * 10, "1" * 11, "-" + "1" * 10, "1." + "1" * 9, "1." + "1" * 8, "1.1e" + "1" * 8, "1.1e" + "1" * 7,
        "0" * 12, '"' + "x" * 10 + '"', '"' + "x" * 11 + '"', '"' + r"\u0041" * 11 + '"', '"' + "😀" * 5 + '"',
        '"' + "😀" * 6 + '"', '{"' + "x" * 20 + '":1}', "[[[1]]]", "[[[[1]]]]", '{"a":{"b":{"c":1}}}',
        '{"a":{"b":{"c":{"d":1}}}}',
    ), id="limits"),
    pytest.param({"maxStringLen": 10}, single(
        "1.11111111", "1.111111111", "-1.1111111", "-1.11111111", "1e1111111", "1e11111111", "1234567890123456789",
        "9223372036854775808", "-922337203", "12345678901234567890", "1" * 30, "true",
    ), id="maxStringLen-numbers"),
])
def test_nested_values_as_spark_infers_them(spark, options, cases):
    assert_same(spark, wrapped(cases), options)


def test_invalid_utf8_as_spark_reads_it(spark):
    """Kafka values are bytes: Spark reads CAST(value AS STRING) with Jackson's UTF-8 rules, which refuse a
    stray byte where the parse reaches it and accept an overlong form."""
    cases = single(b'"\xff"', b'"a\xc3"', b'"\xc0\x80"', b'"\xed\xa0\x80"', b'"\xf4\x90\x80\x80"', b'"\xe9t\xe9"',
                   b'{"a\xff":1}', b'{"\xc3\xa9":1}', b'1/*\xff*/', b'"ok"')
    docs = wrapped(cases) + [b'{"tail":1}\xff', b'{"bom":1}', b'\xef\xbb\xbf{"bom2":1}']
    assert_same(spark, docs, {"allowComments": True})


@pytest.mark.parametrize("docs", [
    pytest.param(['{"z":1}', '""', "null", "[]", "[null]", "[[]]", "   ", "", '\ufeff{"y":1}', '{"x":1} xyz',
                  '{"w":1}}', '[{"a":1},{"b":2}]', "null ,", '""x', "[{}]", '[null, ""]', '{"v":1}{"u":2}',
                  "null:", "\n", "null\t"], id="no-record-or-objects"),
    pytest.param(["5"], id="number"), pytest.param(['"abc"'], id="string"), pytest.param(["nullx"], id="nullx"),
    pytest.param(["[1,2]", '{"z":1}'], id="array-of-numbers"), pytest.param(['[{"a":1},5]'], id="mixed-array"),
    pytest.param(["5x"], id="number-then-letter"), pytest.param(["5,"], id="number-then-comma"),
    pytest.param(["{x", '{"_corrupt_record":1}'], id="malformed-and-field-of-that-name"),
    pytest.param(["\x0c{}"], id="form-feed"), pytest.param(['["a"]'], id="array-of-strings"),
])
def test_top_level_as_spark_reads_it(spark, docs):
    assert_same(spark, docs)


@pytest.mark.parametrize("options, docs", [
    ({"mode": "DROPMALFORMED"}, ['{"a":1}', "{x", "5", "[1,2]", '{"a":[1,2']),
    ({"mode": "dropmalformed"}, ["{x"]),
    ({"columnNameOfCorruptRecord": "bad"}, ['{"a":1}', "{x"]),
    ({"columnNameOfCorruptRecord": "a"}, ['{"a":1}', "{x"]),
    ({"columnNameOfCorruptRecord": ""}, ['{"a":1}', "{x"]),
    ({"mode": "FAILFAST"}, ['{"a":1}', '{"b":[1.5]}']),
])
def test_modes_as_spark(spark, options, docs):
    assert_same(spark, docs, options)


@pytest.mark.parametrize("docs, where", [(['{"a":1}', "{x"], 1), (['{"a":1}', "null", "5"], 2)])
def test_failfast_fails_where_spark_fails(spark, docs, where):
    with pytest.raises(Exception, match="FAILFAST|MALFORMED|INVALID_JSON_RECORD_TYPE"):
        spark_inferred(spark, docs, {"mode": "FAILFAST"})
    with pytest.raises(JsonInferenceError) as failure:
        infer_schema(docs, {"mode": "FAILFAST"})
    assert failure.value.row == where


def test_prefers_decimal_fails_where_spark_fails(spark):
    """A float whose BigDecimal has a negative scale (1E5) makes Spark's inference fail as a whole with
    prefersDecimal; kwire refuses it too, saying why."""
    docs = ['{"a":1.5}', '{"a":1E5}']
    with pytest.raises(Exception, match="NEGATIVE_SCALE"):
        spark_inferred(spark, docs, {"prefersDecimal": True})
    with pytest.raises(JsonInferenceError, match="negative decimal scale"):
        infer_schema(docs, {"prefersDecimal": True})


@pytest.mark.parametrize("conf, session, docs", [
    ({"spark.sql.timestampType": "TIMESTAMP_NTZ"}, {"timestamp_ntz_default": True},
     wrapped(single('"2020-01-01"', '"2020-01-01T00:00:00Z"', '"12:00"', '"2020-01-01Z"')
             + [['"2020-01-01T00:00:00Z"', '"2020-01-01"']])),
    ({"spark.sql.caseSensitive": "true"}, {"case_sensitive": True},
     wrapped([['{"b":{"a":1}}', '{"b":{"A":2}}'], ['{"a":1,"A":2}']])),
])
def test_session_settings_as_spark(spark, conf, session, docs):
    for key, value in conf.items():
        spark.conf.set(key, value)
    try:
        assert_same(spark, docs, {"inferTimestamp": True}, **session)
    finally:
        for key in conf:
            spark.conf.unset(key)


def test_time_type_as_spark(spark):
    from spark_kwire.spark.capabilities import TIME_TYPE

    if not TIME_TYPE:
        pytest.skip(f"this PySpark has no TIME type ({TIME_TYPE.since})")
    spark.conf.set("spark.sql.timeType.enabled", "true")
    try:
        docs = wrapped(single(*[json.dumps(s) for s in ["12:00:00", "1:2:3", "T12", "12:00:00Z", "23:59:60",
                                                         " 12:00 ", "2020-01-01"]])
                       + [['"12:00:00"', '"2020-01-01"'], ['"12:00"', '"13:00"']])
        assert_same(spark, docs, {"inferTimestamp": True}, time_type=True)
    finally:
        spark.conf.unset("spark.sql.timeType.enabled")


def test_rendered_schema_is_what_spark_reads(spark):
    """The DDL and StructType JSON kwire writes for an inferred schema read back, in Spark, as that schema."""
    docs = ['{"a":1,"b":[1.5],"c":{"d":"x","e":[{"f":true}]},"g":99999999999999999999,"we`ird name":null}',
            '{"a":1,"a":"dup","h":"2020-01-01T00:00:00Z"}']
    inferred = infer_schema(docs, {"inferTimestamp": True})
    expected = assert_same(spark, docs, {"inferTimestamp": True})
    jvm = spark.sparkContext._jvm
    from_ddl = jvm.org.apache.spark.sql.types.StructType.fromDDL(spark_ddl(inferred))
    assert json.loads(from_ddl.json()) == json.loads(expected.json())
    jvm_json = jvm.org.apache.spark.sql.types.DataType.fromJson(expected.json()).json()  # Spark's own rendering
    assert spark_json(inferred) == jvm_json
