"""The oracle of the JSON Schema tests: Python's ``json`` parses the payloads, and the parsed values are turned into
the Spark values the documented table (``spark_types.py``'s docstring) gives them, written here from that table,
not from kwire's code; plus the test schema and hypothesis strategies of values that fit it."""

from __future__ import annotations

import base64
import datetime
import json
import struct

from hypothesis import strategies as st

SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "required": ["id"],
    "definitions": {"Address": {"type": "object", "properties": {"city": {"type": "string"},
                                                                 "zip": {"type": ["integer", "null"]}}}},
    "properties": {
        "id": {"type": "integer"},
        "name": {"type": ["string", "null"]},
        "score": {"type": "number"},
        "ok": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "when": {"type": "string", "format": "date-time"},
        "day": {"type": "string", "format": "date"},
        "blob": {"type": "string", "contentEncoding": "base64"},
        "attrs": {"type": "object", "additionalProperties": {"type": ["number", "null"]}},
        "address": {"$ref": "#/definitions/Address"},
        "history": {"type": "array", "items": {"$ref": "#/definitions/Address"}},
        "kind": {"enum": ["a", "b", None]},
        "extra": {},
        "choice": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        "nothing": {"type": "null"},
    },
}
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def frame(schema_id: int, text: str | bytes) -> bytes:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return b"\x00" + struct.pack(">I", schema_id) + data


def spark(schema: dict, value, root: dict | None = None):
    """The Spark value of JSON ``value`` under ``schema`` (missing properties: null)."""
    root = root if root is not None else schema
    if "$ref" in schema:
        target = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target[part]
        return spark(target, value, root)
    if value is None:
        return None
    for keyword in ("oneOf", "anyOf"):  # [null, T] is T, nullable (the table's row); other choices are JSON text
        others = [o for o in schema.get(keyword, ()) if o != {"type": "null"}]
        if len(others) == 1 and len(schema[keyword]) == 2:
            return spark(others[0], value, root)
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else [k for k in (kinds or []) if k != "null"]
    if "enum" in schema:
        return value
    if not kinds or len(kinds) > 1 or "oneOf" in schema:
        return ("json", value)  # a JSON-text value: compared by parsing kwire's text
    kind = kinds[0]
    if kind == "object" and "properties" in schema:
        return {k: spark(s, value.get(k), root) for k, s in schema["properties"].items()}
    if kind == "object":
        return {k: spark(schema["additionalProperties"], v, root) for k, v in value.items()}
    if kind == "array":
        return [spark(schema["items"], v, root) for v in value]
    if kind == "string":
        if schema.get("format") == "date":
            return datetime.date.fromisoformat(value)
        if schema.get("format") == "date-time":
            parsed = datetime.datetime.fromisoformat(value.replace("z", "Z"))
            return EPOCH + datetime.timedelta(microseconds=(parsed - EPOCH) // datetime.timedelta(microseconds=1))
        if schema.get("contentEncoding") == "base64":
            return base64.b64decode(value)
        return value
    if kind == "number":
        return float(value)
    if kind == "integer":
        return int(value)
    return value


def compare(expected, got) -> bool:
    """``got`` (kwire's to_pylist value, maps as pairs) against the oracle's ``expected``."""
    if isinstance(expected, tuple) and expected and expected[0] == "json":
        return got is not None and json.loads(got) == expected[1]
    if isinstance(expected, dict):
        if isinstance(got, list):
            got = dict(got)
        return isinstance(got, dict) and set(got) == set(expected) and \
            all(compare(expected[k], got[k]) for k in expected)
    if isinstance(expected, list):
        return isinstance(got, list) and len(got) == len(expected) and all(map(compare, expected, got))
    if isinstance(expected, float) and isinstance(got, float):
        return expected == got or (expected != expected and got != got)
    return expected == got and type(expected) is type(got)


# ---- hypothesis ---------------------------------------------------------------------------------------------

TEXT = st.text(max_size=10)
JSON_SCALARS = st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | st.floats(allow_nan=False,
                                                                                          allow_infinity=False) | TEXT
ANY_JSON = st.recursive(JSON_SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner,
                                                                                                max_size=3),
                        max_leaves=6)
DATE = st.dates(datetime.date(1, 1, 1), datetime.date(9999, 12, 31))
OFFSETS = st.sampled_from(["Z", "z", "+00:00", "-05:30", "+14:00"])


def _date_time(d: datetime.datetime, offset: str, digits: int) -> str:
    text = f"{d.year:04d}-{d.month:02d}-{d.day:02d}T{d.hour:02d}:{d.minute:02d}:{d.second:02d}"
    if digits:
        text += "." + f"{d.microsecond:06d}{'123'}"[:digits]
    return text + offset


def _when(draw):
    d = draw(st.datetimes(datetime.datetime(1, 1, 2), datetime.datetime(9999, 12, 30)))
    return _date_time(d, draw(OFFSETS), draw(st.sampled_from([0, 3, 6, 9])))


address = st.fixed_dictionaries({}, optional={"city": TEXT, "zip": st.none() | st.integers(-2**63, 2**63 - 1)})
VALUES = st.fixed_dictionaries({"id": st.integers(-2**63, 2**63 - 1)}, optional={
    "name": st.none() | TEXT,
    "score": st.floats(allow_nan=False, allow_infinity=False) | st.integers(-2**53, 2**53),
    "ok": st.booleans(),
    "tags": st.lists(TEXT, max_size=3),
    "when": st.composite(lambda draw: _when(draw))(),
    "day": DATE.map(lambda d: d.isoformat()),
    "blob": st.binary(max_size=9).map(lambda b: base64.b64encode(b).decode()),
    "attrs": st.dictionaries(TEXT, st.none() | st.floats(allow_nan=False, allow_infinity=False), max_size=3),
    "address": address,
    "history": st.lists(address, max_size=2),
    "kind": st.sampled_from(["a", "b", None]),
    "extra": ANY_JSON,
    "choice": TEXT | st.integers(-10, 10),
    "nothing": st.none(),
    "unknown_property": ANY_JSON,
})
