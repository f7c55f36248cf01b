"""Encoding Arrow values as JSON: what kwire writes parses with ``json.loads`` to the values it was given, validates
against the schema with ``jsonschema``, and decodes back to the same column; numbers print as the shortest text that
reads back equal; the type fit is checked up front; rows that cannot be written are reported; the schema derived
from an Arrow struct validates what kwire writes and reads back as the same type."""

from __future__ import annotations

import base64
import datetime
import decimal
import json
import math

import jsonschema
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kwire.formats import kernels
from spark_kwire.formats.errors import EncodeError, TypeMismatchError
from spark_kwire.formats.json_schema import JsonSchemaDecoder, JsonSchemaEncoder, json_schema_for
from spark_kwire.formats.vm import codes
from tests.formats.json_schema.oracle import SCHEMA, VALUES, frame

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
ROW = pa.struct([
    pa.field("id", pa.int64(), False), pa.field("name", pa.string()), pa.field("score", pa.float64()),
    pa.field("small", pa.int8()), pa.field("ratio", pa.float32()), pa.field("price", pa.decimal128(12, 2)),
    pa.field("ok", pa.bool_()), pa.field("raw", pa.binary()), pa.field("day", pa.date32()),
    pa.field("at", pa.timestamp("us", "UTC")), pa.field("tags", pa.list_(pa.field("element", pa.string(), True))),
    pa.field("attrs", pa.map_(pa.string(), pa.int64())),
    pa.field("address", pa.struct([pa.field("city", pa.string()), pa.field("zip", pa.int32())]))])


def rows_strategy():
    text = st.text(max_size=8)
    return st.lists(st.fixed_dictionaries({
        "id": st.integers(-2**63, 2**63 - 1), "name": st.none() | text,
        "score": st.none() | st.floats(allow_nan=False, allow_infinity=False),
        "small": st.none() | st.integers(-128, 127), "ratio": st.none() | st.floats(width=32, allow_nan=False,
                                                                                   allow_infinity=False),
        "price": st.none() | st.decimals(-10**9, 10**9, places=2, allow_nan=False, allow_infinity=False),
        "ok": st.none() | st.booleans(), "raw": st.none() | st.binary(max_size=7),
        "day": st.none() | st.dates(datetime.date(1, 1, 1), datetime.date(9999, 12, 31)),
        "at": st.none() | st.datetimes(datetime.datetime(1, 1, 2), datetime.datetime(9999, 12, 30),
                                       timezones=st.just(datetime.timezone.utc)),
        "tags": st.none() | st.lists(st.none() | text, max_size=3),
        "attrs": st.none() | st.dictionaries(text, st.integers(-5, 5), max_size=3).map(lambda d: list(d.items())),
        "address": st.none() | st.fixed_dictionaries({"city": st.none() | text,
                                                      "zip": st.none() | st.integers(0, 99999)}),
    }), min_size=1, max_size=8)


def as_json(row: dict) -> dict:
    """What the row means as JSON (the encoder's rules): nulls written as null, binary base64, dates ISO."""
    out = {}
    for k, v in row.items():
        if isinstance(v, bytes):
            v = base64.b64encode(v).decode()
        elif isinstance(v, datetime.datetime):
            v = v
        elif isinstance(v, datetime.date):
            v = v.isoformat()
        elif isinstance(v, decimal.Decimal):
            v = float(v)
        elif k == "attrs" and v is not None:
            v = dict(v)
        out[k] = v
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=rows_strategy())
def test_output_parses_validates_and_reads_back(rows):
    schema = json_schema_for(ROW)
    encoder = JsonSchemaEncoder(schema, 3)
    framed = encoder.encode(pa.array(rows, ROW)).values.to_pylist()
    for row, raw in zip(rows, framed):
        assert raw[:5] == frame(3, b"")
        value = json.loads(raw[5:])
        jsonschema.validate(value, schema)
        expected = as_json(row)
        for k, v in expected.items():
            if k == "at":
                assert (v is None and value[k] is None) or datetime.datetime.fromisoformat(value[k]) == v
            elif k == "ratio" and v is not None:
                assert value[k] == float(str(pa.array([v], pa.float32()).cast(pa.string())[0]))
            else:
                assert value[k] == v, k
    d = JsonSchemaDecoder(schema)
    d.add_writer_schema(3)
    back = d.decode(pa.array(framed)).values.to_pylist()
    for row, got in zip(rows, back):
        assert got["id"] == row["id"] and got["name"] == row["name"] and got["day"] == row["day"]
        assert got["raw"] == row["raw"] and got["tags"] == row["tags"] and got["attrs"] == row["attrs"]
        assert got["at"] == row["at"] and got["score"] == row["score"]


@settings(max_examples=300, deadline=None)
@given(x=st.floats(allow_nan=False, allow_infinity=False))
def test_doubles_print_as_the_shortest_text_that_reads_back(x):
    t = pa.struct([pa.field("v", pa.float64())])
    raw = JsonSchemaEncoder({"type": "object", "properties": {"v": {"type": "number"}}}, 1).encode(
        pa.array([{"v": x}], t)).values[0].as_py()[5:]
    value = json.loads(raw)["v"]
    assert value == x and math.copysign(1, value) == math.copysign(1, x)
    assert len(raw) <= len(json.dumps({"v": x}, separators=(",", ":"))) + 4  # e+300 vs e300


def test_both_kernels_strings_escapes_and_extremes():
    t = pa.struct([pa.field("s", pa.string()), pa.field("i", pa.int64()), pa.field("d", pa.date32()),
                   pa.field("any", pa.string())])
    rows = [{"s": '"\\\n\t\x00\x1f\x7fé😀/', "i": -2**63, "d": datetime.date(1, 1, 1), "any": ' {"a": [1, 2]} '},
            {"s": "", "i": 2**63 - 1, "d": datetime.date(9999, 12, 31), "any": "null"}]
    schema = {"type": "object", "properties": {"s": {"type": "string"}, "i": {"type": "integer"},
                                               "d": {"type": "string", "format": "date"}, "any": {}}}
    outputs = []
    for implementation in ("numba", "python"):
        with kernels.using(implementation):
            outputs.append(JsonSchemaEncoder(schema, 1).encode(pa.array(rows, t)).values.to_pylist())
    assert outputs[0] == outputs[1]
    parsed = [json.loads(v[5:]) for v in outputs[0]]
    assert parsed[0] == {"s": rows[0]["s"], "i": -2**63, "d": "0001-01-01", "any": {"a": [1, 2]}}
    assert parsed[1] == {"s": "", "i": 2**63 - 1, "d": "9999-12-31", "any": None}


def test_type_fit_is_checked_up_front():
    e = JsonSchemaEncoder(SCHEMA, 1)
    cases = [(pa.struct([pa.field("id", pa.int64()), pa.field("nope", pa.int32())]), "nope", "not a property"),
             (pa.struct([pa.field("id", pa.string())]), "id", "string cannot be written as JSON Schema integer"),
             (pa.struct([pa.field("id", pa.int64()), pa.field("tags", pa.list_(pa.int32()))]), "tags[]",
              "int32 cannot be written as JSON Schema string"),
             (pa.struct([pa.field("name", pa.string())]), "value", "requires properties \\['id'\\]"),
             (pa.struct([pa.field("id", pa.int64()), pa.field("score", pa.string())]), "score",
              "as JSON Schema number")]
    for t, path, text in cases:
        with pytest.raises(TypeMismatchError, match=text) as info:
            e.check(t)
        assert info.value.path == path


def test_rows_that_cannot_be_written():
    t = pa.struct([pa.field("id", pa.int64()), pa.field("score", pa.float64()), pa.field("extra", pa.string()),
                   pa.field("tags", pa.list_(pa.string()))])
    rows = [{"id": 1, "score": 1.0, "extra": "[1]", "tags": []}, {"id": None, "score": 1.0, "extra": None, "tags": []},
            {"id": 1, "score": float("inf"), "extra": None, "tags": []},
            {"id": 1, "score": None, "extra": "{bad", "tags": []}, {"id": 1, "score": None, "extra": None,
                                                                   "tags": ["a", None]}]
    e = JsonSchemaEncoder(SCHEMA, 1)
    with pytest.raises(EncodeError, match="row 1: null value where the schema allows none in field id"):
        e.encode(pa.array(rows, t))
    result = e.encode(pa.array(rows, t), mode="PERMISSIVE")
    assert result.errors.tolist() == [False, True, True, True, True]
    assert [int(c) for c in result.error_codes[1:]] == [codes.E_NULL, codes.E_VALUE_RANGE, codes.E_JSON_SYNTAX,
                                                       codes.E_NULL]
    assert json.loads(result.values[0].as_py()[5:]) == {"id": 1, "score": 1.0, "extra": [1], "tags": []}
    # a property that may not be null and is not required is left out
    assert json.loads(e.encode(pa.array([{"id": 2, "score": None, "extra": None, "tags": None}], t)).values[0]
                      .as_py()[5:]) == {"id": 2, "extra": None}


def test_decoded_values_write_back_equal():
    rows = [VALUES.example() for _ in range(30)]
    d = JsonSchemaDecoder(SCHEMA)
    d.add_writer_schema(1)
    decoded = d.decode(pa.array([frame(1, json.dumps(r)) for r in rows])).values
    again = JsonSchemaEncoder(SCHEMA, 1).encode(decoded).values
    assert d.decode(again).values.to_pylist() == decoded.to_pylist()


pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.NonInteractiveExampleWarning")
