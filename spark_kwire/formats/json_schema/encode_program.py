"""JSON encoding programs: checks that an Arrow (Spark) type can be written as JSON of a schema and makes the
pair into the tables ``vm_encode.py`` runs.

Fit: struct -> object (fields by property name, exactly, else ignoring case when unambiguous; a field the
schema lacks, or a required property the struct lacks, is an error), map<string, V> -> object of V, array ->
array, string -> string (date, date-time and base64 strings too), date -> "YYYY-MM-DD", timestamp ->
"YYYY-MM-DDTHH:MM:SS[.ffffff]Z" (UTC; a timestamp without zone is written as if UTC), binary -> base64, integers
-> integer or number, float/double/decimal -> number (the shortest text that reads back as the same value;
decimal(p, 0) for integer too), boolean, null. A schema position taking any JSON (``{}``, several types)
takes a string as JSON text (checked to be JSON) or any other type written as its natural JSON. Nulls: a
property whose schema allows null is written ``null``, one that is not required is left out, a required one
fails the row; null array elements and map values are written ``null`` where their schema allows it.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..columns.output import Layout
from ..errors import TypeMismatchError
from ..vm.slots import K_DEC128, K_F32, K_F64, S_BASE, S_LEN
from .model import ARRAY, BINARY, BOOLEAN, DATE, INTEGER, JSON, MAP, NULL, NUMBER, OBJECT, STRING, TIMESTAMP, JType

W_OBJECT = 1
W_ARRAY = 2
W_MAP = 3
W_STRING = 4
W_BASE64 = 5
W_INT32 = 6
W_INT64 = 7
W_TEXT = 8  # numbers formatted before the kernel runs (doubles, floats, decimals)
W_BOOL = 9
W_DATE = 10
W_TIMESTAMP = 11
W_NULL = 12
W_RAW = 13  # a string holding JSON text
# to_json's (json/encode_program.py), run by the same walk: the ops from W_JAVA_DOUBLE on
W_JAVA_DOUBLE = 14  # the Arrow text of a double, printed as Java does
W_JAVA_FLOAT = 15
W_BIG_DECIMAL = 16  # as BigDecimal.toString
W_DATE_TEXT = 17  # with a pattern program (dateFormat)
W_TIMESTAMP_TEXT = 18  # in the writing zone, with a pattern program (timestampFormat)
W_LOCAL_TIMESTAMP_TEXT = 19
W_JACKSON_STRING = 20  # escaped as Jackson escapes (``\u00XX`` with capital hex digits)

# values columns
EV_OP = 0
EV_NODE = 1
EV_NULLABLE = 2  # the schema allows null here
EV_SUB = 3  # object: first props row; array/map: item value
EV_COUNT = 4  # object: properties; map: the key node
EV_WORDS = 5
# props columns
EP_NAME = 0  # `"name":` as written
EP_NAME_LEN = 1
EP_VALUE = 2
EP_REQUIRED = 3
EP_WORDS = 4


def _json_string(text: str) -> bytes:
    import json

    return json.dumps(text, ensure_ascii=False).encode("utf-8")


def encode_tables(vals: list, props: list, consts: bytearray) -> tuple:
    """(vals, props, consts) of an encoding program as the kernel takes them (either JSON format's)."""
    return (np.array(vals, dtype=np.int64).reshape(-1, EV_WORDS),
            np.array(props or [[0] * EP_WORDS], dtype=np.int64).reshape(-1, EP_WORDS),
            np.frombuffer(bytes(consts) or b"\0", dtype=np.uint8))


def number_texts(columns, text_nodes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(base per node, offsets, bytes): the text of every value of the float, double and decimal nodes
    ``text_nodes`` of input ``columns``, formatted by Arrow's casts (the shortest text reading back as the same
    value; ``nan``, ``inf``, ``-inf``; decimals plain with their scale)."""
    base = np.full(len(columns.layout.nodes), -1, dtype=np.int64)
    offsets, chunks, total = [np.zeros(1, dtype=np.int64)], [], 0
    count = 0
    for node in text_nodes:
        kind = int(columns.state[node, 0])
        start, n = int(columns.state[node, S_BASE]), int(columns.state[node, S_LEN])
        if kind == K_F64:
            values = pa.array(columns.f64[start:start + n])
        elif kind == K_F32:
            values = pa.array(columns.f32[start:start + n])
        elif kind == K_DEC128:
            t = columns.layout.nodes[node].type
            values = pa.Array.from_buffers(t, n, [None, pa.py_buffer(columns.a64[start:start + 2 * n].copy())])
        else:
            values = pa.array(columns.a64[start:start + n])
        text = values.cast(pa.string())
        if kind in (K_F64, K_F32):  # Arrow prints -0.0 as -0, which JSON readers take for the integer 0
            text = pc.if_else(pc.equal(text, "-0"), "-0.0", text)
        raw = np.frombuffer(text.buffers()[2], dtype=np.uint8) if n else np.zeros(0, dtype=np.uint8)
        local = np.frombuffer(text.buffers()[1], dtype=np.int32, count=n + 1).astype(np.int64) if n else \
            np.zeros(1, dtype=np.int64)
        base[node] = count
        offsets.append(local[1:] + total)
        chunks.append(raw[:int(local[-1])])
        total += int(local[-1])
        count += n
    data = np.concatenate(chunks) if chunks else np.zeros(1, dtype=np.uint8)
    return base, np.concatenate(offsets), data if data.size else np.zeros(1, dtype=np.uint8)


class JsonEncodeProgram:
    """The tables writing values of ``layout`` as JSON of ``schema``; :class:`TypeMismatchError` names the field
    and both types when they do not fit."""

    def __init__(self, schema: JType, layout: Layout) -> None:
        self.layout = layout
        self.vals: list[list[int]] = []
        self.props: list[list[int]] = []
        self.consts = bytearray()
        self.depth = 0
        self.text_nodes: list[int] = []
        self._paths: dict[int, str] = {}
        self.root = self._value(schema, 0, "", 1)
        self._arrays = None

    def _mismatch(self, t: pa.DataType, schema: JType, path: str):
        raise TypeMismatchError(f"Arrow type {t} cannot be written as JSON Schema {schema.describe()}", path or "value")

    def _row(self, op: int, node: int, nullable: bool, path: str) -> tuple[int, list[int]]:
        index = len(self.vals)
        row = [op, node, int(nullable), 0, 0]
        self.vals.append(row)
        self._paths[node] = path
        if op == W_TEXT:
            self.text_nodes.append(node)
        return index, row

    def _value(self, schema: JType, node: int, path: str, depth: int) -> int:
        self.depth = max(self.depth, depth)
        t = self.layout.nodes[node].type
        types = pa.types
        kind = schema.kind
        if kind == JSON:
            index = self._generic(node, path, depth, raw_strings=True)
            self.vals[index][EV_NULLABLE] = int(schema.nullable)  # null only where the schema allows it
            return index
        if kind == OBJECT:
            if not types.is_struct(t):
                self._mismatch(t, schema, path)
            return self._object(schema, node, path, depth)
        if kind == MAP or kind == ARRAY:
            if kind == MAP and not (types.is_map(t) and types.is_string(t.key_type)):
                self._mismatch(t, schema, path)
            if kind == ARRAY and not types.is_list(t):
                self._mismatch(t, schema, path)
            index, row = self._row(W_MAP if kind == MAP else W_ARRAY, node, schema.nullable, path)
            item = self.layout.nodes[self.layout.child(node)]
            item_node = item.children[1] if kind == MAP else item.index
            row[EV_COUNT] = item.children[0] if kind == MAP else 0  # a map's key node
            row[EV_SUB] = self._value(schema.items, item_node, f"{path}{{}}" if kind == MAP else f"{path}[]", depth + 1)
            return index
        op = self._leaf_op(schema, t)
        if op is None:
            self._mismatch(t, schema, path)
        return self._row(op, node, schema.nullable, path)[0]

    def _leaf_op(self, schema: JType, t: pa.DataType) -> int | None:
        types = pa.types
        kind = schema.kind
        if types.is_string(t):
            return W_STRING if kind in (STRING, DATE, TIMESTAMP, BINARY) else None
        if types.is_date32(t) and kind in (DATE, STRING):
            return W_DATE
        if types.is_timestamp(t) and kind in (TIMESTAMP, STRING):
            return W_TIMESTAMP
        if types.is_binary(t) and kind == BINARY:
            return W_BASE64
        if types.is_int32(t) and kind in (INTEGER, NUMBER):
            return W_INT32
        if types.is_int64(t) and kind in (INTEGER, NUMBER):
            return W_INT64
        if (types.is_float32(t) or types.is_float64(t)) and kind == NUMBER:
            return W_TEXT
        if types.is_decimal(t) and (kind == NUMBER or (kind == INTEGER and t.scale <= 0)):
            return W_TEXT
        if types.is_boolean(t) and kind == BOOLEAN:
            return W_BOOL
        if types.is_null(t) and (kind == NULL or schema.nullable):
            return W_NULL
        return None

    def _object(self, schema: JType, node: int, path: str, depth: int) -> int:
        struct = self.layout.nodes[node]
        by_name = {name: (name, sub) for name, sub in schema.properties}
        folded: dict[str, list[str]] = {}
        for name, _ in schema.properties:
            folded.setdefault(name.lower(), []).append(name)
        index, row = self._row(W_OBJECT, node, schema.nullable, path)
        rows, used = [], set()
        for i, af in enumerate(struct.type):
            fpath = f"{path}.{af.name}" if path else af.name
            match = by_name.get(af.name)
            if match is None and len(folded.get(af.name.lower(), [])) == 1:
                match = by_name[folded[af.name.lower()][0]]
            if match is None or match[0] in used:
                raise TypeMismatchError(f"the struct's field {af.name!r} is not a property of the JSON Schema "
                                        f"(properties {[n for n, _ in schema.properties]})", fpath)
            name, sub = match
            used.add(name)
            required = name in schema.required
            rows.append(self._prop(name, self._value(sub, struct.children[i], fpath, depth + 1), required))
        missing = [n for n in schema.required if n not in used and n in by_name]
        if missing:
            raise TypeMismatchError(f"the JSON Schema requires properties {missing}, which the struct lacks", path or
                                    "value")
        row[EV_SUB], row[EV_COUNT] = len(self.props), len(rows)
        self.props.extend(rows)
        return index

    def _prop(self, name: str, value: int, required: bool) -> list[int]:
        data = _json_string(name) + b":"
        offset = len(self.consts)
        self.consts += data
        return [offset, len(data), value, int(required)]

    def _generic(self, node: int, path: str, depth: int, raw_strings: bool) -> int:
        """Any Arrow value as its natural JSON (a schema position taking any JSON)."""
        self.depth = max(self.depth, depth)
        t = self.layout.nodes[node].type
        types = pa.types
        if types.is_struct(t):
            index, row = self._row(W_OBJECT, node, True, path)
            struct = self.layout.nodes[node]
            rows = [self._prop(f.name, self._generic(struct.children[i], f"{path}.{f.name}", depth + 1, False), False)
                    for i, f in enumerate(t)]
            row[EV_SUB], row[EV_COUNT] = len(self.props), len(rows)
            self.props.extend(rows)
            return index
        if types.is_list(t) or types.is_map(t):
            if types.is_map(t) and not types.is_string(t.key_type):
                raise TypeMismatchError(f"a JSON object has string keys; this map's keys are {t.key_type}", path)
            index, row = self._row(W_MAP if types.is_map(t) else W_ARRAY, node, True, path)
            item = self.layout.nodes[self.layout.child(node)]
            item_node = item.children[1] if types.is_map(t) else item.index
            row[EV_COUNT] = item.children[0] if types.is_map(t) else 0
            row[EV_SUB] = self._generic(item_node, path + "[]", depth + 1, False)
            return index
        if types.is_string(t):
            return self._row(W_RAW if raw_strings else W_STRING, node, True, path)[0]
        if types.is_binary(t):
            return self._row(W_BASE64, node, True, path)[0]
        for kind in (INTEGER, NUMBER, BOOLEAN, DATE, TIMESTAMP, NULL):
            op = self._leaf_op(JType(kind, nullable=True), t)
            if op is not None:
                return self._row(op, node, True, path)[0]
        raise TypeMismatchError(f"Arrow type {t} has no JSON form", path or "value")

    def text_column(self, columns) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The text of every float/double/decimal value of the input columns (:func:`number_texts`)."""
        return number_texts(columns, self.text_nodes)

    def arrays(self) -> tuple:
        if self._arrays is None:
            self._arrays = encode_tables(self.vals, self.props, self.consts)
        return self._arrays

    def path_at(self, node: int) -> str:
        return self._paths.get(node, "")
