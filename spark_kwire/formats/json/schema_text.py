"""A JSON topic's schema as users write it for ``from_json``: a Spark DDL string (``id BIGINT, user STRUCT<name:
STRING, age: INT>, tags ARRAY<STRING>``) or a ``StructType`` as JSON (``df.schema.json()``), read here without a
JVM into the Arrow struct Spark's Arrow conversion gives that Spark schema.

The DDL is Spark's ``colTypeList`` (what ``DataType.fromDDL`` reads first, ``STRUCT<...>`` as its fallback):
column names plain or backticked (```a``b```), keywords in any case, ``NOT NULL`` and ``COMMENT 'text'`` after a
type. Types: BOOLEAN, TINYINT/BYTE, SMALLINT/SHORT, INT/INTEGER, BIGINT/LONG, FLOAT/REAL, DOUBLE,
DECIMAL/DEC/NUMERIC[(p[, s])], STRING, CHAR(n)/CHARACTER(n)/VARCHAR(n) (read as STRING, as Spark's readers do),
BINARY, DATE, TIMESTAMP/TIMESTAMP_LTZ, TIMESTAMP_NTZ, VOID, ARRAY<t>, MAP<STRING, t>, STRUCT<...>. Arrow:
int8/16/32/64, float32/64, decimal128, string, binary, bool, date32, timestamp[us, UTC] (TIMESTAMP),
timestamp[us] (TIMESTAMP_NTZ), null, list, map, struct. ``from_json`` reads every field as nullable.
"""

from __future__ import annotations

import json
import re

import pyarrow as pa

from ..errors import SchemaError

__all__ = ["parse_schema_text", "TYPE_NAMES"]

_TOKEN = re.compile(r"""\s*(?:(?P<bq>`(?:[^`]|``)*`)|(?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")|(?P<num>\d+(?![\w]))
                        |(?P<word>[^\W]\w*|\d+[^\W\d]\w*)|(?P<sym><>|[<>(),:]))""", re.X | re.S)
_PRIMITIVES = {
    "boolean": pa.bool_(), "tinyint": pa.int8(), "byte": pa.int8(), "smallint": pa.int16(), "short": pa.int16(),
    "int": pa.int32(), "integer": pa.int32(), "bigint": pa.int64(), "long": pa.int64(), "float": pa.float32(),
    "real": pa.float32(), "double": pa.float64(), "string": pa.string(), "binary": pa.binary(), "date": pa.date32(),
    "timestamp": pa.timestamp("us", tz="UTC"), "timestamp_ltz": pa.timestamp("us", tz="UTC"),
    "timestamp_ntz": pa.timestamp("us"), "void": pa.null(),
}
_LENGTHS = ("char", "character", "varchar")
_DECIMALS = ("decimal", "dec", "numeric")
TYPE_NAMES = ("BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, DECIMAL(p, s), STRING, CHAR(n), VARCHAR(n), "
              "BINARY, DATE, TIMESTAMP, TIMESTAMP_NTZ, VOID, ARRAY<t>, MAP<STRING, t>, STRUCT<...>")


def parse_schema_text(text: str) -> pa.StructType:
    """The Arrow struct of a DDL or StructType-JSON schema; :class:`SchemaError` naming what is wrong."""
    if not isinstance(text, str) or not text.strip():
        raise SchemaError("the schema is empty: give a DDL string (id BIGINT, name STRING) or a StructType as JSON")
    if text.lstrip().startswith("{"):
        try:
            value = json.loads(text)
        except ValueError as e:
            raise SchemaError(f"the schema starts with '{{' but is not JSON ({e})") from None
        t = _from_json(value, "")
        if not pa.types.is_struct(t):
            raise SchemaError(f"the schema is a {t}, not a struct (StructType JSON with \"type\": \"struct\")")
        return t
    return _Ddl(text).schema()


class _Ddl:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = []  # (kind, value, position)
        pos = 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            m = _TOKEN.match(text, pos)
            if m is None or m.end() == pos:
                start = len(text) - len(text[pos:].lstrip())
                raise SchemaError(f"unexpected {text[start:start + 10]!r} at position {start} of the schema {text!r}")
            kind = m.lastgroup
            self.tokens.append((kind, m.group(kind), m.start(kind)))
            pos = m.end()
        self.i = 0

    def fail(self, expected: str):
        if self.i < len(self.tokens):
            kind, value, at = self.tokens[self.i]
            found = f"{value!r} at position {at}"
        else:
            found = "the end"
        raise SchemaError(f"expected {expected} but found {found} in the schema {self.text!r} (accepted types: "
                          f"{TYPE_NAMES})")

    def peek(self, *values: str) -> bool:
        if self.i >= len(self.tokens):
            return False
        kind, value, _ = self.tokens[self.i]
        return kind in ("word", "sym") and value.lower() in values

    def take(self, *values: str) -> str:
        if not self.peek(*values):
            self.fail(" or ".join(repr(v.upper()) for v in values))
        self.i += 1
        return self.tokens[self.i - 1][1]

    def number(self) -> int:
        if self.i >= len(self.tokens) or self.tokens[self.i][0] != "num":
            self.fail("a number")
        self.i += 1
        return int(self.tokens[self.i - 1][1])

    def name(self) -> str:
        if self.i >= len(self.tokens) or self.tokens[self.i][0] not in ("word", "bq", "num"):
            self.fail("a field name")
        kind, value, _ = self.tokens[self.i]
        self.i += 1
        return value[1:-1].replace("``", "`") if kind == "bq" else value

    def schema(self) -> pa.StructType:
        if self.peek("struct") and self.i + 1 < len(self.tokens) and self.tokens[self.i + 1][1] in ("<", "<>"):
            t = self.type()  # DataType.fromDDL's fallback: the struct type itself
        else:
            t = pa.struct(self.fields(top=True))
        if self.i < len(self.tokens):
            self.fail("',' or the end")
        return t

    def fields(self, top: bool) -> list[pa.Field]:
        out, seen = [], set()
        while True:
            name = self.name()
            if not top and self.peek(":"):
                self.take(":")
            t = self.type()
            nullable = True
            if self.peek("not"):
                self.take("not")
                self.take("null")
                nullable = False
            if self.peek("comment"):
                self.take("comment")
                if self.i >= len(self.tokens) or self.tokens[self.i][0] != "str":
                    self.fail("a quoted comment")
                while self.i < len(self.tokens) and self.tokens[self.i][0] == "str":
                    self.i += 1
            if name in seen:
                raise SchemaError(f"field {name!r} is declared twice in the schema {self.text!r}")
            seen.add(name)
            out.append(pa.field(name, t, nullable))
            if top and self.i >= len(self.tokens):
                return out
            if not self.peek(","):
                return out
            self.take(",")

    def type(self) -> pa.DataType:
        if self.i >= len(self.tokens) or self.tokens[self.i][0] != "word":
            self.fail("a type")
        word = self.tokens[self.i][1].lower()
        self.i += 1
        if word == "array":
            self.take("<")
            item = self.type()
            self.take(">")
            return pa.list_(pa.field("element", item))
        if word == "map":
            self.take("<")
            key = self.type()
            self.take(",")
            value = self.type()
            self.take(">")
            if not pa.types.is_string(key):
                raise SchemaError(f"MAP<{key}, ...>: a JSON object's keys are strings, so a map read from JSON "
                                  f"must have STRING keys")
            return pa.map_(pa.string(), value)
        if word == "struct":
            if self.peek("<>"):
                self.take("<>")
                return pa.struct([])
            self.take("<")
            if self.peek(">"):
                self.take(">")
                return pa.struct([])
            fields = self.fields(top=False)
            self.take(">")
            return pa.struct(fields)
        if word in _DECIMALS:
            precision, scale = 10, 0
            if self.peek("("):
                self.take("(")
                precision = self.number()
                if self.peek(","):
                    self.take(",")
                    scale = self.number()
                self.take(")")
            return _decimal(precision, scale)
        if word in _LENGTHS:
            self.take("(")
            self.number()
            self.take(")")
            return pa.string()
        if word in _PRIMITIVES:
            if word == "string" and self.peek("collate"):
                raise SchemaError("STRING COLLATE ...: collations are not supported in a JSON schema (plain STRING "
                                  "reads the same text)")
            return _PRIMITIVES[word]
        self.i -= 1
        self.fail("a type")


def _decimal(precision: int, scale: int) -> pa.DataType:
    if not 1 <= precision <= 38 or not 0 <= scale <= precision:
        raise SchemaError(f"DECIMAL({precision}, {scale}): the precision must be 1 to 38 and the scale 0 to the "
                          f"precision")
    return pa.decimal128(precision, scale)


_JSON_NAMES = {"boolean": pa.bool_(), "byte": pa.int8(), "short": pa.int16(), "integer": pa.int32(),
               "long": pa.int64(), "float": pa.float32(), "double": pa.float64(), "string": pa.string(),
               "binary": pa.binary(), "date": pa.date32(), "timestamp": pa.timestamp("us", tz="UTC"),
               "timestamp_ntz": pa.timestamp("us"), "null": pa.null(), "void": pa.null()}


def _from_json(value, path: str) -> pa.DataType:
    """A type of ``DataType.json`` / ``StructType.json()``."""
    where = path or "the schema"
    if isinstance(value, str):
        name = value.strip().lower()
        if name in _JSON_NAMES:
            return _JSON_NAMES[name]
        m = re.fullmatch(r"decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)", name)
        if m:
            return _decimal(int(m.group(1)), int(m.group(2)))
        if name == "decimal":
            return _decimal(10, 0)
        if re.fullmatch(r"(var)?char\(\s*\d+\s*\)", name):
            return pa.string()
        raise SchemaError(f"{where}: unknown type {value!r} (accepted: {TYPE_NAMES})")
    if not isinstance(value, dict) or "type" not in value:
        raise SchemaError(f"{where}: expected a type name or an object with \"type\", got {value!r}")
    kind = value["type"]
    if kind == "struct":
        fields, seen = [], set()
        for f in value.get("fields", []):
            if not isinstance(f, dict) or not isinstance(f.get("name"), str) or "type" not in f:
                raise SchemaError(f"{where}: a field needs \"name\" and \"type\", got {f!r}")
            if f["name"] in seen:
                raise SchemaError(f"{where}: field {f['name']!r} is declared twice")
            seen.add(f["name"])
            inner = f"{path}.{f['name']}" if path else f["name"]
            fields.append(pa.field(f["name"], _from_json(f["type"], inner), bool(f.get("nullable", True))))
        return pa.struct(fields)
    if kind == "array":
        return pa.list_(pa.field("element", _from_json(value.get("elementType"), f"{path}[]"),
                                 bool(value.get("containsNull", True))))
    if kind == "map":
        key = _from_json(value.get("keyType"), f"{path} key")
        if not pa.types.is_string(key):
            raise SchemaError(f"{where}: a map read from JSON must have string keys, not {value.get('keyType')!r}")
        item = _from_json(value.get("valueType"), f"{path} value")
        return pa.map_(pa.string(), pa.field("value", item, bool(value.get("valueContainsNull", True))))
    if kind == "udt" and "sqlType" in value:
        return _from_json(value["sqlType"], path)
    return _from_json(kind, path) if isinstance(kind, str) else _from_json(None, path)
