"""A topic written under three versions of a JSON Schema (a property added, one removed, an integer widened to a
number, an object grown), read with the latest in one batch: JSON carries its own names, so each row reads with
the reader's schema; properties it lacks are null, properties the reader lacks are skipped."""

from __future__ import annotations

import json

import pyarrow as pa

from spark_kwire.formats.json_schema import JsonSchemaDecoder
from tests.formats.json_schema.oracle import frame

V1 = {"type": "object", "properties": {"id": {"type": "integer"}, "qty": {"type": "integer"},
                                       "legacy": {"type": "string"}}, "required": ["id"]}
V2 = {"type": "object", "properties": {"id": {"type": "integer"}, "qty": {"type": "number"},
                                       "address": {"type": "object", "properties": {"city": {"type": "string"}}}},
      "required": ["id"]}
V3 = {"type": "object", "properties": {"id": {"type": "integer"}, "qty": {"type": "number"},
                                       "address": {"type": "object", "properties": {"city": {"type": "string"},
                                                                                    "zip": {"type": "string"}}},
                                       "note": {"type": ["string", "null"]}}, "required": ["id"]}


def test_three_versions_read_as_one_typed_result():
    d = JsonSchemaDecoder(V3)
    for schema_id, schema in ((1, V1), (2, V2), (3, V3)):
        d.add_writer_schema(schema_id, json.dumps(schema))
    rows = [(1, {"id": 1, "qty": 5, "legacy": "x"}), (2, {"id": 2, "qty": 2.5, "address": {"city": "Oslo"}}),
            (3, {"id": 3, "qty": 1, "address": {"city": "Rome", "zip": "00100"}, "note": None}), (1, {"id": 4})]
    values = pa.array([frame(sid, json.dumps(r)) for sid, r in rows])
    assert d.missing_schema_ids(values) == []
    result = d.decode(values)
    assert result.values.to_pylist() == [
        {"id": 1, "qty": 5.0, "address": None, "note": None},
        {"id": 2, "qty": 2.5, "address": {"city": "Oslo", "zip": None}, "note": None},
        {"id": 3, "qty": 1.0, "address": {"city": "Rome", "zip": "00100"}, "note": None},
        {"id": 4, "qty": None, "address": None, "note": None}]
    assert result.schema_ids.tolist() == [1, 2, 3, 1]
