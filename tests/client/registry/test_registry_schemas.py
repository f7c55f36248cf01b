"""What the test registry does to schemas, checked against independent implementations: its `.proto` printer
against protoc (printed text compiles back into the same descriptor), its Avro canonical form against fastavro
(the Parsing Canonical Form of the original and of the canonical text are equal)."""

from __future__ import annotations

import json
from pathlib import Path

import fastavro
import pytest

from harness.proto_text import ProtoPrintError, compile_proto, identity, print_proto, well_known_include_dir
from harness.registry_schemas import InvalidSchema, parse_schema

WELL_KNOWN = sorted(p.relative_to(well_known_include_dir()).as_posix()
                    for p in Path(well_known_include_dir(), "google", "protobuf").rglob("*.proto"))

PROTO3_FEATURES = r'''
syntax = "proto3";
package kwire.printer.v1;
import "google/protobuf/timestamp.proto";
option java_package = "io.kwire.printer";
option java_multiple_files = true;
message Order {
  enum Status { option allow_alias = true; UNKNOWN = 0; NEW = 1; FRESH = 1; reserved 5 to 7, 9; reserved "OLD"; }
  string id = 1 [json_name = "orderId"];
  optional int64 amount_cents = 2;
  repeated double weights = 3 [packed = false];
  map<string, Line> lines = 4;
  oneof payment { string card = 5; bytes token = 6 [deprecated = true]; }
  google.protobuf.Timestamp placed_at = 7;
  Status status = 8;
  message Line { string sku = 1; uint32 qty = 2; map<int32, Status> by_code = 3; }
  reserved 10, 12 to 15, 100 to max;
  reserved "legacy", "older";
  sint32 s32 = 16; sfixed64 sf64 = 17; fixed32 f32 = 18; float f = 19; bool b = 20;
}
service Orders {
  rpc Place(Order) returns (Order);
  rpc Watch(stream Order) returns (stream Order) { option deprecated = true; }
}
'''

PROTO2_FEATURES = r'''
syntax = "proto2";
package legacy;
message Thing {
  required string name = 1 [default = "a \"quoted\"\n\tvalue é"];
  optional bytes blob = 2 [default = "\001\377ab"];
  optional double ratio = 3 [default = -inf];
  optional float nanny = 9 [default = nan];
  optional Kind kind = 4 [default = BETA];
  repeated int32 nums = 5 [packed = true];
  extensions 100 to 199, 1000 to max;
  enum Kind { ALPHA = 1; BETA = 2; }
}
extend Thing { optional string note = 100; repeated int64 marks = 101; }
message Holder { extend Thing { optional Holder holder = 150; } optional int32 x = 1; }
'''

EDITIONS_FEATURES = r'''
edition = "2023";
package ed;
option features.field_presence = IMPLICIT;
message M {
  int32 a = 1 [features.field_presence = EXPLICIT];
  repeated int32 b = 2 [features.repeated_field_encoding = EXPANDED];
  string c = 3;
  M child = 4 [features.message_encoding = DELIMITED];
  reserved foo, bar;
}
enum Open { option features.enum_type = CLOSED; ZERO = 0; ONE = 1; }
'''


@pytest.mark.parametrize("path", WELL_KNOWN)
def test_printer_round_trips_every_well_known_file(path):
    original = compile_proto(Path(well_known_include_dir(), path).read_text(), name=path.replace("/", "_"))
    again = compile_proto(print_proto(original))
    assert identity(again) == identity(original)


@pytest.mark.parametrize("text", [PROTO3_FEATURES, PROTO2_FEATURES, EDITIONS_FEATURES], ids=["proto3", "proto2",
                                                                                            "editions"])
def test_printer_round_trips_language_features(text):
    original = compile_proto(text)
    printed = print_proto(original)
    assert identity(compile_proto(printed)) == identity(original)
    assert identity(compile_proto(printed)) != identity(compile_proto(text + "\nmessage Extra { repeated int32 z = 1; }\n"))


def test_printer_refuses_groups_instead_of_printing_something_else():
    grouped = compile_proto('syntax = "proto2"; message G { optional group Inner = 1 { optional int32 x = 2; } }')
    with pytest.raises(ProtoPrintError, match="group"):
        print_proto(grouped)


AVRO_SPELLINGS = [
    ('"string"', '{"type": "string"}'),
    ('{"type": "long", "logicalType": "timestamp-millis"}', '{"logicalType": "timestamp-millis", "type": "long"}'),
    (json.dumps({"type": "record", "name": "a.b.R", "fields": [{"name": "x", "type": "int"}]}),
     json.dumps({"namespace": "a.b", "type": "record", "name": "R", "fields": [{"type": {"type": "int"}, "name": "x"}]})),
    (json.dumps({"type": "record", "name": "Outer", "namespace": "n", "fields": [
        {"name": "inner", "type": {"type": "record", "name": "Inner", "fields": [{"name": "e", "type": {
            "type": "enum", "name": "Color", "namespace": "other", "symbols": ["RED", "GREEN"], "default": "RED"}}]}},
        {"name": "again", "type": "Inner"}, {"name": "color", "type": "other.Color"},
        {"name": "fx", "type": {"type": "fixed", "name": "F", "size": 4}, "doc": "four bytes"},
        {"name": "m", "type": {"type": "map", "values": {"type": "array", "items": "n.Inner"}}, "default": {}},
        {"name": "u", "type": ["null", "Inner"], "default": None, "aliases": ["uu"]}]}),
     json.dumps({"fields": [
         {"type": {"fields": [{"type": {"symbols": ["RED", "GREEN"], "type": "enum", "name": "other.Color",
                                        "default": "RED"}, "name": "e"}], "type": "record", "name": "n.Inner"},
          "name": "inner"},
         {"name": "again", "type": "n.Inner"}, {"name": "color", "type": "other.Color"},
         {"doc": "four bytes", "name": "fx", "type": {"size": 4, "type": "fixed", "name": "F"}},
         {"default": {}, "name": "m", "type": {"values": {"items": "Inner", "type": "array"}, "type": "map"}},
         {"aliases": ["uu"], "name": "u", "type": ["null", "n.Inner"], "default": None}],
         "type": "record", "name": "n.Outer"})),
]


@pytest.mark.parametrize("first, second", AVRO_SPELLINGS)
def test_avro_spellings_of_one_schema_share_a_canonical_form_that_means_the_same(first, second):
    a, b = parse_schema("AVRO", first, []), parse_schema("AVRO", second, [])
    assert a.identity == b.identity
    for original in (first, second):
        assert fastavro.schema.to_parsing_canonical_form(fastavro.parse_schema(json.loads(a.text))) == \
            fastavro.schema.to_parsing_canonical_form(fastavro.parse_schema(json.loads(original)))


def test_avro_changes_that_matter_change_the_canonical_form():
    base = {"type": "record", "name": "R", "fields": [{"name": "x", "type": "int"}]}
    changed = [dict(base, name="S"), dict(base, namespace="ns"), dict(base, fields=[{"name": "x", "type": "long"}]),
               dict(base, fields=[{"name": "x", "type": "int", "default": 1}]), dict(base, doc="documented")]
    forms = {parse_schema("AVRO", json.dumps(s), []).identity for s in [base, *changed]}
    assert len(forms) == 1 + len(changed)


@pytest.mark.parametrize("kind, text", [
    ("AVRO", '{"type": "record", "name": "R", "fields": [{"name": "x", "type": "Missing"}]}'),
    ("AVRO", '{"type": "enum", "name": "E", "symbols": ["A", "A"]}'),
    ("AVRO", "not json"),
    ("JSON", '{"type": "no-such-type"}'),
    ("JSON", "[1, 2]"),
    ("PROTOBUF", 'syntax = "proto3"; message M { int32 x = 0; }'),
    ("PROTOBUF", ""),
])
def test_invalid_schemas_are_refused_with_the_parsers_reason(kind, text):
    with pytest.raises(InvalidSchema):
        parse_schema(kind, text, [])
