"""The `.proto` files of the Protobuf tests: every type of spark-protobuf's mapping (proto3, proto2, editions),
an evolving message in three versions, and the shapes with options (recursion, empty messages, wrappers)."""

ALL_TYPES = """syntax = "proto3";
package kwire.pbtest;

import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/any.proto";
import "google/protobuf/empty.proto";

// every scalar, both presences, nested and repeated messages, maps, oneofs, enums and well-known types
message AllTypes {
  enum Color { COLOR_UNSET = 0; RED = 1; GREEN = 2; BLUE = -3; }
  message Point { int32 x = 1; sint64 y = 2; repeated string labels = 3; }

  int32 i32 = 1;
  int64 i64 = 2;
  uint32 u32 = 3;
  uint64 u64 = 4;
  sint32 s32 = 5;
  sint64 s64 = 6;
  fixed32 f32 = 7;
  fixed64 f64 = 8;
  sfixed32 sf32 = 9;
  sfixed64 sf64 = 10;
  float fl = 11;
  double db = 12;
  bool flag = 13;
  string text = 14;
  bytes data = 15;
  Color color = 16;
  optional int32 opt_i32 = 17;
  optional string opt_text = 18;
  optional Color opt_color = 19;
  Point point = 20;
  repeated Point points = 21;
  repeated int64 longs = 22;
  repeated sint32 zigzags = 23 [packed = false];
  repeated double doubles = 24;
  repeated string texts = 25;
  repeated bytes blobs = 26;
  repeated Color colors = 27;
  repeated bool flags = 28;
  repeated fixed32 fixeds = 29;
  map<string, int64> counts = 30;
  map<int32, Point> points_by_id = 31;
  map<bool, string> names_by_flag = 32;
  map<uint64, Color> colors_by_id = 33;
  oneof choice {
    string choice_text = 34;
    Point choice_point = 35;
    int64 choice_number = 36;
  }
  google.protobuf.Timestamp at = 37;
  google.protobuf.Duration took = 38;
  repeated google.protobuf.Timestamp times = 39;
  google.protobuf.Int32Value w_i32 = 40;
  google.protobuf.StringValue w_text = 41;
  google.protobuf.UInt64Value w_u64 = 42;
  google.protobuf.Any any = 43;
  google.protobuf.Empty nothing = 44;
  uint64 big_number = 536870911;
}

message Other {
  string name = 1;
}
"""

PROTO2 = """syntax = "proto2";
package kwire.pbtest2;

// proto2: explicit presence, defaults, required fields, closed enums, expanded repeated fields
message Legacy {
  enum Level { LOW = 1; MID = 5; HIGH = 9; }
  required int64 id = 1;
  optional string name = 2 [default = "anonymous"];
  optional int32 count = 3 [default = -7];
  optional double ratio = 4 [default = 0.5];
  optional bool active = 5 [default = true];
  optional bytes raw = 6 [default = "\\001\\002x"];
  optional Level level = 7 [default = MID];
  optional Level plain_level = 8;
  repeated Level levels = 9;
  repeated int32 numbers = 10;
  repeated int32 packed_numbers = 11 [packed = true];
  optional Part part = 12;
  optional uint32 small = 13 [default = 4294967295];
  optional float f = 14 [default = -inf];
}

message Part {
  required string code = 1;
  optional int32 qty = 2;
}
"""

EDITIONS = """edition = "2023";
package kwire.pbedition;

option features.field_presence = IMPLICIT;

message Item {
  enum Kind { option features.enum_type = CLOSED; KIND_A = 0; KIND_B = 1; }
  int32 plain = 1;
  int32 explicit = 2 [features.field_presence = EXPLICIT];
  repeated int32 expanded = 3 [features.repeated_field_encoding = EXPANDED];
  repeated int32 packed = 4;
  Kind kind = 5 [features.field_presence = EXPLICIT];
  string name = 6;
  Item2 child = 7;
}

message Item2 {
  int32 value = 1 [features.field_presence = LEGACY_REQUIRED];
}
"""

# an evolving topic: v2 adds fields and widens one (int32 -> int64), v3 drops one and renames another
ORDER_V1 = """syntax = "proto3";
package kwire.evo;
message Order {
  int64 id = 1;
  string customer = 2;
  int32 quantity = 3;
  repeated string tags = 4;
}
"""

ORDER_V2 = """syntax = "proto3";
package kwire.evo;
message Order {
  int64 id = 1;
  string customer = 2;
  int64 quantity = 3;
  repeated string tags = 4;
  double total = 5;
  Address address = 6;
  message Address { string city = 1; }
}
"""

ORDER_V3 = """syntax = "proto3";
package kwire.evo;
message Order {
  int64 id = 1;
  string buyer = 2;
  int64 quantity = 3;
  double total = 5;
  Address address = 6;
  optional string note = 7;
  message Address { string city = 1; string zip = 2; }
}
"""

ORDER_BROKEN = """syntax = "proto3";
package kwire.evo;
message Order {
  int64 id = 1;
  double customer = 2;
}
"""

RECURSIVE = """syntax = "proto3";
package kwire.rec;
message Person {
  string name = 1;
  Person friend = 2;
  repeated Person children = 3;
}
message Holder {
  Empty nothing = 1;
  int32 kept = 2;
  message Empty {}
}
"""
