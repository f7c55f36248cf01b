"""Protobuf schemas: `.proto` text read by kwire's parser gives the same model as protoc's descriptors of the
same text (proto2, proto3, editions, maps, oneofs, defaults, imports); the registry's base64 form and raw bytes
load too; what kwire does not support fails clearly, naming the line."""

from __future__ import annotations

import base64

import pyarrow as pa
import pytest

from harness.proto_text import compile_proto
from spark_kwire.formats.errors import SchemaError
from spark_kwire.formats.protobuf import load_schema, message_indexes, parse_proto, select_message
from spark_kwire.formats.protobuf.model import EnumType, MessageType
from spark_kwire.formats.protobuf.proto.parser import map_entry_name
from tests.client.registry.conftest import COMMON_PROTO, ORDER_PROTO
from tests.formats.protobuf import protos


def summary(schema) -> dict:
    """Everything decoding depends on, per type: comparable between two models of one file."""
    out = {}
    for name, t in sorted(schema.types.items()):
        if isinstance(t, EnumType):
            out[name] = ("enum", tuple(t.values), t.closed)
        else:
            assert isinstance(t, MessageType)
            fields = tuple((f.name, f.number, f.type, f.repeated, f.required, f.has_presence, f.packed, f.oneof,
                            f.message.full_name if f.message else f.enum.full_name if f.enum else "", repr(f.default),
                            f.utf8_check) for f in t.fields)
            out[name] = ("message", fields, tuple(n.name for n in t.nested), t.map_entry, tuple(t.oneofs))
    return out


@pytest.mark.parametrize("text", [protos.ALL_TYPES, protos.PROTO2, protos.EDITIONS, protos.RECURSIVE,
                                  protos.ORDER_V2, COMMON_PROTO])
def test_text_reads_as_protoc_describes_it(text):
    ours = load_schema(text)
    theirs = load_schema(compile_proto(text, name="schema.proto"))
    assert summary(ours) == summary(theirs)


def test_registry_forms_with_references():
    references = {"kwire/regtest/common.proto": COMMON_PROTO}
    descriptor = compile_proto(ORDER_PROTO, references, name="kwire/regtest/order.proto")
    common = compile_proto(COMMON_PROTO, name="kwire/regtest/common.proto")
    forms = [ORDER_PROTO, descriptor, descriptor.SerializeToString(),
             base64.b64encode(descriptor.SerializeToString()).decode()]
    summaries = set()
    for form in forms:
        for refs in (references, [("kwire/regtest/common.proto", base64.b64encode(common.SerializeToString()))]):
            schema = load_schema(form, refs)
            summaries.add(repr(summary(schema)))
            assert select_message(schema, None).full_name == "kwire.regtest.Order"
    assert len(summaries) == 1
    # google/protobuf/*.proto come from the runtime; other imports must be given
    with pytest.raises(SchemaError, match="imports 'kwire/regtest/common.proto', which was not given"):
        load_schema(ORDER_PROTO)


def test_message_selection_and_indexes():
    schema = load_schema(protos.ORDER_V2 + "\nmessage Second { Order.Address a = 1; message Deep {} }\n")
    assert message_indexes(schema, select_message(schema, None)) == [0]
    assert message_indexes(schema, select_message(schema, "Order.Address")) == [0, 0]
    assert message_indexes(schema, select_message(schema, "kwire.evo.Second.Deep")) == [1, 0]
    assert select_message(schema, "Deep").full_name == "kwire.evo.Second.Deep"
    with pytest.raises(SchemaError, match="message 'Nope' is not defined.*kwire.evo.Order"):
        select_message(schema, "Nope")


def test_map_entries_are_placed_and_named_as_protoc_does():
    text = 'syntax = "proto3"; message M { map<string, int32> my_map = 1; message N {} map<int64, N> x_y = 2; }'
    ours = parse_proto(text)
    theirs = compile_proto(text)
    assert [n.name for n in ours.message_type[0].nested_type] == [n.name for n in theirs.message_type[0].nested_type]
    assert map_entry_name("my_map") == "MyMapEntry" and map_entry_name("a__b9c") == "AB9cEntry"


@pytest.mark.parametrize("text, message", [
    ('syntax = "proto2"; message M { optional group G = 1 { optional int32 a = 2; } }',
     "proto2 groups are not supported"),
    ('syntax = "proto4";', "unknown syntax 'proto4'"),
    ('edition = "2099";', "edition '2099' is not supported"),
    ('syntax = "proto3"; message M { int32 a = 1 }', "expected ';', found '}' at line 1"),
    ('syntax = "proto3"; message M { int32 a = 0; }', "field number 0 is out of the allowed range"),
    ('syntax = "proto3"; message M { int32 a = 1; int32 b = 1; }', "same number 1"),
    ('syntax = "proto3"; message M { Missing a = 1; }', "has type Missing, which is not defined"),
    ('syntax = "proto3";\nmessage M {\n  string s = 1 [default = "x"\n}', "at line 4"),
    ('syntax = "proto2"; message M { int32 a = 1; }', "needs a label"),
    ('syntax = "proto3"; message M { required int32 a = 1; }', "required fields are not allowed in proto3"),
    ('syntax = "proto3"; enum E { A = 1; }', "first value of proto3 enum E must be 0"),
    ('syntax = "proto3"; message M { map<double, int32> m = 1; }', "map keys must be integers, bool or string"),
    ('syntax = "proto3"; message M { string s = 1; /* unterminated', "unterminated /\\* comment"),
])
def test_unsupported_or_malformed_text_fails_clearly(text, message):
    with pytest.raises(SchemaError, match=message):
        load_schema(text)


def test_groups_in_descriptors_are_refused_when_read():
    descriptor = compile_proto('syntax = "proto2"; message M { optional group G = 1 { optional int32 a = 2; } }')
    from spark_kwire.formats.protobuf import ProtobufDecoder

    with pytest.raises(SchemaError, match="^g: proto2 groups"):  # protoc names the field g
        ProtobufDecoder(descriptor)


def test_options_and_comments_are_skipped():
    text = '''// leading
syntax = "proto3"; /* block */
package a.b;
option java_package = "x.y"; option (custom) = { a: 1 b: [1, 2] };
import public "google/protobuf/empty.proto";
import "google/protobuf/descriptor.proto";
message Custom { int32 a = 1; repeated int32 b = 2; }
extend google.protobuf.FileOptions { Custom custom = 50001; }
extend google.protobuf.FieldOptions { string field_opt = 50002; }
extend google.protobuf.OneofOptions { int32 x = 50003; }
message M {
  option deprecated = true;
  int32 a = 1 [deprecated = true, (a.b.field_opt) = "z", json_name = "A"];
  reserved 2, 5 to 9; reserved "old";
  oneof o { option (x) = 1; string s = 10; }
  enum E { option allow_alias = true; Z = 0; Y = 0 [deprecated = true]; reserved 3; }
  E e = 11;
}
service S { rpc Call (M) returns (M) { option idempotency_level = NO_SIDE_EFFECTS; } }
'''
    assert summary(load_schema(text)) == summary(load_schema(compile_proto(text)))
    assert pa.types.is_struct(ProtobufArrow(text))


def ProtobufArrow(text):
    from spark_kwire.formats.protobuf import arrow_type

    schema = load_schema(text)
    return arrow_type(select_message(schema, None))
