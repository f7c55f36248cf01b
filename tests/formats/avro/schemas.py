"""Schemas the Avro tests share: one holding every type spark-avro maps (item by item of its
SchemaConverters), and three versions of an evolving topic."""

INNER = {"type": "record", "name": "Inner", "fields": [
    {"name": "x", "type": "int"}, {"name": "y", "type": ["null", "string"]}]}

ALL_TYPES = {"type": "record", "name": "AllTypes", "namespace": "kwire.test", "fields": [
    {"name": "n", "type": "null"},
    {"name": "b", "type": "boolean"},
    {"name": "i", "type": "int"},
    {"name": "l", "type": "long"},
    {"name": "f", "type": "float"},
    {"name": "d", "type": "double"},
    {"name": "by", "type": "bytes"},
    {"name": "s", "type": "string"},
    {"name": "e", "type": {"type": "enum", "name": "Suit", "symbols": ["HEARTS", "SPADES", "CLUBS"]}},
    {"name": "fx", "type": {"type": "fixed", "name": "Four", "size": 4}},
    {"name": "dec_b", "type": {"type": "bytes", "logicalType": "decimal", "precision": 38, "scale": 10}},
    {"name": "dec_f", "type": {"type": "fixed", "name": "Dec9", "size": 9, "logicalType": "decimal",
                               "precision": 21, "scale": 4}},
    {"name": "dec_0", "type": {"type": "bytes", "logicalType": "decimal", "precision": 3}},
    {"name": "dec_max_scale", "type": {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 5}},
    {"name": "date", "type": {"type": "int", "logicalType": "date"}},
    {"name": "ts_ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "ts_us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
    {"name": "lts_ms", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
    {"name": "lts_us", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
    {"name": "uuid", "type": {"type": "string", "logicalType": "uuid"}},
    {"name": "t_ms", "type": {"type": "int", "logicalType": "time-millis"}},
    {"name": "t_us", "type": {"type": "long", "logicalType": "time-micros"}},
    {"name": "rec", "type": INNER},
    {"name": "arr", "type": {"type": "array", "items": "long"}},
    {"name": "arr2", "type": {"type": "array", "items": {"type": "array", "items": ["null", "string"]}}},
    {"name": "arr_rec", "type": {"type": "array", "items": ["null", "Inner"]}},
    {"name": "m", "type": {"type": "map", "values": "int"}},
    {"name": "m_rec", "type": {"type": "map", "values": "Inner"}},
    {"name": "m_arr", "type": {"type": "map", "values": {"type": "array", "items": "double"}}},
    {"name": "opt", "type": ["null", "long"]},
    {"name": "opt_last", "type": ["double", "null"]},
    {"name": "opt_rec", "type": ["null", "Inner"]},
    {"name": "opt_enum", "type": ["null", "Suit"]},
    {"name": "int_long", "type": ["int", "long"]},
    {"name": "float_double", "type": ["float", "double"]},
    {"name": "int_long_null", "type": ["null", "int", "long"]},
    {"name": "members", "type": ["string", "int", "boolean"]},
    {"name": "members_null", "type": ["null", "bytes", "Inner", "Suit", "Four"]},
    {"name": "single", "type": ["string"]},
    {"name": "only_null", "type": ["null"]},
]}

# A topic's evolution: v1, then v2 (adds email with a default, removes legacy, promotes qty int -> long),
# then v3 (adds tags and address with defaults, promotes price float -> double and score int -> double,
# reads note string as bytes, drops the PURPLE colour symbol: the reader's default OTHER takes it).
V1 = {"type": "record", "name": "Customer", "namespace": "shop", "fields": [
    {"name": "id", "type": "long"},
    {"name": "name", "type": "string"},
    {"name": "legacy", "type": ["null", {"type": "record", "name": "Old", "fields": [
        {"name": "code", "type": "string"}, {"name": "hist", "type": {"type": "array", "items": "int"}},
        # skipped whole by readers of v2 and v3: unions nested in unions, a map of fixed
        {"name": "alt", "type": ["null", "string", {"type": "array", "items": ["null", "int", "double"]}]},
        {"name": "codes", "type": {"type": "map", "values": {"type": "fixed", "name": "Two", "size": 2}}}]}]},
    {"name": "qty", "type": "int"},
    {"name": "price", "type": "float"},
    {"name": "score", "type": "int"},
    {"name": "note", "type": "string"},
    {"name": "colour", "type": {"type": "enum", "name": "Colour", "symbols": ["RED", "GREEN", "PURPLE"]}},
]}
V2 = {"type": "record", "name": "Customer", "namespace": "shop", "fields": [
    {"name": "id", "type": "long"},
    {"name": "name", "type": "string"},
    {"name": "qty", "type": "long"},
    {"name": "price", "type": "float"},
    {"name": "score", "type": "int"},
    {"name": "note", "type": "string"},
    {"name": "email", "type": "string", "default": "unknown@example.com"},
    {"name": "colour", "type": {"type": "enum", "name": "Colour", "symbols": ["RED", "GREEN", "PURPLE"]}},
]}
V3 = {"type": "record", "name": "Customer", "namespace": "shop", "fields": [
    {"name": "id", "type": "long"},
    {"name": "full_name", "type": "string", "aliases": ["name"]},
    {"name": "qty", "type": "long"},
    {"name": "price", "type": "double"},
    {"name": "score", "type": "double"},
    {"name": "note", "type": "bytes"},
    {"name": "email", "type": "string", "default": "unknown@example.com"},
    {"name": "colour", "type": {"type": "enum", "name": "Colour", "symbols": ["RED", "GREEN", "OTHER"],
                                "default": "OTHER"}},
    {"name": "tags", "type": {"type": "array", "items": "string"}, "default": ["new"]},
    {"name": "address", "type": {"type": "record", "name": "Address", "fields": [
        {"name": "city", "type": "string"}, {"name": "zip", "type": ["null", "int"]}]},
     "default": {"city": "Paris", "zip": 75001}},
    {"name": "nickname", "type": ["null", "string"], "default": None},
]}
