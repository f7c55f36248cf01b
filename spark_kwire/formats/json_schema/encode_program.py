"""JSON encoding programs: checks that an Arrow (Spark) type can be written as JSON of a schema and makes the
pair into the tables ``json_text``'s encoding walk runs (``json_text/tables.py``).

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

from ..columns.output import Layout
from ..errors import TypeMismatchError
from ..json_text.tables import (
    EV_COUNT, EV_NULLABLE, EV_SUB, W_ARRAY, W_BASE64, W_BOOL, W_DATE, W_INT32, W_INT64, W_MAP, W_NULL, W_OBJECT, W_RAW,
    W_STRING, W_TEXT, W_TIMESTAMP, encode_tables, number_texts
)
from .model import ARRAY, BINARY, BOOLEAN, DATE, INTEGER, JSON, MAP, NULL, NUMBER, OBJECT, STRING, TIMESTAMP, JType


def _json_string(text: str) -> bytes:
    import json

    return json.dumps(text, ensure_ascii=False).encode("utf-8")


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
