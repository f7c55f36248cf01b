"""Tests of the Kafka primitive types (Reader / Writer)."""

import struct
import tracemalloc
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spark_kwire.protocol.errors import KwireError, ProtocolDecodeError
from spark_kwire.protocol.primitives import ZERO_UUID, Reader, Writer, zigzag_decode, zigzag_encode

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def written(method: str, value) -> bytes:
    w = Writer()
    getattr(w, method)(value)
    return w.getvalue()


def read_all(method: str, data: bytes):
    r = Reader(data)
    value = getattr(r, method)()
    assert r.remaining() == 0, "reader did not consume the whole encoding"
    return value


# ---------------------------------------------------------------- known byte vectors


@pytest.mark.parametrize(
    "value, encoded",
    [
        (0, "00"),
        (1, "01"),
        (127, "7f"),
        (128, "8001"),
        (300, "ac02"),
        (16383, "ff7f"),
        (16384, "808001"),
        (2**21 - 1, "ffff7f"),
        (2**28, "8080808001"),
        (2**32 - 1, "ffffffff0f"),
    ],
)
def test_unsigned_varint_vectors(value, encoded):
    assert written("uvarint", value).hex() == encoded
    assert read_all("uvarint", bytes.fromhex(encoded)) == value


@pytest.mark.parametrize(
    "value, encoded",
    [
        (0, "00"),
        (-1, "01"),
        (1, "02"),
        (-2, "03"),
        (63, "7e"),
        (-64, "7f"),
        (64, "8001"),
        (INT32_MAX, "feffffff0f"),
        (INT32_MIN, "ffffffff0f"),
    ],
)
def test_zigzag_varint_vectors(value, encoded):
    assert written("varint", value).hex() == encoded
    assert read_all("varint", bytes.fromhex(encoded)) == value


@pytest.mark.parametrize(
    "value, encoded",
    [
        (0, "00"),
        (-1, "01"),
        (1, "02"),
        (INT64_MAX, "feffffffffffffffff01"),
        (INT64_MIN, "ffffffffffffffffff01"),
    ],
)
def test_zigzag_varlong_vectors(value, encoded):
    assert written("varlong", value).hex() == encoded
    assert read_all("varlong", bytes.fromhex(encoded)) == value


def test_zigzag_helpers():
    assert zigzag_encode(-1) == 1
    assert zigzag_encode(1) == 2
    assert zigzag_encode(INT32_MIN, 32) == 2**32 - 1
    assert zigzag_decode(2**64 - 1) == INT64_MIN


@pytest.mark.parametrize(
    "method, value, encoded",
    [
        ("compact_nullable_string", None, "00"),
        ("compact_nullable_string", "", "01"),
        ("compact_string", "", "01"),
        ("compact_string", "abc", "04616263"),
        ("nullable_string", None, "ffff"),
        ("nullable_string", "", "0000"),
        ("string", "héllo", "0006" + "héllo".encode().hex()),
        ("nullable_bytes", None, "ffffffff"),
        ("bytes", b"\x01\x02", "0000000201 02".replace(" ", "")),
        ("compact_nullable_bytes", None, "00"),
        ("compact_bytes", b"", "01"),
        ("compact_bytes", b"\xff", "02ff"),
        ("compact_array_length", -1, "00"),
        ("compact_array_length", 0, "01"),
        ("array_length", -1, "ffffffff"),
        ("int8", -1, "ff"),
        ("int16", -2, "fffe"),
        ("int32", 0x01020304, "01020304"),
        ("int64", -1, "ffffffffffffffff"),
        ("uint16", 65535, "ffff"),
        ("uint32", 2**32 - 1, "ffffffff"),
        ("float64", 1.5, "3ff8000000000000"),
        ("bool", True, "01"),
        ("bool", False, "00"),
        ("uuid", uuid.UUID("00010203-0405-0607-0809-0a0b0c0d0e0f"), "000102030405060708090a0b0c0d0e0f"),
        ("uuid", None, "00" * 16),
    ],
)
def test_known_encodings(method, value, encoded):
    assert written(method, value).hex() == encoded


@pytest.mark.parametrize(
    "method, encoded, value",
    [
        ("compact_nullable_string", "00", None),
        ("compact_nullable_string", "01", ""),
        ("compact_string", "04616263", "abc"),
        ("nullable_string", "ffff", None),
        ("nullable_bytes", "ffffffff", None),
        ("compact_nullable_bytes", "00", None),
        ("compact_length", "00", -1),
        ("uint32", "ffffffff", 2**32 - 1),
        ("bool", "02", True),  # any non-zero byte is true
        ("uuid", "00" * 16, ZERO_UUID),
    ],
)
def test_known_decodings(method, encoded, value):
    assert read_all(method, bytes.fromhex(encoded)) == value


def test_array_lengths_read_back():
    assert Reader(bytes.fromhex("00")).compact_array_length() == -1
    assert Reader(bytes.fromhex("01")).compact_array_length() == 0
    assert Reader(bytes.fromhex("ffffffff")).array_length() == -1


def test_tagged_fields_section_round_trip_and_sorting():
    w = Writer()
    w.tagged_fields({5: b"\x01\x02", 0: b""})
    assert w.getvalue().hex() == "02" + "0000" + "05020102"
    r = Reader(w.getvalue())
    assert {tag: bytes(raw) for tag, raw in r.tagged_fields().items()} == {0: b"", 5: b"\x01\x02"}
    r = Reader(w.getvalue() + b"\x7f")
    r.skip_tagged_fields()
    assert r.int8() == 127
    assert written("tagged_fields", None) == b"\x00"


def test_int32_array_body():
    data = struct.pack(">iii", 3, -1, 7)
    r = Reader(data)
    assert r.int32_array_body(3) == [3, -1, 7]
    with pytest.raises(ProtocolDecodeError):
        Reader(data).int32_array_body(4)


# ---------------------------------------------------------------- zero copy


def test_bytes_are_zero_copy_slices_of_the_input():
    payload = bytes(range(256)) * 4
    data = struct.pack(">i", len(payload)) + payload
    view = Reader(data).bytes()
    assert isinstance(view, memoryview)
    assert view.obj is data
    assert view == payload


def test_reader_accepts_memoryview_offset_and_non_byte_formats():
    data = bytearray(b"\x00\x00\x00\x05\x00\x00\x00\x06")
    r = Reader(memoryview(data).cast("I"), pos=4)
    assert r.int32() == 6


def test_large_bytes_field_is_not_copied():
    payload = b"x" * (8 * 1024 * 1024)
    data = struct.pack(">i", len(payload)) + payload
    tracemalloc.start()
    try:
        view = Reader(data).nullable_bytes()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(view) == len(payload)
    assert peak < 64 * 1024


# ---------------------------------------------------------------- malformed input


@pytest.mark.parametrize(
    "method, data",
    [
        ("int8", ""),
        ("int16", "00"),
        ("int32", "000000"),
        ("int64", "00000000000000"),
        ("uint16", "ff"),
        ("uint32", "ffffff"),
        ("float64", "3ff8"),
        ("bool", ""),
        ("uuid", "00" * 15),
        ("uvarint", ""),
        ("uvarint", "80"),
        ("uvarint", "8080808080"),  # 5 bytes, last one still has the continuation bit
        ("uvarint", "ffffffff1f"),  # 35 bits
        ("varint", "ffffffff7f"),
        ("varlong", "ff" * 10 + "01"),
        ("string", "0005616263"),  # length 5, 3 bytes present
        ("string", "ffff"),  # null in a non-nullable string
        ("string", "fffe"),  # negative length
        ("nullable_string", "fffe"),
        ("nullable_string", "0002c328"),  # invalid UTF-8
        ("compact_string", "00"),  # null in a non-nullable compact string
        ("compact_string", "0561"),
        ("compact_nullable_string", "ffffffff0f"),  # 4 GiB length with no data
        ("bytes", "7fffffff00"),  # 2 GiB length, one byte present: must not allocate
        ("bytes", "ffffffff"),
        ("bytes", "80000000"),
        ("nullable_bytes", "fffffffe"),
        ("compact_bytes", "00"),
        ("compact_nullable_bytes", "0a0102"),
        ("array_length", "7fffffff"),  # 2**31-1 elements in 0 bytes
        ("array_length", "fffffffe"),  # -2
        ("compact_array_length", "ffffffff0f"),
        ("tagged_fields", "0105"),  # one field, tag present, size missing
        ("tagged_fields", "01000a00"),  # size 10, one byte present
        ("skip_tagged_fields", "01000a00"),
    ],
)
def test_malformed_input_raises_protocol_decode_error(method, data):
    with pytest.raises(ProtocolDecodeError):
        getattr(Reader(bytes.fromhex(data)), method)()


def test_decode_error_is_a_kwire_error():
    assert issubclass(ProtocolDecodeError, KwireError)


def test_array_length_checks_minimum_element_size():
    data = struct.pack(">i", 3) + b"\x00" * 8
    assert Reader(data).array_length(min_element_size=2) == 3
    with pytest.raises(ProtocolDecodeError):
        Reader(data).array_length(min_element_size=4)


def test_writer_rejects_invalid_values():
    w = Writer()
    with pytest.raises(ValueError):
        w.string(None)
    with pytest.raises(ValueError):
        w.compact_string("x" * 40000)
    with pytest.raises(ValueError):
        w.uvarint(-1)
    with pytest.raises(ValueError):
        w.varint(2**31)
    with pytest.raises(ValueError):
        w.uuid(b"short")
    with pytest.raises(struct.error):
        w.int8(128)


# ---------------------------------------------------------------- round trips

INT_TYPES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (INT32_MIN, INT32_MAX),
    "int64": (INT64_MIN, INT64_MAX),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uvarint": (0, 2**32 - 1),
    "varint": (INT32_MIN, INT32_MAX),
    "varlong": (INT64_MIN, INT64_MAX),
}


@pytest.mark.parametrize("method", sorted(INT_TYPES))
@given(data=st.data())
@settings(max_examples=60)
def test_integer_round_trip(method, data):
    low, high = INT_TYPES[method]
    value = data.draw(st.integers(low, high) | st.sampled_from([low, high, 0]))
    assert read_all(method, written(method, value)) == value


@given(st.floats(allow_nan=False))
def test_float64_round_trip(value):
    assert read_all("float64", written("float64", value)) == value


@given(st.uuids() | st.just(ZERO_UUID))
def test_uuid_round_trip(value):
    assert read_all("uuid", written("uuid", value)) == value
    assert read_all("uuid", written("uuid", value.bytes)) == value


@pytest.mark.parametrize("method", ["string", "compact_string"])
@given(value=st.text(max_size=40))
def test_string_round_trip(method, value):
    assert read_all(method, written(method, value)) == value


@pytest.mark.parametrize("method", ["nullable_string", "compact_nullable_string"])
@given(value=st.none() | st.text(max_size=40))
def test_nullable_string_round_trip(method, value):
    assert read_all(method, written(method, value)) == value


@pytest.mark.parametrize("method", ["bytes", "compact_bytes"])
@given(value=st.binary(max_size=300))
def test_bytes_round_trip(method, value):
    assert read_all(method, written(method, value)) == value


@pytest.mark.parametrize("method", ["nullable_bytes", "compact_nullable_bytes"])
@given(value=st.none() | st.binary(max_size=300))
def test_nullable_bytes_round_trip(method, value):
    decoded = read_all(method, written(method, value))
    assert (decoded is None) if value is None else (decoded == value)


@given(st.binary(max_size=24))
@settings(max_examples=300)
def test_random_bytes_never_raise_anything_but_decode_errors(data):
    for method in ("uvarint", "varint", "varlong", "string", "compact_nullable_string",
                   "bytes", "compact_bytes", "array_length", "compact_array_length",
                   "tagged_fields", "uuid", "int64"):
        try:
            getattr(Reader(data), method)()
        except ProtocolDecodeError:
            pass
