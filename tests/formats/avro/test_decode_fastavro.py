"""kwire's Avro decoder against fastavro (an independent implementation): fastavro writes the records,
and what kwire decodes equals what fastavro reads back, in the shape spark-avro gives it."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kwire.formats import kernels
from spark_kwire.formats.avro.decoder import AvroDecoder
from tests.formats.avro.oracle import Names, frame, read, spark_shape, values, write
from tests.formats.avro.schemas import ALL_TYPES, INNER, V1, V2, V3


def decode_with_kwire(reader, writers: dict[int, dict], framed: list[bytes | None], mode="FAILFAST"):
    decoder = AvroDecoder(reader)
    for schema_id, writer in writers.items():
        decoder.add_writer_schema(schema_id, writer)
    return decoder.decode(pa.array(framed, pa.binary()), mode=mode)


def expected(reader, writers, batch):
    names = Names(reader)
    return [None if p is None else spark_shape(reader, read(p, writers[i], reader), names) for i, p in batch]


@pytest.fixture(params=["numba", "python"])
def implementation(request):
    with kernels.using(request.param):
        yield request.param


def test_fastavro_round_trip_of_every_type(implementation):
    rows = st.lists(values(ALL_TYPES), min_size=1, max_size=8)

    @settings(max_examples=40 if implementation == "numba" else 8, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(rows)
    def check(records):
        payloads = [(1, write(ALL_TYPES, r)) for r in records]
        got = decode_with_kwire(ALL_TYPES, {1: ALL_TYPES}, [frame(i, p) for i, p in payloads])
        assert got.error_count == 0, [got.describe(r) for r in range(len(records))]
        assert got.values.to_pylist() == expected(ALL_TYPES, {1: ALL_TYPES}, payloads)

    check()


def test_nulls_unicode_and_extremes():
    schema = {"type": "record", "name": "E", "fields": [
        {"name": "s", "type": "string"}, {"name": "l", "type": "long"}, {"name": "o", "type": ["null", "string"]},
        {"name": "d", "type": {"type": "bytes", "logicalType": "decimal", "precision": 38, "scale": 38}},
        {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros"}}]}
    import decimal

    records = [
        {"s": "", "l": -(2**63), "o": None, "d": decimal.Decimal("-0." + "9" * 38), "ts": -1},
        {"s": "héllo wörld ✓ 𝄞", "l": 2**63 - 1, "o": "", "d": decimal.Decimal("0." + "9" * 38),
         "ts": -62135596800000000},
        {"s": "\x00", "l": 0, "o": "ß" * 1000, "d": decimal.Decimal(0), "ts": 253402300799999999},
    ]
    framed = [frame(3, write(schema, r)) for r in records] + [None]
    got = decode_with_kwire(schema, {3: schema}, framed)
    assert got.values.to_pylist() == expected(schema, {3: schema}, [(3, write(schema, r)) for r in records]) + [None]
    assert got.error_count == 0  # a null value (tombstone) is a null row, not an error


def test_evolving_topic_in_one_batch():
    """Payloads of three writer versions, decoded together with the latest schema, equal fastavro's
    resolving reader (schemaless_reader(fo, writer, reader))."""
    writers = {11: V1, 12: V2, 13: V3}
    records = {
        11: [{"id": 1, "name": "Ann", "legacy": {"code": "x", "hist": [1, 2, 3], "alt": [None, 4, 2.5],
                                                 "codes": {"a": b"xy"}}, "qty": 3, "price": 1.5,
              "score": 7, "note": "n1", "colour": "PURPLE"},
             {"id": 2, "name": "Bob", "legacy": None, "qty": -4, "price": -0.25, "score": -1, "note": "",
              "colour": "RED"}],
        12: [{"id": 3, "name": "Cy", "qty": 2**40, "price": 3.0, "score": 0, "note": "ö", "email": "c@x",
              "colour": "GREEN"},
             {"id": 4, "name": "Di", "qty": 1, "price": 0.1, "score": 2**30, "note": "n", "email": "",
              "colour": "PURPLE"}],
        13: [{"id": 5, "full_name": "Ed", "qty": 5, "price": 2.5, "score": 0.5, "note": b"\x00\xff", "email": "e@x",
              "colour": "OTHER", "tags": ["a", "b"], "address": {"city": "Oslo", "zip": None}, "nickname": "E"}],
    }
    batch = []
    for i in range(3):  # interleaved, so each program runs between the others
        for schema_id, recs in records.items():
            for r in recs:
                batch.append((schema_id, write(writers[schema_id], r)))
    got = decode_with_kwire(V3, writers, [frame(i, p) for i, p in batch])
    assert got.error_count == 0
    want = expected(V3, writers, batch)
    assert got.values.to_pylist() == want
    # spot checks that the oracle did resolve: defaults, aliases, enum default, promotions
    first = want[0]
    assert first["full_name"] == "Ann" and first["email"] == "unknown@example.com" and first["colour"] == "OTHER"
    assert first["tags"] == ["new"] and first["address"] == {"city": "Paris", "zip": 75001} and first["note"] == b"n1"


@given(st.lists(values(V1), min_size=1, max_size=6), st.lists(values(V2), max_size=6))
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_evolution_generated(v1_records, v2_records):
    writers = {1: V1, 2: V2}
    batch = [(1, write(V1, r)) for r in v1_records] + [(2, write(V2, r)) for r in v2_records]
    got = decode_with_kwire(V3, writers, [frame(i, p) for i, p in batch])
    assert got.error_count == 0
    assert got.values.to_pylist() == expected(V3, writers, batch)


def test_nested_record_reused_by_name():
    schema = {"type": "record", "name": "Pair", "fields": [
        {"name": "a", "type": INNER}, {"name": "b", "type": "Inner"},
        {"name": "c", "type": {"type": "array", "items": "Inner"}}]}
    r = {"a": {"x": 1, "y": None}, "b": {"x": 2, "y": "z"}, "c": [{"x": 3, "y": "w"}] * 3}
    got = decode_with_kwire(schema, {5: schema}, [frame(5, write(schema, r))])
    assert got.values.to_pylist() == expected(schema, {5: schema}, [(5, write(schema, r))])


def test_large_batch_grows_its_columns(monkeypatch):
    """Rows with many array items and long strings outgrow the first guess of every region: the kernel
    stops, the region grows, decoding resumes, and nothing is lost or repeated."""
    schema = {"type": "record", "name": "Big", "fields": [
        {"name": "s", "type": "string"},
        {"name": "items", "type": {"type": "array", "items": {"type": "map", "values": "string"}}}]}
    records = [{"s": "x" * (i % 50) * 20, "items": [{f"k{j}": "v" * j for j in range(i % 7)}] * (i % 13)}
               for i in range(3000)]
    payloads = [(9, write(schema, r)) for r in records]
    decoder = AvroDecoder(schema)
    decoder.add_writer_schema(9, schema)
    k = kernels.current()
    calls = []
    monkeypatch.setattr(k, "decode_rows", lambda *a, _f=k.decode_rows: calls.append(1) or _f(*a))
    for batch in range(2):  # the second batch starts from the first one's sizes, and grows nothing
        calls.clear()
        got = decoder.decode(pa.array([frame(i, p) for i, p in payloads], pa.binary()))
        assert got.values.to_pylist() == expected(schema, {9: schema}, payloads)
        assert len(calls) > 1 if batch == 0 else len(calls) == 1
