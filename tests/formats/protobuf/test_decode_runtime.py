"""Decoding checked against Google's protobuf runtime: the payloads it writes (hypothesis values of every type, in
its order and in shuffled, split and merged orders), decoded by kwire, equal what spark-protobuf would show for
the message the runtime parses (``oracle.py``). Both of kwire's paths (one pass, two steps) and both kernel
implementations (numba, plain Python) give the same values."""

from __future__ import annotations

import datetime
import decimal
import random

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kwire.formats import kernels
from spark_kwire.formats.framing import confluent_header
from spark_kwire.formats.protobuf import ProtobufDecoder, ProtobufOptions
from tests.formats.protobuf import protos
from tests.formats.protobuf.oracle import Options, all_types, normalize, scrambled, spark_value

ALL = "kwire.pbtest.AllTypes"


def framed(payloads, indexes=(0,), schema_id=1):
    return pa.array([None if p is None else confluent_header(schema_id, list(indexes)) + p for p in payloads],
                    pa.binary())


def decoder_for(text, message=ALL, options=None, schema_id=1):
    d = ProtobufDecoder(text, message_name=message, options=options)
    d.add_writer_schema(schema_id, text)
    return d


def decode_both_ways(d, column):
    """The values of one-pass and two-step decoding, which must agree."""
    d.two_steps_only = False
    one = d.decode(column, mode="PERMISSIVE")
    d.two_steps_only = True
    two = d.decode(column, mode="PERMISSIVE")
    d.two_steps_only = False
    assert one.errors.tolist() == two.errors.tolist()
    assert one.values.to_pylist() == two.values.to_pylist()
    return one


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_type_equals_the_runtime_through_spark_protobufs_mapping(pb, data):
    messages = data.draw(st.lists(all_types(pb.all), min_size=1, max_size=6))
    d = decoder_for(protos.ALL_TYPES)
    seed = data.draw(st.integers(0, 2**32))
    rnd = random.Random(seed)
    payloads = [m.SerializeToString() for m in messages] + [scrambled(m, rnd) for m in messages]
    result = decode_both_ways(d, framed(payloads))
    assert result.error_count == 0, [result.describe(i) for i in range(len(payloads)) if result.errors[i]]
    got = [normalize(v, d.arrow_type) for v in result.values.to_pylist()]
    for payload, value in zip(payloads, got):
        parsed = pb.all.AllTypes.FromString(payload)
        assert value == spark_value(parsed), parsed


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_both_kernel_implementations_agree(pb, data):
    messages = data.draw(st.lists(all_types(pb.all), min_size=5, max_size=10))
    rnd = random.Random(data.draw(st.integers(0, 2**32)))
    column = framed([scrambled(m, rnd) for m in messages] + [m.SerializeToString() for m in messages])
    results = []
    for implementation in ("numba", "python"):
        with kernels.using(implementation):
            results.append(decode_both_ways(decoder_for(protos.ALL_TYPES), column).values.to_pylist())
    assert results[0] == results[1]


@pytest.mark.parametrize("options", [
    Options(enums_as_ints=True), Options(upcast_unsigned_ints=True), Options(emit_default_values=True),
    Options(unwrap_primitive_wrapper_types=True), Options(retain_empty_message_types=True),
    Options(True, True, True, True, True)])
def test_options_change_values_as_spark_protobuf_documents(pb, options):
    m = pb.all.AllTypes(i32=0, u32=4_000_000_000, u64=2**64 - 1, color=7, colors=[1, 7], text="", opt_i32=0)
    m.w_i32.value = 0
    m.w_text.value = "x"
    m.w_u64.value = 2**64 - 2
    m.nothing.SetInParent()
    m.points_by_id[3].x = 0
    empty = pb.all.AllTypes()
    kw = {k.replace(".", "_"): str(v).lower() for k, v in options.__dict__.items()}
    d = decoder_for(protos.ALL_TYPES, options={name.replace("_", "."): value for name, value in kw.items()})
    values = decode_both_ways(d, framed([m.SerializeToString(), b""])).values.to_pylist()
    got = [normalize(v, d.arrow_type) for v in values]
    assert got == [spark_value(m, options), spark_value(empty, options)]
    expected_type = pa.int32() if options.enums_as_ints else pa.string()
    assert d.arrow_type.field("color").type == expected_type
    if options.retain_empty_message_types:
        # retain.empty.message.types: an empty message keeps one string field, always null
        assert d.arrow_type.field("nothing").type == pa.struct([pa.field("__dummy_field_in_empty_struct", pa.string())])
        assert got[0]["nothing"] == {"__dummy_field_in_empty_struct": None}


def test_proto2_defaults_required_and_closed_enums(pb):
    Legacy = pb.legacy.Legacy
    full = Legacy(id=5, name="", count=0, ratio=0.0, active=False, raw=b"", level=Legacy.HIGH, plain_level=Legacy.LOW,
                  levels=[1, 9], numbers=[1, 2], packed_numbers=[3, -4], small=1, f=2.5)
    full.part.code = "c"
    bare = Legacy(id=-1)
    d = decoder_for(protos.PROTO2, "kwire.pbtest2.Legacy")
    # a closed enum's unknown numbers are unknown fields: a singular one keeps the value before it, a list drops them
    unknown_levels = bare.SerializeToString() + b"\x38\x03" + b"\x48\x09\x48\x04\x48\x01"
    got = [normalize(v, d.arrow_type) for v in decode_both_ways(d, framed([full.SerializeToString(),
                                                                           bare.SerializeToString(),
                                                                           unknown_levels])).values.to_pylist()]
    parsed = Legacy.FromString(unknown_levels)
    assert got == [spark_value(full), spark_value(bare), spark_value(parsed)]
    assert got[1]["name"] == "anonymous" and got[1]["count"] == -7 and got[1]["raw"] == b"\x01\x02x"
    assert got[1]["small"] == -1 and got[1]["f"] == float("-inf") and got[1]["level"] == "MID"
    assert got[2]["levels"] == ["HIGH", "LOW"] and got[2]["plain_level"] is None
    assert d.arrow_type.field("id").nullable is False  # required -> not nullable (SchemaConverters)


def test_editions_features(pb):
    Item = pb.editions.Item
    m = Item(plain=0, explicit=0, expanded=[1, 2], packed=[3], kind=Item.KIND_B, name="")
    m.child.value = 0
    d = decoder_for(protos.EDITIONS, "kwire.pbedition.Item")
    assert normalize(decode_both_ways(d, framed([m.SerializeToString()])).values.to_pylist()[0], d.arrow_type) == \
        spark_value(m)
    assert spark_value(m)["plain"] is None and spark_value(m)["explicit"] == 0


def test_merged_messages_oneof_switches_and_last_scalar_win(pb):
    """What only the two-step path can do: the pieces of a singular message merge, a later oneof member replaces
    an earlier one, a repeated scalar occurrence replaces the earlier (last one wins)."""
    A = pb.all.AllTypes
    pieces = [A(point=A.Point(x=1, labels=["a"])), A(choice_text="first"), A(i32=1),
              A(point=A.Point(y=2, labels=["b"])),
              A(choice_point=A.Point(x=9)), A(i32=2), A(choice_point=A.Point(y=3))]
    payload = b"".join(p.SerializeToString() for p in pieces)
    parsed = A.FromString(payload)
    assert parsed.point.labels == ["a", "b"] and parsed.WhichOneof("choice") == "choice_point"
    d = decoder_for(protos.ALL_TYPES)
    assert normalize(decode_both_ways(d, framed([payload])).values.to_pylist()[0], d.arrow_type) == spark_value(parsed)


def test_unknown_fields_and_wire_types_the_field_cannot_have_are_skipped(pb):
    A = pb.all.AllTypes
    known = A(i32=3, text="t")
    # field 1000 (unknown, every wire type, a group with a nested group), then i32 written as a string (wrong wire
    # type: an unknown field for protobuf runtimes), then a packed run of a singular field (unknown too)
    extra = (b"\xc0\x3e\x05" + b"\xc1\x3e" + b"\x00" * 8 + b"\xc2\x3e\x02hi" + b"\xc5\x3e" + b"\x00" * 4
             + b"\xc3\x3e" + b"\x08\x01\x0b\x10\x02\x0c" + b"\xc4\x3e" + b"\x0a\x01z" + b"\x0a\x02\x01\x02")
    payload = known.SerializeToString() + extra
    parsed = A.FromString(payload)
    d = decoder_for(protos.ALL_TYPES)
    result = decode_both_ways(d, framed([payload]))
    assert result.error_count == 0, result.describe(0)
    assert normalize(result.values.to_pylist()[0], d.arrow_type) == spark_value(parsed)


def test_recursive_messages_unrolled_as_deep_as_asked(pb):
    Person = pb.recursive.Person
    p = Person(name="a", friend=Person(name="b", friend=Person(name="c", friend=Person(name="d"))),
               children=[Person(name="k", children=[Person(name="g")])])
    d = decoder_for(protos.RECURSIVE, "kwire.rec.Person", options={"recursive.fields.max.depth": "2"})
    # recursive.fields.max.depth = 2: a Person inside a Person is kept, one level deeper is dropped
    assert d.arrow_type == pa.struct([
        pa.field("name", pa.string()),
        pa.field("friend", pa.struct([pa.field("name", pa.string())])),
        pa.field("children", pa.list_(pa.field("element", pa.struct([pa.field("name", pa.string())]), False)))])
    got = decode_both_ways(d, framed([p.SerializeToString()])).values.to_pylist()[0]
    assert got == {"name": "a", "friend": {"name": "b"}, "children": [{"name": "k"}]}


def test_timestamps_durations_and_wrappers_at_their_edges(pb):
    A = pb.all.AllTypes
    m = A()
    m.at.seconds, m.at.nanos = -62135596800, 999_999_999  # 0001-01-01T00:00:00.999999999
    m.took.seconds, m.took.nanos = -1, -500_001  # -1.000500001 s: microseconds truncated toward zero
    t = m.times.add()
    t.seconds, t.nanos = 0, 1500
    m.w_i32.value = 0  # a wrapper holding zero is present, its zero inner value shows as null (no presence)
    d = decoder_for(protos.ALL_TYPES)
    got = normalize(decode_both_ways(d, framed([m.SerializeToString()])).values.to_pylist()[0], d.arrow_type)
    assert got == spark_value(m)
    assert got["at"] == datetime.datetime(1, 1, 1, 0, 0, 0, 999999, tzinfo=datetime.timezone.utc)
    assert got["took"] == -datetime.timedelta(seconds=1, microseconds=500)
    assert got["times"] == [datetime.datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=datetime.timezone.utc)]
    assert got["w_i32"] == {"value": None}


def test_unsigned_upcast_types(pb):
    d = decoder_for(protos.ALL_TYPES, options=ProtobufOptions(upcast_unsigned_ints=True))
    assert d.arrow_type.field("u32").type == pa.int64() and d.arrow_type.field("u64").type == pa.decimal128(20, 0)
    assert d.arrow_type.field("f32").type == pa.int32()  # fixed32 is never upcast (only UINT32 is)
    m = pb.all.AllTypes(u32=2**32 - 1, u64=2**64 - 1, f32=2**32 - 1)
    got = decode_both_ways(d, framed([m.SerializeToString()])).values.to_pylist()[0]
    assert (got["u32"], got["u64"], got["f32"]) == (2**32 - 1, decimal.Decimal(2**64 - 1), -1)
