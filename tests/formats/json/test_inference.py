"""JSON schema inference without Spark: the rules, inputs, options and limits.

The expected schemas are what Spark 4.3's spark.read.json infers from the same documents (checked there by
tests/spark/test_json_inference.py, which compares the two on these and many more); here they guard the rules
where Spark is not at hand, and the cases Spark itself cannot run (deep nesting overflows its stack).
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from spark_kwire.formats.errors import SchemaError
from spark_kwire.formats.json.inference.infer import JsonInferenceError, infer_schema, infer_type
from spark_kwire.formats.json.options import JsonOptions
from spark_kwire.formats.json.inference.render import spark_ddl, spark_json
from spark_kwire.formats.json.inference.text import decimal_text, decode
from spark_kwire.formats.json.inference.types import describe


def inferred(docs, **options) -> str:
    return describe(infer_type(docs, JsonOptions.for_inference(options)))


@pytest.mark.parametrize("docs, options, expected", [
    (['{"b":1,"a":"x"}'], {}, "struct<a:string,b:bigint>"),
    (['{"a":1}', '{"a":1.5}'], {}, "struct<a:double>"),
    (['{"a":1}', '{"a":"x"}'], {}, "struct<a:string>"),
    (['{"a":true}', '{"a":1}'], {}, "struct<a:string>"),
    (['{"a":9223372036854775808}'], {}, "struct<a:decimal(19,0)>"),
    (['{"a":99999999999999999999}', '{"a":1}'], {}, "struct<a:decimal(20,0)>"),
    (['{"a":99999999999999999999}', '{"a":1.5}'], {}, "struct<a:double>"),
    (['{"a":' + "1" * 39 + "}"], {}, "struct<a:double>"),
    (['{"a":null}', '{"b":[]}', '{"c":{}}', '{"d":""}'], {}, "struct<a:string,b:array<string>,d:string>"),
    (['{"a":null}', '{"b":[]}'], {"dropFieldIfAllNull": "true"}, "struct<>"),
    (['{"a":[1, 2.5]}', '{"b":[1, "x"]}', '{"c":[1, {"d":1}]}'], {},
     "struct<a:array<double>,b:array<string>,c:array<string>>"),
    (['{"a":1,"a":"x"}'], {}, "struct<a:bigint,a:string>"),
    (['{"a":1,"A":2}'], {}, "struct<A:bigint,a:bigint>"),
    (['{"b":{"a":1}}', '{"b":{"A":2}}'], {}, "struct<b:struct<a:bigint>>"),
    (['{"\\uff00":1,"\\ud83d\\ude00":2}'], {}, "struct<\U0001F600:bigint,\uff00:bigint>"),
    (['{"a":1.50}', '{"b":"1,234.5"}', '{"c":"0.00"}'], {"prefersDecimal": True},
     "struct<a:decimal(3,2),b:decimal(5,1),c:string>"),
    (['{"a":1}', '{"a":1.5}'], {"prefersDecimal": True}, "struct<a:decimal(21,1)>"),
    (['{"a":1, "b":true, "c":NaN}'], {"primitivesAsString": True}, "struct<a:string,b:string,c:string>"),
    (['{"a":"2020-01-01"}', '{"b":"12:00"}', '{"c":"2020-13-01"}'], {"inferTimestamp": True},
     "struct<a:timestamp,b:timestamp,c:string>"),
    (["{'a':'b'}"], {}, "struct<a:string>"),
    (["{'a':'b'}"], {"allowSingleQuotes": "false"}, "struct<_corrupt_record:string>"),
    (['{a:1}', '{"b":007}', '{"c":1 /* x */}'], {"allowUnquotedFieldNames": True, "allowNumericLeadingZeros": True,
                                                "allowComments": True}, "struct<a:bigint,b:bigint,c:bigint>"),
    (['{"a":NaN}'], {"allowNonNumericNumbers": False}, "struct<_corrupt_record:string>"),
    (['{"a":"x\ty"}'], {}, "struct<_corrupt_record:string>"),
    (['{"a":"x\ty"}'], {"allowUnquotedControlChars": True}, "struct<a:string>"),
])
def test_rules(docs, options, expected):
    assert inferred(docs, **options) == expected


@pytest.mark.parametrize("docs, expected", [
    (["5", '{"z":1}'], "struct<_corrupt_record:string,z:bigint>"),
    (['[{"a":1},{"b":2}]', '{"z":1}'], "struct<a:bigint,b:bigint,z:bigint>"),
    (['[{"a":1},5]'], "struct<_corrupt_record:string>"),
    (["null", '""', "[]", "  ", "", '{"z":1} trailing', "\ufeff[[]]"], "struct<z:bigint>"),
    (["nullx"], "struct<_corrupt_record:string>"),
    (['{"a":1}', "{x"], "struct<_corrupt_record:string,a:bigint>"),
])
def test_top_level(docs, expected):
    assert inferred(docs) == expected


def test_modes():
    docs = ['{"a":1}', "{x", "5"]
    assert inferred(docs, mode="DROPMALFORMED") == "struct<a:bigint>"
    assert inferred(docs, columnNameOfCorruptRecord="bad") == "struct<a:bigint,bad:string>"
    with pytest.raises(JsonInferenceError, match="record 1: malformed") as failure:
        infer_schema(docs, {"mode": "failfast"})
    assert failure.value.row == 1
    with pytest.raises(JsonInferenceError, match="record 1: the record is a JSON bigint") as failure:
        infer_schema(['{"a":1}', "5"], {"mode": "FAILFAST"})
    assert failure.value.row == 1


def test_inputs_of_every_kind_give_the_same_schema():
    """Binary or string arrays, chunked or not, large or not, and Python sequences; nulls (Kafka tombstones)
    are no documents."""
    texts = ['{"a":1}', None, '{"b":"x"}']
    expected = pa.struct([pa.field("a", pa.int64()), pa.field("b", pa.string())])
    encoded = [t.encode() if t else None for t in texts]
    for values in (texts, encoded, pa.array(texts), pa.array(texts, pa.large_string()),
                   pa.array(encoded, pa.binary()),
                   pa.chunked_array([pa.array(texts[:1]), pa.array(texts[1:])])):
        assert infer_schema(values) == expected
    assert infer_schema([None, None]) == pa.struct([])
    with pytest.raises(TypeError, match="binary or string array"):
        infer_schema(pa.array([1, 2]))


def test_arrow_types_are_those_spark_converts_to_the_inferred_types():
    docs = ['{"l":1,"d":1.5,"s":"x","b":true,"m":1.25,"t":"2020-01-01","a":[[1]],"r":{"x":null}}']
    schema = infer_schema(docs, {"prefersDecimal": True, "inferTimestamp": True})
    item = pa.field("element", pa.int64())
    assert schema == pa.struct([
        pa.field("a", pa.list_(pa.field("element", pa.list_(item)))), pa.field("b", pa.bool_()),
        pa.field("d", pa.decimal128(2, 1)), pa.field("l", pa.int64()), pa.field("m", pa.decimal128(3, 2)),
        pa.field("r", pa.struct([pa.field("x", pa.string())])), pa.field("s", pa.string()),
        pa.field("t", pa.timestamp("us", tz="UTC"))])
    assert infer_schema(['{"t":"2020-01-01"}'], {"inferTimestamp": True}, timestamp_ntz_default=True) == \
        pa.struct([pa.field("t", pa.timestamp("us"))])
    assert infer_schema(['{"t":"12:00"}'], {"inferTimestamp": True}, time_type=True) == \
        pa.struct([pa.field("t", pa.time64("us"))])


def test_nesting_up_to_the_limit_and_no_further():
    """Jackson allows maxNestingDepth levels (1000); a document deeper than Python's stack allows still parses
    (no RecursionError), and types too deep to merge are refused with a clear message. Spark itself overflows
    its stack a few hundred levels down, so these are not compared with it."""
    assert inferred(['{"a":' * 100 + "1" + "}" * 100]).count("struct<a:") == 100
    assert inferred(['{"a":' * 1001 + "1" + "}" * 1001]) == "struct<_corrupt_record:string>"
    assert inferred(["[" * 5000 + "]" * 5000]) == "struct<_corrupt_record:string>"
    assert inferred(['{"a":' * 6 + "1" + "}" * 6], maxNestingDepth=5) == "struct<_corrupt_record:string>"
    assert inferred(['{"a":' * 5 + "1" + "}" * 5], maxNestingDepth=5).count("struct<a:") == 5
    with pytest.raises(JsonInferenceError, match="too deeply"):
        infer_schema(['{"a":' * 999 + "1" + "}" * 999])


def test_number_and_string_limits():
    assert inferred(['{"a":' + "1" * 1000 + "}"]) == "struct<a:double>"
    assert inferred(['{"a":' + "1" * 1001 + "}"]) == "struct<_corrupt_record:string>"
    assert inferred(['{"a":1.111111111}'], maxNumLen=10) == "struct<a:double>"
    assert inferred(['{"a":1.1111111111}'], maxNumLen=10) == "struct<_corrupt_record:string>"
    assert inferred(['{"a":1.111111111}'], maxStringLen=10) == "struct<_corrupt_record:string>"  # its text is read
    assert inferred(['{"a":"' + "x" * 11 + '"}'], maxStringLen=10) == "struct<_corrupt_record:string>"
    assert inferred(['{"' + "x" * 11 + '":1}'], maxStringLen=10) == "struct<" + "x" * 11 + ":bigint>"


@pytest.mark.parametrize("options, message", [
    ({"prefersDecimal": "yes"}, "'prefersDecimal' must be 'true' or 'false'"),
    ({"mode": "LENIENT"}, "Option 'mode' must be one of PERMISSIVE, DROPMALFORMED, FAILFAST"),
    ({"maxNestingDepth": "0"}, "'maxNestingDepth' must be at least 1"),
    ({"maxNumLen": "ten"}, "'maxNumLen' must be a whole number"),
    ({"timeZone": "Mars/Base"}, "not a zone id"),
    ({"inferTimestamp": "true", "timestampFormat": "yyyy-MM-dd"}, "inferTimestamp with timestampFormat"),
    ({"prefersDecimal": "true", "locale": "de-DE"}, "locale 'de-DE'"),
])
def test_options_refused_with_a_reason(options, message):
    with pytest.raises(SchemaError, match=message):
        infer_schema(['{"a":1}'], options)


def test_options_spark_leaves_to_decoding_do_not_matter():
    assert infer_schema(['{"a":1}'], {"dateFormat": "yyyy", "TIMESTAMPFORMAT": "yyyy", "MODE": "permissive"}) == \
        pa.struct([pa.field("a", pa.int64())])


def test_prefers_decimal_refuses_a_negative_scale_as_spark_fails_on_it():
    with pytest.raises(JsonInferenceError, match="record 0: prefersDecimal: the number 1e5 has a negative"):
        infer_schema(['{"a":1e5}'], {"prefersDecimal": True})
    assert inferred(['{"a":1e5}']) == "struct<a:double>"


@pytest.mark.parametrize("raw, text, bad", [
    (b'{"a":1}', '{"a":1}', None),
    (b'{"a":1}\xff', '{"a":1}\ufffd', 7),
    (b'"\xc0\x80"', '"\ufffd"', None),  # an overlong form: Jackson reads it, as string content
    (b'"\xed\xa0\x80"', '"\ufffd', 1),  # an encoded surrogate: Jackson refuses it
    (b'"\xf4\x90\x80\x80"', '"??"', None),  # beyond Unicode: Jackson yields two '?'
    (b'"\xc3"', '"\ufffd', 1),
])
def test_bytes_decode_as_jackson_reads_them(raw, text, bad):
    assert decode(raw) == (text, bad)


@pytest.mark.parametrize("text, expected", [
    ("1.50", (3, 2)), ("1,234.5", (5, 1)), ("0.00", (1, 2)), (".5", (1, 1)), ("5.", (1, 0)), ("1e5", (1, -5)),
    ("+5", (1, 0)), ("00012", (2, 0)), ("١٢", (2, 0)), (" 12", None), ("NaN", None), (",", None), ("1e", None),
    ("1e" + "1" * 11, None), ("1e-2147483648", None),
])
def test_decimal_strings_as_java_big_decimal_reads_them(text, expected):
    assert decimal_text(text) == expected


def test_rendering_as_spark_writes_schemas():
    schema = infer_schema(['{"a":1,"b":[1.5],"c":{"d":"x"},"we`ird":99999999999999999999}'])
    assert spark_ddl(schema) == ("`a` BIGINT, `b` ARRAY<DOUBLE>, `c` STRUCT<`d`: STRING>, `we``ird` DECIMAL(20,0)")
    assert spark_json(pa.struct([pa.field("a", pa.list_(pa.int64())), pa.field("n", pa.int32(), False)])) == (
        '{"type":"struct","fields":[{"name":"a","type":{"type":"array","elementType":"long","containsNull":true},'
        '"nullable":true,"metadata":{}},{"name":"n","type":"integer","nullable":false,"metadata":{}}]}')
