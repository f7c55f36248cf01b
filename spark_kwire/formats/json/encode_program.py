"""The plain-JSON encoding program: an Arrow (Spark) type as the tables that ``json_text``'s encoding walk (shared with
JSON Schema, in the layout of ``json_text/tables.py``) writes ``to_json``'s text with: per value
node its op, per struct field its ``"name":`` (escaped as Jackson does) in ``consts``.

Every Spark type ``to_json`` writes has an op: integers, floats and doubles (``Float.toString`` /
``Double.toString`` text), decimals (``BigDecimal.toString``), strings, binary (base64), booleans, dates,
timestamps (with and without time zone), arrays, maps with string keys, structs, nulls. A struct field's value is
marked not nullable when null fields are left out (``ignoreNullFields``, the default), so that the walk leaves a
null one out; array items and map values are written ``null``.
"""

from __future__ import annotations

import pyarrow as pa

from ..columns.output import Layout
from ..errors import TypeMismatchError
from ..json_text.tables import (W_ARRAY, W_BASE64, W_BIG_DECIMAL, W_BOOL, W_DATE_TEXT, W_INT32, W_INT64,
                                          W_JACKSON_STRING, W_JAVA_DOUBLE, W_JAVA_FLOAT, W_LOCAL_TIMESTAMP_TEXT, W_MAP,
                                          W_NULL, W_OBJECT, W_TIMESTAMP_TEXT, encode_tables)

_ESCAPES = {8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r", 34: '\\"', 92: "\\\\"}


def jackson_string(text: str) -> bytes:
    """``text`` as Jackson writes a JSON string: quotes, backslashes and control characters escaped (``\\u00XX``
    with capital hex digits), everything else as UTF-8."""
    out = []
    for ch in text:
        o = ord(ch)
        out.append(_ESCAPES.get(o) or (f"\\u{o:04X}" if o < 32 else ch))
    return ('"' + "".join(out) + '"').encode("utf-8", "surrogatepass")


class JsonEncodeProgram:
    """The tables writing values of ``layout`` as ``to_json`` does (``ignore_null_fields`` as its option);
    :class:`TypeMismatchError` for a type ``to_json`` cannot write."""

    def __init__(self, layout: Layout, ignore_null_fields: bool = True) -> None:
        self.layout = layout
        self.ignore_null_fields = ignore_null_fields
        self.vals: list[list[int]] = []
        self.props: list[list[int]] = []
        self.consts = bytearray()
        self.depth = 0
        self.text_nodes: list[int] = []
        self.root = self._value(layout.root.type, 0, 1, True)
        self._arrays = None

    def _value(self, t: pa.DataType, node: int, depth: int, nullable: bool) -> int:
        self.depth = max(self.depth, depth)
        index = len(self.vals)
        row = [0, node, int(nullable), 0, 0]  # op, node, nullable, sub, count
        self.vals.append(row)
        children = self.layout.nodes[node].children
        types = pa.types
        if types.is_struct(t):
            fields = []
            for i, f in enumerate(t):
                name = jackson_string(f.name) + b":"
                offset = len(self.consts)
                self.consts += name
                fields.append([offset, len(name),
                               self._value(f.type, children[i], depth + 1, not self.ignore_null_fields), 0])
            row[0], row[3], row[4] = W_OBJECT, len(self.props), len(fields)
            self.props.extend(fields)
        elif types.is_list(t):
            row[0], row[3] = W_ARRAY, self._value(t.value_type, children[0], depth + 1, True)
        elif types.is_map(t):
            if not types.is_string(t.key_type):
                raise TypeMismatchError(f"a map with {t.key_type} keys: JSON objects have string keys",
                                        self.layout.path(node) or "value")
            key, value = self.layout.nodes[children[0]].children
            row[0], row[3], row[4] = W_MAP, self._value(t.item_type, value, depth + 1, True), key
        else:
            row[0] = self._leaf(t, node)
        return index

    def _leaf(self, t: pa.DataType, node: int) -> int:
        types = pa.types
        if types.is_float64(t) or types.is_float32(t) or types.is_decimal(t):
            self.text_nodes.append(node)
            return W_JAVA_DOUBLE if types.is_float64(t) else W_JAVA_FLOAT if types.is_float32(t) else W_BIG_DECIMAL
        for test, op in ((types.is_string, W_JACKSON_STRING), (types.is_binary, W_BASE64), (types.is_int32, W_INT32),
                         (types.is_int64, W_INT64), (types.is_boolean, W_BOOL), (types.is_date32, W_DATE_TEXT),
                         (types.is_null, W_NULL)):
            if test(t):
                return op
        if types.is_timestamp(t):
            return W_TIMESTAMP_TEXT if t.tz else W_LOCAL_TIMESTAMP_TEXT
        raise TypeMismatchError(f"Arrow type {t} has no JSON form in kwire's to_json",
                                self.layout.path(node) or "value")

    def arrays(self) -> tuple:
        if self._arrays is None:
            self._arrays = encode_tables(self.vals, self.props, self.consts)
        return self._arrays

    def path_at(self, node: int) -> str:
        return self.layout.path(node) if 0 <= node < len(self.layout.nodes) else ""
