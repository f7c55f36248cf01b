"""kwire's Avro encoder: its bytes, read by fastavro (independent), give back the values it was handed;
types that do not fit the schema are refused up front naming the field and both types; rows that cannot
be written fail naming the row and field."""

from __future__ import annotations

import decimal
import io

import fastavro
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kwire.formats import kernels
from spark_kwire.formats.avro.encoder import AvroEncoder
from spark_kwire.formats.avro.parser import parse_schema
from spark_kwire.formats.avro.spark_types import arrow_type
from spark_kwire.formats.errors import EncodeError, TypeMismatchError
from spark_kwire.formats.vm import codes
from tests.formats.avro.oracle import Names, read, spark_shape, values, write
from tests.formats.avro.schemas import ALL_TYPES, V3


@pytest.fixture(params=["numba", "python"])
def implementation(request):
    with kernels.using(request.param):
        yield request.param


def spark_rows(schema, records):
    """Rows in the shape Spark holds them (what a DataFrame's Arrow batches carry), via fastavro."""
    names = Names(schema)
    return [spark_shape(schema, read(write(schema, r), schema), names) for r in records]


def fastavro_reads(schema, framed: pa.Array, schema_id: int):
    names = Names(schema)
    rows = []
    for value in framed.to_pylist():
        if value is None:
            rows.append(None)
            continue
        assert value[:5] == b"\x00" + schema_id.to_bytes(4, "big")
        rows.append(spark_shape(schema, read(value[5:], schema), names))
    return rows


def test_round_trip_through_fastavro(implementation):
    t = arrow_type(parse_schema(ALL_TYPES))

    @settings(max_examples=30 if implementation == "numba" else 6, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.lists(values(ALL_TYPES), min_size=1, max_size=8))
    def check(records):
        rows = spark_rows(ALL_TYPES, records)
        column = pa.array(rows, type=t)
        result = AvroEncoder(ALL_TYPES, 321).encode(column)
        assert result.error_count == 0
        assert fastavro_reads(ALL_TYPES, result.values, 321) == rows

    check()


def test_sliced_and_chunked_input():
    t = arrow_type(parse_schema(V3))
    records = [{"id": i, "full_name": f"n{i}", "qty": i, "price": i / 4, "score": -i / 8, "note": bytes([i]) * i,
                "email": "e", "colour": "RED", "tags": ["t"] * (i % 3), "address": {"city": "c", "zip": i},
                "nickname": None if i % 2 else "x"} for i in range(30)]
    rows = spark_rows(V3, records)
    column = pa.array(rows, type=t)
    encoder = AvroEncoder(V3, 5)
    assert fastavro_reads(V3, encoder.encode(column.slice(7, 11)).values, 5) == rows[7:18]
    chunked = pa.chunked_array([column.slice(0, 10), column.slice(10)])
    assert fastavro_reads(V3, encoder.encode(chunked).values, 5) == rows


def test_spark_arrow_types_are_accepted():
    """The Arrow types a Spark DataFrame carries (byte and short as int8/int16, timestamps with a zone) and
    other unit or width variants, converted without loss."""
    schema = {"type": "record", "name": "R", "fields": [
        {"name": "b", "type": "int"}, {"name": "s", "type": "int"}, {"name": "l", "type": "long"},
        {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "ts_ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "ls", "type": "string"}, {"name": "d", "type": "double"}]}
    import datetime

    when = datetime.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=datetime.timezone.utc)
    column = pa.array([{"b": -5, "s": 300, "l": 7, "ts": when, "ts_ms": when, "ls": "x", "d": 0.5}],
                      pa.struct([("b", pa.int8()), ("s", pa.int16()), ("l", pa.int32()),
                                 ("ts", pa.timestamp("ns", tz="UTC")), ("ts_ms", pa.timestamp("us", tz="Europe/Paris")),
                                 ("ls", pa.large_string()), ("d", pa.float32())]))
    out = AvroEncoder(schema, 1).encode(column).values.to_pylist()
    back = fastavro.schemaless_reader(io.BytesIO(out[0][5:]), fastavro.parse_schema(schema))
    assert back["b"] == -5 and back["s"] == 300 and back["l"] == 7 and back["ls"] == "x" and back["d"] == 0.5
    assert back["ts"] == when
    # microseconds to milliseconds rounds down, as Spark's microsToMillis does (before 1970 too)
    assert back["ts_ms"] == datetime.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=datetime.timezone.utc)


def test_misfits_are_refused_up_front():
    schema = {"type": "record", "name": "R", "fields": [
        {"name": "a", "type": "int"},
        {"name": "inner", "type": {"type": "record", "name": "I", "fields": [
            {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2}}]}}]}
    encoder = AvroEncoder(schema, 1)
    with pytest.raises(TypeMismatchError, match=r"^inner\.price: Arrow type decimal128\(5, 3\) cannot be written as "
                                                r"Avro bytes \(decimal\(5,2\)\): the scale"):
        encoder.check(pa.struct([("a", pa.int32()), ("inner", pa.struct([("price", pa.decimal128(5, 3))]))]))
    with pytest.raises(TypeMismatchError, match=r"^a: Arrow type int64 cannot be written as Avro int"):
        encoder.check(pa.struct([("a", pa.int64()), ("inner", pa.struct([("price", pa.decimal128(5, 2))]))]))
    with pytest.raises(TypeMismatchError, match=r"field\(s\) \['extra'\] have no counterpart"):
        encoder.check(pa.struct([("a", pa.int32()), ("extra", pa.int32()),
                                 ("inner", pa.struct([("price", pa.decimal128(5, 2))]))]))
    with pytest.raises(TypeMismatchError, match=r"^inner\.price: the Avro record I needs field 'price'"):
        encoder.check(pa.struct([("a", pa.int32()), ("inner", pa.struct([]))]))
    with pytest.raises(TypeMismatchError, match="several types is written from a struct of member0, member1"):
        AvroEncoder(["int", "string"], 1).check(pa.string())
    # a field missing from the struct is written as its default (or null); case is ignored as Spark ignores it
    partial = {"type": "record", "name": "P", "fields": [{"name": "Id", "type": "long"},
                                                         {"name": "note", "type": ["null", "string"]},
                                                         {"name": "n", "type": "int", "default": 42}]}
    column = pa.array([{"id": 1}], pa.struct([("id", pa.int64())]))
    out = AvroEncoder(partial, 3).encode(column).values.to_pylist()
    assert fastavro.schemaless_reader(io.BytesIO(out[0][5:]), fastavro.parse_schema(partial)) == \
        {"Id": 1, "note": None, "n": 42}


def test_rows_that_cannot_be_written(implementation):
    schema = {"type": "record", "name": "R", "fields": [
        {"name": "name", "type": "string"},
        {"name": "kind", "type": {"type": "enum", "name": "K", "symbols": ["A", "B"]}},
        {"name": "key", "type": {"type": "fixed", "name": "F", "size": 2}},
        {"name": "d", "type": {"type": "fixed", "name": "D", "size": 1, "logicalType": "decimal", "precision": 2}}]}
    t = pa.struct([("name", pa.string()), ("kind", pa.string()), ("key", pa.binary()), ("d", pa.decimal128(2, 0))])
    good = {"name": "n", "kind": "B", "key": b"ab", "d": decimal.Decimal(-99)}
    cases = [({**good, "name": None}, codes.E_NULL, "name"), ({**good, "kind": "C"}, codes.E_NOT_A_SYMBOL, "kind"),
             ({**good, "key": b"abc"}, codes.E_FIXED_SIZE, "key")]
    encoder = AvroEncoder(schema, 9)
    for bad, code, field in cases:
        column = pa.array([good, bad, None, good], t)
        with pytest.raises(EncodeError) as info:
            encoder.encode(column)
        assert info.value.row == 1 and info.value.path == field and info.value.reason == codes.message(code)
        result = encoder.encode(column, mode="PERMISSIVE")
        assert result.errors.tolist() == [False, True, False, False]
        assert result.describe(1) == f"{codes.message(code)} (field {field})"
        values_out = result.values.to_pylist()
        assert values_out[1] is None and values_out[2] is None  # the null row is a tombstone, not an error
        assert fastavro_reads(schema, pa.array([values_out[0], values_out[3]]), 9) == \
            [{"name": "n", "kind": "B", "key": b"ab", "d": decimal.Decimal(-99)}] * 2


def test_output_grows(monkeypatch):
    """Large negative longs take 10 bytes as varints, 8 in Arrow: the output outgrows its first guess (sized
    from the input) and the kernel resumes where it stopped."""
    schema = {"type": "array", "items": "long"}
    rows = [[-(2**62) - i for i in range(1000)]] * 300
    calls = []
    k = kernels.current()
    monkeypatch.setattr(k, "encode_rows", lambda *a, _f=k.encode_rows: calls.append(1) or _f(*a))
    result = AvroEncoder(schema, 1).encode(pa.array(rows, pa.list_(pa.int64())))
    assert len(calls) > 1
    assert [fastavro.schemaless_reader(io.BytesIO(v[5:]), schema) for v in result.values.to_pylist()] == rows
