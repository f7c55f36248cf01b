"""Bad Protobuf input: framing errors, message indexes naming another or no message, truncated and malformed
payloads, missing required fields, invalid UTF-8, unknown schema ids. FAILFAST names the row, the schema id,
what was wrong and the field; PERMISSIVE nulls the row and reports it, the others decode as if it were not
there. Mutated payloads never crash or hang, and what kwire accepts, Google's runtime parses to the same
values (what it rejects, the runtime rejects too, with one documented exception)."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest
from google.protobuf.message import DecodeError as RuntimeDecodeError

from spark_kwire.formats import kernels
from spark_kwire.formats.errors import DecodeError, ResolutionError
from spark_kwire.formats.framing import confluent_header
from spark_kwire.formats.protobuf import ProtobufDecoder
from spark_kwire.formats.vm import codes
from tests.formats.protobuf import protos
from tests.formats.protobuf.oracle import normalize, spark_value

ALL = "kwire.pbtest.AllTypes"


@pytest.fixture(params=["numba", "python"])
def decoder(request):
    with kernels.using(request.param):
        d = ProtobufDecoder(protos.ALL_TYPES, message_name=ALL)
        d.add_writer_schema(1, protos.ALL_TYPES)
        yield d


def good(pb) -> bytes:
    m = pb.all.AllTypes(i32=7, text="seven", texts=["a"], color=1)
    m.point.x = 3
    return confluent_header(1, [0]) + m.SerializeToString()


def decode_bad(decoder, pb, bad: bytes, code: int, field: str | None):
    values = pa.array([good(pb), bad, good(pb)], pa.binary())
    for two_steps in (False, True):
        decoder.two_steps_only = two_steps
        with pytest.raises(DecodeError) as info:
            decoder.decode(values, mode="FAILFAST")
        err = info.value
        assert err.row == 1 and err.reason == codes.message(code), str(err)
        if field is not None:
            assert err.path == field and f"in field {field}" in str(err)
        result = decoder.decode(values, mode="PERMISSIVE")
        assert result.errors.tolist() == [False, True, False]
        assert int(result.error_codes[1]) == code
        rows = result.values.to_pylist()
        assert rows[1] is None and rows[0] == rows[2] and rows[0]["text"] == "seven"
    decoder.two_steps_only = False
    return err


def test_framing_and_message_index_errors(decoder, pb):
    payload = good(pb)[6:]
    decode_bad(decoder, pb, b"\x00\x00\x00", codes.E_SHORT, None)
    decode_bad(decoder, pb, b"\x01" + good(pb)[1:], codes.E_MAGIC, None)
    decode_bad(decoder, pb, confluent_header(1, [1]) + b"", codes.E_OTHER_MESSAGE, None)  # message Other
    decode_bad(decoder, pb, confluent_header(1, [2]) + payload, codes.E_MESSAGE_INDEX, None)
    decode_bad(decoder, pb, confluent_header(1, [0, 0]) + payload, codes.E_OTHER_MESSAGE, None)  # AllTypes.Point
    decode_bad(decoder, pb, confluent_header(1)[:5] + b"\x05", codes.E_BAD_INDEXES, None)
    err = decode_bad(decoder, pb, confluent_header(99, [0]) + payload, codes.E_UNKNOWN_SCHEMA, None)
    assert err.schema_id == 99 and "(schema id 99)" in str(err)


def test_malformed_payloads(decoder, pb):
    head = confluent_header(1, [0])
    decode_bad(decoder, pb, head + b"\x00\x01", codes.E_BAD_TAG, None)  # field number 0
    decode_bad(decoder, pb, head + b"\x0f", codes.E_BAD_WIRE_TYPE, None)  # field 1, wire type 7
    decode_bad(decoder, pb, head + b"\x08" + b"\xff" * 11, codes.E_BAD_VARINT, None)
    decode_bad(decoder, pb, head + b"\x72\x05ab", codes.E_TRUNCATED, None)  # text: 5 bytes announced, 2 there
    decode_bad(decoder, pb, head + b"\x72\x02\xc3\x28", codes.E_BAD_UTF8, "text")
    decode_bad(decoder, pb, head + b"\xa2\x01\x03\x08\x01\x0b", codes.E_BAD_GROUP, "point")  # group never closed
    decode_bad(decoder, pb, head + b"\x0b\x08\x01\x14", codes.E_BAD_GROUP, None)  # ends group 2, not 1
    decode_bad(decoder, pb, head + b"\xb2\x01\x03\x01\x02\xff", codes.E_TRUNCATED, "longs")  # packed run cut


def test_required_fields_and_timestamp_range(pb):
    d = ProtobufDecoder(protos.PROTO2, message_name="kwire.pbtest2.Legacy")
    d.add_writer_schema(1, protos.PROTO2)
    ok = pb.legacy.Legacy(id=1)
    no_id = pb.legacy.Legacy(name="x")
    bad_part = pb.legacy.Legacy(id=2)
    bad_part.part.qty = 1  # Part.code is required
    values = pa.array([confluent_header(1, [0]) + m.SerializePartialToString() for m in (ok, no_id, bad_part)])
    result = d.decode(values, mode="PERMISSIVE")
    assert result.errors.tolist() == [False, True, True]
    assert [result.describe(1), result.describe(2)] == ["required field is missing (field id)",
                                                        "required field is missing (field part.code)"]
    # the runtime finds them uninitialized; Java's parser (spark-protobuf's DynamicMessage.parseFrom) refuses those
    assert not pb.legacy.Legacy.FromString(no_id.SerializePartialToString()).IsInitialized()
    assert not pb.legacy.Legacy.FromString(bad_part.SerializePartialToString()).IsInitialized()
    a = ProtobufDecoder(protos.ALL_TYPES, message_name=ALL)
    a.add_writer_schema(1, protos.ALL_TYPES)
    m = pb.all.AllTypes()
    m.at.seconds = 2**62
    result = a.decode(pa.array([confluent_header(1, [0]) + m.SerializeToString()]), mode="PERMISSIVE")
    assert result.describe(0) == codes.message(codes.E_TIMESTAMP_RANGE) + " (field at)"


def test_incompatible_writer_schema_is_refused_naming_the_field():
    d = ProtobufDecoder(protos.ORDER_V1)
    with pytest.raises(ResolutionError, match="customer: field number 2 was written as double"):
        d.add_writer_schema(5, protos.ORDER_BROKEN)
    assert d.known_schema_ids() == []


def test_mutated_payloads_never_crash_and_agree_with_the_runtime(pb):
    """Random byte flips, cuts and insertions: every row ends decoded or reported, never a crash or a hang. When
    kwire accepts a payload the runtime parses it to the same values; when kwire refuses one the runtime refuses
    it too, except for invalid UTF-8 in a string of a message the runtime skips (kwire checks every string it
    reads; a field the reader does not know is skipped by both)."""
    rnd = random.Random(1234)
    d = ProtobufDecoder(protos.ALL_TYPES, message_name=ALL)
    d.add_writer_schema(1, protos.ALL_TYPES)
    base = []
    for i in range(30):
        m = pb.all.AllTypes(i64=i * 7919, text=f"t{i}", longs=[i, -i], counts={"k": i}, color=i % 3)
        m.point.labels.append("x" * i)
        m.at.seconds = i * 1000
        base.append(m.SerializeToString())
    payloads = []
    for _ in range(1500):
        p = bytearray(rnd.choice(base))
        for _ in range(rnd.randint(1, 3)):
            kind = rnd.random()
            if kind < 0.5 and p:
                p[rnd.randrange(len(p))] = rnd.randrange(256)
            elif kind < 0.75 and p:
                del p[rnd.randrange(len(p)):]
            else:
                at = rnd.randrange(len(p) + 1)
                p[at:at] = bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 4)))
        payloads.append(bytes(p))
    result = d.decode(pa.array([confluent_header(1, [0]) + p for p in payloads]), mode="PERMISSIVE")
    rows = result.values.to_pylist()
    agreed = refused_both = 0
    for payload, row, bad in zip(payloads, rows, result.errors.tolist()):
        try:
            parsed = pb.all.AllTypes.FromString(payload)
        except RuntimeDecodeError:
            parsed = None
        if not bad:
            assert parsed is not None and normalize(row, d.arrow_type) == spark_value(parsed)
            agreed += 1
        elif parsed is None:
            refused_both += 1
        else:
            assert int(result.error_codes[payloads.index(payload)]) in (codes.E_BAD_UTF8, codes.E_TIMESTAMP_RANGE)
    assert agreed > 100 and refused_both > 100
