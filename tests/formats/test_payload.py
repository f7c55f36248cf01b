"""The formats by name (``payload_format``): each gives a decoder, an encoder, its framing and a derived schema
through the same calls, and a round trip through them returns the values; unknown names and options misplaced
fail saying what is accepted."""

from __future__ import annotations

import datetime

import pyarrow as pa
import pytest

from spark_kwire.formats.payload import FORMATS, payload_format

REGISTRY_FORMATS = ("avro", "protobuf", "json-schema")  # plain JSON ("json") has no registry schema

ROW = pa.struct([pa.field("id", pa.int64()), pa.field("name", pa.string()),
                 pa.field("at", pa.timestamp("us", "UTC")), pa.field("tags", pa.list_(pa.string())),
                 pa.field("address", pa.struct([pa.field("city", pa.string())]))])
VALUES = [{"id": 1, "name": "a", "at": datetime.datetime(2024, 5, 1, tzinfo=datetime.timezone.utc),
           "tags": ["x"], "address": {"city": "Oslo"}},
          {"id": 2, "name": None, "at": None, "tags": [], "address": None}]


@pytest.mark.parametrize("name", REGISTRY_FORMATS)
def test_every_format_round_trips_through_the_same_calls(name):
    fmt = payload_format(name)
    schema = fmt.derive_schema(ROW)
    values = fmt.encoder(schema, 11).encode(pa.array(VALUES + [None], ROW)).values
    decoder = fmt.decoder(schema)
    assert decoder.missing_schema_ids(values) == [11]
    decoder.add_writer_schema(11, schema)
    frames = fmt.frames(values)
    assert (frames.index_offsets is not None) is (name == "protobuf")
    result = decoder.decode(frames, mode="PERMISSIVE")
    assert result.error_count == 0
    got = result.values.to_pylist()
    assert got[2] is None and [g["id"] for g in got[:2]] == [1, 2]
    assert got[0]["at"] == VALUES[0]["at"] and got[0]["address"] == {"city": "Oslo"} and got[0]["tags"] == ["x"]
    assert fmt.schema_type == {"avro": "AVRO", "protobuf": "PROTOBUF", "json-schema": "JSON"}[name]


def test_names_and_options_are_checked():
    assert set(FORMATS) == set(REGISTRY_FORMATS) | {"json"}
    with pytest.raises(ValueError, match="json has no schema registry schemas"):
        payload_format("json").derive_schema(ROW)
    assert payload_format("JSON-Schema").name == "json-schema" and payload_format("proto").name == "protobuf"
    with pytest.raises(ValueError, match="unknown payload format 'xml'; accepted: avro, protobuf, json-schema"):
        payload_format("xml")
    with pytest.raises(ValueError, match="message_name: not an option of the avro decoder \\(it takes time_type\\)"):
        payload_format("avro").decoder('"string"', message_name="X")
    with pytest.raises(ValueError, match="time_type: not an option of the json-schema decoder \\(it takes no "):
        payload_format("json-schema").decoder("{}", time_type=True)


def test_record_names_and_named_derived_schemas_as_confluents_record_strategy_names_subjects():
    avro, proto, js = (payload_format(n) for n in REGISTRY_FORMATS)
    assert avro.record_name(avro.derive_named(ROW, "shop.Order")) == "shop.Order"
    assert avro.record_name(avro.derive_schema(ROW)) == "topLevelRecord"
    named = proto.derive_named(ROW, "shop.v1.Order")
    assert "package shop.v1;" in named and "message Order {" in named
    assert proto.record_name(named) == "shop.v1.Order"
    two = 'syntax = "proto3"; package p; message A { int32 x = 1; } message B { string y = 1; }'
    assert (proto.record_name(two), proto.record_name(two, message_name="B")) == ("p.A", "p.B")
    assert js.record_name(js.derive_named(ROW, "shop.Order")) == "shop.Order"
    assert js.record_name(js.derive_schema(ROW)) is None  # no title: Confluent's record strategy has no name
    # references are (name, schema) pairs for every format; Avro's classes take the texts
    assert avro.references([("shop.Money", '"long"')]) == ['"long"']
    assert js.references([("a.json", "{}")]) == [("a.json", "{}")]
