"""Test helpers written from the Avro specification and fastavro's documented behaviour, independent of the
code under test: framing payloads as Confluent's serializers do, decoding them with fastavro, turning
fastavro's Python values into the shape spark-avro gives them (what ``pa.Array.to_pylist()`` of kwire's
column shows), and hypothesis strategies generating values of a schema."""

from __future__ import annotations

import datetime
import decimal
import io
import struct
import uuid

import fastavro
from hypothesis import strategies as st

PRIMITIVE = ("null", "boolean", "int", "long", "float", "double", "bytes", "string")


def frame(schema_id: int, payload: bytes) -> bytes:
    return b"\x00" + struct.pack(">I", schema_id) + payload


def write(schema, record) -> bytes:
    """fastavro's binary encoding of one value (no container, no framing)."""
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), record)
    return out.getvalue()


def read(payload: bytes, writer, reader=None):
    """fastavro's decoding, union values of named types as (name, value)."""
    ws = fastavro.parse_schema(writer)
    rs = fastavro.parse_schema(reader) if reader is not None else None
    return fastavro.schemaless_reader(io.BytesIO(payload), ws, rs, return_named_type=True)


class Names:
    """Named types of a schema JSON, by full name and short name (enough for test schemas)."""

    def __init__(self, schema) -> None:
        self.types: dict[str, dict] = {}
        self._collect(schema, "")

    def _collect(self, s, ns: str) -> None:
        if isinstance(s, list):
            for b in s:
                self._collect(b, ns)
        elif isinstance(s, dict):
            t = s.get("type")
            if t in ("record", "enum", "fixed"):
                name = s["name"]
                space = s.get("namespace", ns) if "." not in name else name.rsplit(".", 1)[0]
                full = name if "." in name else (f"{space}.{name}" if space else name)
                self.types[full] = s
                self.types[full.rsplit(".", 1)[-1]] = s
                ns = space
                for f in s.get("fields", []):
                    self._collect(f["type"], ns)
            elif t == "array":
                self._collect(s["items"], ns)
            elif t == "map":
                self._collect(s["values"], ns)
            elif isinstance(t, (dict, list)):
                self._collect(t, ns)

    def get(self, s):
        if isinstance(s, str) and s not in PRIMITIVE:
            return self.types[s]
        if isinstance(s, dict) and isinstance(s.get("type"), str) and s["type"] not in PRIMITIVE + (
                "record", "enum", "fixed", "array", "map"):
            return self.types[s["type"]]
        return s


def kind(s) -> str:
    if isinstance(s, list):
        return "union"
    if isinstance(s, str):
        return s
    t = s["type"]
    return t if isinstance(t, str) else kind(t)


def logical(s) -> str | None:
    return s.get("logicalType") if isinstance(s, dict) else None


def _branch_of(value, branches, names: Names) -> int:
    """Which branch fastavro read (named types come as (name, value))."""
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
        for i, b in enumerate(branches):
            d = names.get(b)
            if isinstance(d, dict) and d.get("type") in ("record", "enum", "fixed"):
                full = d["name"]
                if value[0] == full or value[0].rsplit(".", 1)[-1] == full.rsplit(".", 1)[-1]:
                    return i
    tests = [
        ("null", lambda v: v is None), ("boolean", lambda v: isinstance(v, bool)),
        ("int", lambda v: isinstance(v, (int, datetime.date, datetime.time)) and not isinstance(v, bool)),
        ("long", lambda v: isinstance(v, (int, datetime.datetime, datetime.time)) and not isinstance(v, bool)),
        ("float", lambda v: isinstance(v, float)), ("double", lambda v: isinstance(v, float)),
        ("bytes", lambda v: isinstance(v, (bytes, decimal.Decimal))),
        ("string", lambda v: isinstance(v, (str, uuid.UUID))),
        ("array", lambda v: isinstance(v, list)), ("map", lambda v: isinstance(v, dict)),
    ]
    for i, b in enumerate(branches):
        k = kind(names.get(b))
        for name, test in tests:
            if k == name and test(value):
                return i
    raise AssertionError(f"no branch of {branches} for {value!r}")


def spark_shape(schema, value, names: Names | None = None):
    """A value as fastavro read it, in the shape spark-avro gives it (and Arrow's to_pylist shows)."""
    names = names or Names(schema)
    s = names.get(schema)
    k = kind(s)
    if value is None:
        return None
    if k == "union":
        nn = [b for b in s if kind(names.get(b)) != "null"]
        i = _branch_of(value, s, names)
        inner = value[1] if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str) else value
        if kind(names.get(s[i])) == "null":
            return None
        nn_kinds = sorted(kind(names.get(b)) for b in nn)
        if len(nn) == 1 or nn_kinds in (["int", "long"], ["double", "float"]):
            return spark_shape(s[i], inner, names)
        k_index = nn.index(s[i])
        return {f"member{j}": (spark_shape(s[i], inner, names) if j == k_index else None) for j in range(len(nn))}
    if k == "record":
        return {f["name"]: spark_shape(f["type"], value.get(f["name"]), names) for f in s["fields"]}
    if k == "array":
        return [spark_shape(s["items"], v, names) for v in value]
    if k == "map":
        return [(key, spark_shape(s["values"], v, names)) for key, v in value.items()]
    lt = logical(s)
    if lt == "uuid":
        return str(value)
    if lt == "time-millis" and isinstance(value, datetime.time):
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000
    if lt == "time-micros" and isinstance(value, datetime.time):
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond
    return value


# ---- hypothesis strategies of values, from the schema JSON ----

def values(schema, names: Names | None = None):
    names = names or Names(schema)
    s = names.get(schema)
    k = kind(s)
    lt = logical(s)
    if k == "union":
        return st.one_of(*[values(b, names) for b in s])
    if k == "null":
        return st.none()
    if k == "boolean":
        return st.booleans()
    if k == "int":
        if lt == "date":
            return st.integers(-25000, 50000)  # about 1901 to 2106
        if lt == "time-millis":
            return st.integers(0, 86_399_999)
        return st.integers(-(2**31), 2**31 - 1)
    if k == "long":
        if lt in ("timestamp-millis", "local-timestamp-millis"):
            return st.integers(-2_000_000_000_000, 4_000_000_000_000)  # 1906 to 2096
        if lt in ("timestamp-micros", "local-timestamp-micros"):
            return st.integers(-2_000_000_000_000_000, 4_000_000_000_000_000)
        if lt == "time-micros":
            return st.integers(0, 86_399_999_999)
        return st.integers(-(2**63), 2**63 - 1)
    if k == "float":
        return st.floats(width=32, allow_nan=False)
    if k == "double":
        return st.floats(allow_nan=False)
    if k in ("bytes", "fixed"):
        if lt == "decimal":
            p, sc = s["precision"], s.get("scale", 0)
            exact = decimal.Context(prec=100)  # the default context would round 38 digits to 28
            return st.integers(-(10**p - 1), 10**p - 1).map(lambda u: decimal.Decimal(u).scaleb(-sc, context=exact))
        if k == "fixed":
            return st.binary(min_size=s["size"], max_size=s["size"])
        return st.binary(max_size=40)
    if k == "string":
        if lt == "uuid":
            return st.uuids()
        return st.text(max_size=30)
    if k == "enum":
        return st.sampled_from(s["symbols"])
    if k == "array":
        return st.lists(values(s["items"], names), max_size=5)
    if k == "map":
        return st.dictionaries(st.text(max_size=8), values(s["values"], names), max_size=4)
    assert k == "record", k
    return st.fixed_dictionaries({f["name"]: values(f["type"], names) for f in s["fields"]})


def without_logical_types(schema):
    """The schema with every logicalType removed: the same binary encoding, for writing data of logical types
    fastavro refuses (those Avro ignores because they are invalid)."""
    if isinstance(schema, list):
        return [without_logical_types(b) for b in schema]
    if isinstance(schema, dict):
        return {k: without_logical_types(v) for k, v in schema.items() if k != "logicalType"}
    return schema
