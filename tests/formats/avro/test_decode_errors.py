"""Bad input: framing errors, truncated payloads, bad union indexes and enum symbols, unknown schema ids,
trailing bytes. FAILFAST names the row, the schema id, what was wrong and the field; PERMISSIVE turns the
row into a null and reports it, the other rows decoding as if it were not there."""

from __future__ import annotations

import pyarrow as pa
import pytest

from spark_kwire.formats import kernels
from spark_kwire.formats.avro.decoder import AvroDecoder
from spark_kwire.formats.errors import DecodeError, ResolutionError, SchemaError
from spark_kwire.formats.framing import parse_confluent
from spark_kwire.formats.vm import codes
from tests.formats.avro.oracle import frame, write

SCHEMA = {"type": "record", "name": "R", "fields": [
    {"name": "id", "type": "long"},
    {"name": "name", "type": "string"},
    {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}},
    {"name": "opt", "type": ["null", "int", "string"]},
    {"name": "tags", "type": {"type": "array", "items": "string"}}]}
GOOD = {"id": 7, "name": "seven", "kind": "B", "opt": "x", "tags": ["t1", "t2"]}


@pytest.fixture(params=["numba", "python"])
def decoder(request):
    with kernels.using(request.param):
        d = AvroDecoder(SCHEMA)
        d.add_writer_schema(1, SCHEMA)
        yield d


def good() -> bytes:
    return write(SCHEMA, GOOD)


def column(*values):
    return pa.array(list(values), pa.binary())


def decode_bad(decoder, bad: bytes, expected_code: int, field: str | None):
    """One bad row among good ones: FAILFAST names it; PERMISSIVE nulls it and keeps the others."""
    values = column(frame(1, good()), bad, frame(1, good()))
    with pytest.raises(DecodeError) as info:
        decoder.decode(values, mode="FAILFAST")
    err = info.value
    assert err.row == 1
    assert err.reason == codes.message(expected_code)
    if field is not None:
        assert err.path == field and f"field {field}" in str(err)
    result = decoder.decode(values, mode="PERMISSIVE")
    assert result.errors.tolist() == [False, True, False]
    assert int(result.error_codes[1]) == expected_code
    expected_row = {"id": 7, "name": "seven", "kind": "B", "opt": {"member0": None, "member1": "x"},
                    "tags": ["t1", "t2"]}
    assert result.values.to_pylist() == [expected_row, None, expected_row]
    return err, result


def test_framing_errors(decoder):
    err, result = decode_bad(decoder, b"\x00\x00\x01", codes.E_SHORT, None)
    assert err.schema_id == -1 and "shorter than the 5-byte Confluent header" in str(err)
    decode_bad(decoder, b"\x01" + frame(1, good())[1:], codes.E_MAGIC, None)
    decode_bad(decoder, b"", codes.E_SHORT, None)


def test_unknown_schema_id(decoder):
    err, result = decode_bad(decoder, frame(99, good()), codes.E_UNKNOWN_SCHEMA, None)
    assert err.schema_id == 99 and "(schema id 99)" in str(err)
    assert decoder.missing_schema_ids(column(frame(99, good()), frame(1, good()), None)) == [99]
    assert parse_confluent(column(frame(5, b""), frame(3, b""), frame(5, b""), None, b"x")).schema_ids() == [3, 5]


def test_truncated_payloads(decoder):
    payload = good()
    # cut inside every field: each cut fails cleanly (never a crash, never a hang), naming a field
    for cut in range(len(payload)):
        values = column(frame(1, payload[:cut]))
        result = decoder.decode(values, mode="PERMISSIVE")
        assert result.errors.tolist() == [True]
        assert int(result.error_codes[0]) in (codes.E_TRUNCATED, codes.E_BAD_COUNT), cut
        assert result.values.to_pylist() == [None]
    decode_bad(decoder, frame(1, payload[:3]), codes.E_TRUNCATED, "name")


def test_bad_union_index(decoder):
    head = write({"type": "record", "name": "H", "fields": [
        {"name": "id", "type": "long"}, {"name": "name", "type": "string"}, {"name": "kind", "type": "int"}]},
        {"id": 7, "name": "seven", "kind": 1})
    decode_bad(decoder, frame(1, head + b"\x06"), codes.E_BAD_UNION, "opt")  # index 3 of 3 branches
    decode_bad(decoder, frame(1, head + b"\x01"), codes.E_BAD_UNION, "opt")  # index -1


def test_bad_enum_index(decoder):
    head = write({"type": "record", "name": "H", "fields": [
        {"name": "id", "type": "long"}, {"name": "name", "type": "string"}]}, {"id": 7, "name": "seven"})
    decode_bad(decoder, frame(1, head + b"\x04\x00\x00"), codes.E_BAD_ENUM, "kind")


def test_trailing_bytes(decoder):
    decode_bad(decoder, frame(1, good() + b"\x00"), codes.E_TRAILING, None)


def test_bad_lengths_and_varints(decoder):
    decode_bad(decoder, frame(1, b"\x0e" + b"\x03"), codes.E_BAD_LENGTH, "name")  # length -2
    decode_bad(decoder, frame(1, b"\xff" * 11), codes.E_BAD_VARINT, "id")
    # an array block claiming more items than bytes left: refused before anything is allocated
    head = write({"type": "record", "name": "H", "fields": [
        {"name": "id", "type": "long"}, {"name": "name", "type": "string"}, {"name": "kind", "type": "int"},
        {"name": "opt", "type": "null"}]}, {"id": 7, "name": "seven", "kind": 1, "opt": None})
    decode_bad(decoder, frame(1, head + b"\x00" + b"\xfe\xff\xff\xff\x0f"), codes.E_BAD_COUNT, "tags")


def test_null_values_are_null_rows_not_errors(decoder):
    result = decoder.decode(column(None, frame(1, good()), None), mode="FAILFAST")
    assert result.error_count == 0
    assert result.values.to_pylist()[0] is None and result.values.to_pylist()[2] is None


def test_enum_symbol_unknown_to_the_reader():
    writer = {"type": "record", "name": "R", "fields": [
        {"name": "c", "type": {"type": "enum", "name": "C", "symbols": ["X", "Y", "Z"]}}]}
    reader = {"type": "record", "name": "R", "fields": [
        {"name": "c", "type": {"type": "enum", "name": "C", "symbols": ["X", "Y"]}}]}
    d = AvroDecoder(reader)
    d.add_writer_schema(4, writer)
    values = column(frame(4, write(writer, {"c": "Y"})), frame(4, write(writer, {"c": "Z"})))
    result = d.decode(values, mode="PERMISSIVE")
    assert result.values.to_pylist() == [{"c": "Y"}, None]
    assert result.describe(1) == codes.message(codes.E_ENUM_SYMBOL) + " (field c)"


def test_unresolvable_schemas_are_refused_naming_the_field():
    reader = {"type": "record", "name": "R", "fields": [
        {"name": "a", "type": "int"},
        {"name": "inner", "type": {"type": "record", "name": "I", "fields": [{"name": "must", "type": "string"}]}}]}
    writer = {"type": "record", "name": "R", "fields": [
        {"name": "a", "type": "int"}, {"name": "inner", "type": {"type": "record", "name": "I", "fields": []}}]}
    d = AvroDecoder(reader)
    with pytest.raises(ResolutionError, match=r"inner\.must: .*has no default"):
        d.add_writer_schema(1, writer)
    with pytest.raises(ResolutionError, match=r"^a: the writer's long cannot be read as int"):
        d.add_writer_schema(2, {**writer, "fields": [{"name": "a", "type": "long"}, writer["fields"][1]]})
    with pytest.raises(ResolutionError, match="reinterpret millis as micros"):
        AvroDecoder({"type": "long", "logicalType": "timestamp-micros"}).add_writer_schema(
            3, {"type": "long", "logicalType": "timestamp-millis"})
    with pytest.raises(ResolutionError, match="another scale"):
        AvroDecoder({"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2}).add_writer_schema(
            3, {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 3})


def test_recursive_schemas_are_refused():
    linked = {"type": "record", "name": "Node", "fields": [
        {"name": "v", "type": "int"}, {"name": "next", "type": ["null", "Node"]}]}
    with pytest.raises(SchemaError, match=r"next<1>: recursive type: Node refers to itself; Spark"):
        AvroDecoder(linked)


def test_decimal_out_of_its_precision():
    schema = {"type": "bytes", "logicalType": "decimal", "precision": 3, "scale": 0}
    d = AvroDecoder(schema)
    d.add_writer_schema(1, schema)
    ok, too_big = frame(1, b"\x04\x03\xe7"), frame(1, b"\x04\x03\xe8")  # 999 and 1000 (2 bytes each)
    result = d.decode(column(ok, too_big, frame(1, b"\x04\xfc\x19")), mode="PERMISSIVE")  # -999
    import decimal

    assert result.values.to_pylist() == [decimal.Decimal(999), None, decimal.Decimal(-999)]
    assert int(result.error_codes[1]) == codes.E_DECIMAL_RANGE


def test_timestamp_millis_beyond_microseconds():
    schema = {"type": "long", "logicalType": "timestamp-millis"}
    d = AvroDecoder(schema)
    d.add_writer_schema(1, schema)
    limit = (2**63 - 1) // 1000
    result = d.decode(column(frame(1, write(schema, limit)), frame(1, write(schema, limit + 1))), mode="PERMISSIVE")
    assert result.errors.tolist() == [False, True]
    assert int(result.error_codes[1]) == codes.E_TIMESTAMP_RANGE


def test_bad_mode():
    d = AvroDecoder("string")
    with pytest.raises(ValueError, match="FAILFAST, PERMISSIVE"):
        d.decode(column(), mode="DROPMALFORMED")
