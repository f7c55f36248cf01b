"""Encoding Arrow values as Protobuf: what kwire writes, Google's runtime parses to the values it was given
(every type, nested messages past 127 bytes whose lengths take more bytes, packed and expanded repeated fields,
maps, Timestamp/Duration/wrappers, nulls); the type fit is checked up front naming field and both types; rows
that cannot be written fail FAILFAST or are reported PERMISSIVE; a schema derived from an Arrow struct reads back
as the values written."""

from __future__ import annotations

import datetime
import decimal

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kwire.formats import kernels
from spark_kwire.formats.errors import EncodeError, TypeMismatchError
from spark_kwire.formats.framing import confluent_header
from spark_kwire.formats.protobuf import ProtobufDecoder, ProtobufEncoder, protobuf_schema_for
from spark_kwire.formats.vm import codes
from tests.formats.protobuf import protos
from tests.formats.protobuf.oracle import all_types, normalize, spark_value

ALL = "kwire.pbtest.AllTypes"


def decoder(options=None):
    d = ProtobufDecoder(protos.ALL_TYPES, message_name=ALL, options=options)
    d.add_writer_schema(1, protos.ALL_TYPES)
    return d


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_what_kwire_reads_it_writes_back_as_the_runtime_parses_it(pb, data):
    """AllTypes values (hypothesis) decoded by kwire, encoded again by kwire: Google's runtime parses the bytes to
    a message whose Spark values are the decoded ones (Timestamps keep microseconds, as Spark does)."""
    messages = data.draw(st.lists(all_types(pb.all), min_size=1, max_size=5))
    d = decoder(options={"unwrap.primitive.wrapper.types": data.draw(st.sampled_from(["true", "false"]))})
    column = pa.array([confluent_header(1, [0]) + m.SerializeToString() for m in messages])
    decoded = d.decode(column).values
    encoder = ProtobufEncoder(protos.ALL_TYPES, 9, message_name=ALL)
    framed = encoder.encode(decoded).values
    head = confluent_header(9, [0])
    assert all(v.startswith(head) for v in framed.to_pylist())
    options = d.options
    for value, raw in zip(decoded.to_pylist(), framed.to_pylist()):
        parsed = pb.all.AllTypes.FromString(raw[len(head):])
        assert spark_value(parsed, _oracle_options(options)) == normalize(value, d.arrow_type)


def _oracle_options(options):
    from tests.formats.protobuf.oracle import Options

    return Options(unwrap_primitive_wrapper_types=options.unwrap_primitive_wrapper_types)


def test_long_nested_messages_and_both_kernels(pb):
    point = pa.struct([pa.field("x", pa.int32()), pa.field("labels", pa.list_(pa.string()))])
    t = pa.struct([pa.field("text", pa.string()), pa.field("point", point), pa.field("points", pa.list_(point)),
                   pa.field("longs", pa.list_(pa.int64())), pa.field("zigzags", pa.list_(pa.int32()))])
    rows = [{"text": "é" * 3000, "point": {"x": -1, "labels": ["l" * 200, "m" * 70000]},
             "points": [{"x": i, "labels": ["z" * (i * 50)]} for i in range(5)], "longs": [-1, 2**40],
             "zigzags": [-2, 3]}, None, {"text": None, "point": None, "points": None, "longs": [], "zigzags": None}]
    outputs = []
    for implementation in ("numba", "python"):
        with kernels.using(implementation):
            outputs.append(ProtobufEncoder(protos.ALL_TYPES, 1, message_name=ALL).encode(pa.array(rows, t)).values)
    assert outputs[0].equals(outputs[1])
    parsed = pb.all.AllTypes.FromString(outputs[0][0].as_py()[6:])
    assert parsed.text == "é" * 3000 and list(parsed.point.labels) == ["l" * 200, "m" * 70000]
    assert [p.x for p in parsed.points] == [0, 1, 2, 3, 4] and list(parsed.longs) == [-1, 2**40]
    assert outputs[0][1].as_py() is None and outputs[0][2].as_py() == confluent_header(1, [0])
    # longs are packed (proto3's default), zigzags expanded ([packed = false]) as the schema says
    assert b"\xb2\x01" in outputs[0][0].as_py() and outputs[0][0].as_py().count(b"\xb8\x01") == 2


def test_well_known_types_and_conversions(pb):
    t = pa.struct([pa.field("at", pa.timestamp("us", "UTC")), pa.field("took", pa.duration("us")),
                   pa.field("w_i32", pa.int32()), pa.field("w_text", pa.string()),
                   pa.field("w_u64", pa.decimal128(20, 0)), pa.field("i64", pa.timestamp("ms")),
                   pa.field("u32", pa.int64()), pa.field("color", pa.int32()), pa.field("opt_color", pa.string())])
    at = datetime.datetime(1969, 12, 31, 23, 59, 59, 500000, tzinfo=datetime.timezone.utc)
    row = {"at": at, "took": datetime.timedelta(microseconds=-1_500_001), "w_i32": 0, "w_text": "w",
           "w_u64": decimal.Decimal(2**64 - 1), "i64": datetime.datetime(2024, 1, 1, 0, 0, 0, 999000), "u32": 2**32 - 1,
           "color": -3, "opt_color": "GREEN"}
    raw = ProtobufEncoder(protos.ALL_TYPES, 1, message_name=ALL).encode(pa.array([row], t)).values[0].as_py()[6:]
    m = pb.all.AllTypes.FromString(raw)
    assert (m.at.seconds, m.at.nanos) == (-1, 500_000_000)  # Timestamp: seconds rounded down, nanos >= 0
    assert (m.took.seconds, m.took.nanos) == (-1, -500_001_000)  # Duration: both toward zero
    assert m.HasField("w_i32") and m.w_i32.value == 0 and m.w_text.value == "w" and m.w_u64.value == 2**64 - 1
    assert m.i64 == 1704067200999  # a timestamp into an int64: milliseconds, as spark-protobuf writes it
    assert m.u32 == 2**32 - 1 and m.color == -3 and m.opt_color == 2


def test_type_fit_is_checked_up_front():
    e = ProtobufEncoder(protos.ALL_TYPES, 1, message_name=ALL)
    cases = [
        (pa.struct([pa.field("nope", pa.int32())]), "nope", "has no counterpart in Protobuf message"),
        (pa.struct([pa.field("i32", pa.string())]), "i32", "Arrow type string cannot be written as Protobuf int32"),
        (pa.struct([pa.field("point", pa.struct([pa.field("x", pa.float64())]))]), "point.x", "double cannot be"),
        (pa.struct([pa.field("longs", pa.int64())]), "longs", "a repeated field is written from an array"),
        (pa.struct([pa.field("counts", pa.list_(pa.int64()))]), "counts", "a map field is written from a map"),
        (pa.struct([pa.field("fl", pa.float64())]), "fl", "double cannot be written as Protobuf float"),
    ]
    for t, path, text in cases:
        with pytest.raises(TypeMismatchError, match=text) as info:
            e.check(t)
        assert info.value.path == path
    legacy = ProtobufEncoder(protos.PROTO2, 1, message_name="kwire.pbtest2.Legacy")
    with pytest.raises(TypeMismatchError, match="requires field 'id'"):
        legacy.check(pa.struct([pa.field("name", pa.string())]))


def test_rows_that_cannot_be_written():
    e = ProtobufEncoder(protos.ALL_TYPES, 1, message_name=ALL)
    t = pa.struct([pa.field("opt_color", pa.string()), pa.field("texts", pa.list_(pa.string())),
                   pa.field("u32", pa.int64())])
    rows = [{"opt_color": "RED", "texts": ["a"], "u32": 1}, {"opt_color": "PURPLE", "texts": [], "u32": 1},
            {"opt_color": None, "texts": ["a", None], "u32": 1}, {"opt_color": None, "texts": [], "u32": -1}]
    with pytest.raises(EncodeError, match=r"row 1: string is not a symbol.* in field opt_color"):
        e.encode(pa.array(rows, t))
    result = e.encode(pa.array(rows, t), mode="PERMISSIVE")
    assert result.errors.tolist() == [False, True, True, True]
    assert [int(c) for c in result.error_codes[1:]] == [codes.E_NOT_A_SYMBOL, codes.E_NULL, codes.E_VALUE_RANGE]
    assert result.describe(2) == codes.message(codes.E_NULL) + " (field texts)"
    assert result.values.to_pylist()[1:] == [None, None, None]


def test_derived_schema_round_trips():
    t = pa.struct([
        pa.field("id", pa.int64(), False), pa.field("name", pa.string()), pa.field("score", pa.float64()),
        pa.field("small", pa.int16()), pa.field("ok", pa.bool_()), pa.field("raw", pa.binary()),
        pa.field("day", pa.date32()), pa.field("at", pa.timestamp("us", "UTC")), pa.field("took", pa.duration("us")),
        pa.field("tags", pa.list_(pa.field("element", pa.string(), False))),
        pa.field("address", pa.struct([pa.field("city", pa.string()), pa.field("zip", pa.int32())])),
        pa.field("lines", pa.list_(pa.field("element", pa.struct([pa.field("sku", pa.string())]), False))),
        pa.field("attrs", pa.map_(pa.string(), pa.int64()))])
    text = protobuf_schema_for(t, record_name="Order", package="shop")
    rows = [{"id": 0, "name": "", "score": 0.0, "small": -3, "ok": False, "raw": b"", "day": datetime.date(1960, 5, 1),
             "at": datetime.datetime(2024, 5, 1, tzinfo=datetime.timezone.utc), "took": datetime.timedelta(days=-2),
             "tags": ["a"], "address": {"city": None, "zip": 0}, "lines": [{"sku": "s"}], "attrs": [("k", 1)]},
            {"id": 1, "name": None, "score": None, "small": None, "ok": None, "raw": None, "day": None, "at": None,
             "took": None, "tags": [], "address": None, "lines": [], "attrs": []}]
    framed = ProtobufEncoder(text, 4).encode(pa.array(rows, t)).values
    d = ProtobufDecoder(text)
    d.add_writer_schema(4, text)
    back = d.decode(framed).values.to_pylist()
    for row, got in zip(rows, back):
        expected = {**row, "small": row["small"], "day": None if row["day"] is None else (row["day"] - datetime.date(
            1970, 1, 1)).days}
        assert got == expected
    from spark_kwire.formats.errors import SchemaError

    with pytest.raises(SchemaError, match="no decimal"):
        protobuf_schema_for(pa.struct([pa.field("p", pa.decimal128(10, 2))]))
    with pytest.raises(SchemaError, match="cannot nest a repeated field"):
        protobuf_schema_for(pa.struct([pa.field("p", pa.list_(pa.list_(pa.int32())))]))
