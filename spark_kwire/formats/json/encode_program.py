"""The plain-JSON encoding program: an Arrow (Spark) type as the tables ``vm_encode.py`` writes ``to_json``'s text
with: per value node its op, per struct field its ``"name":`` (escaped as Jackson does) in ``consts``.

Every Spark type ``to_json`` writes has an op: integers, floats and doubles (``Float.toString`` /
``Double.toString`` text), decimals (``BigDecimal.toString``), strings, binary (base64), booleans, dates,
timestamps (with and without time zone), arrays, maps with string keys, structs, nulls.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..columns import Layout
from ..errors import TypeMismatchError

W_STRUCT = 1
W_ARRAY = 2
W_MAP = 3
W_STRING = 4
W_BINARY = 5
W_INT32 = 6
W_INT64 = 7
W_DOUBLE = 8  # from the Arrow text of the value (``json_schema.encode_program.number_texts``)
W_FLOAT = 9
W_DECIMAL = 10
W_BOOL = 11
W_DATE = 12
W_TIMESTAMP = 13
W_TIMESTAMP_NTZ = 14
W_NULL = 15

EV_OP = 0
EV_NODE = 1
EV_SUB = 2  # struct: first props row; array, map: the item's value row
EV_COUNT = 3  # struct: fields; map: the key node
EV_WORDS = 4
EP_NAME = 0  # `"name":`
EP_NAME_LEN = 1
EP_VALUE = 2
EP_WORDS = 3

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
    """The tables writing values of ``layout`` as ``to_json`` does; :class:`TypeMismatchError` for a type
    ``to_json`` cannot write."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.vals: list[list[int]] = []
        self.props: list[list[int]] = []
        self.consts = bytearray()
        self.depth = 0
        self.text_nodes: list[int] = []
        self.root = self._value(layout.root.type, 0, 1)
        self._arrays = None

    def _value(self, t: pa.DataType, node: int, depth: int) -> int:
        self.depth = max(self.depth, depth)
        index = len(self.vals)
        row = [0, node, 0, 0]
        self.vals.append(row)
        children = self.layout.nodes[node].children
        types = pa.types
        if types.is_struct(t):
            fields = []
            for i, f in enumerate(t):
                name = jackson_string(f.name) + b":"
                offset = len(self.consts)
                self.consts += name
                fields.append([offset, len(name), self._value(f.type, children[i], depth + 1)])
            row[0], row[2], row[3] = W_STRUCT, len(self.props), len(fields)
            self.props.extend(fields)
        elif types.is_list(t):
            row[0], row[2] = W_ARRAY, self._value(t.value_type, children[0], depth + 1)
        elif types.is_map(t):
            if not types.is_string(t.key_type):
                raise TypeMismatchError(f"a map with {t.key_type} keys: JSON objects have string keys",
                                        self.layout.path(node) or "value")
            key, value = self.layout.nodes[children[0]].children
            row[0], row[2], row[3] = W_MAP, self._value(t.item_type, value, depth + 1), key
        else:
            row[0] = self._leaf(t, node)
        return index

    def _leaf(self, t: pa.DataType, node: int) -> int:
        types = pa.types
        if types.is_float64(t) or types.is_float32(t) or types.is_decimal(t):
            self.text_nodes.append(node)
            return W_DOUBLE if types.is_float64(t) else W_FLOAT if types.is_float32(t) else W_DECIMAL
        for test, op in ((types.is_string, W_STRING), (types.is_binary, W_BINARY), (types.is_int32, W_INT32),
                         (types.is_int64, W_INT64), (types.is_boolean, W_BOOL), (types.is_date32, W_DATE),
                         (types.is_null, W_NULL)):
            if test(t):
                return op
        if types.is_timestamp(t):
            return W_TIMESTAMP if t.tz else W_TIMESTAMP_NTZ
        raise TypeMismatchError(f"Arrow type {t} has no JSON form in kwire's to_json",
                                self.layout.path(node) or "value")

    def arrays(self) -> tuple:
        if self._arrays is None:
            self._arrays = (np.array(self.vals, dtype=np.int64).reshape(-1, EV_WORDS),
                            np.array(self.props or [[0] * EP_WORDS], dtype=np.int64).reshape(-1, EP_WORDS),
                            np.frombuffer(bytes(self.consts) or b"\0", dtype=np.uint8))
        return self._arrays

    def path_at(self, node: int) -> str:
        return self.layout.path(node) if 0 <= node < len(self.layout.nodes) else ""
