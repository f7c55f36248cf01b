"""The JSON decoding program: a schema's type tree (``model.py``) laid over the output columns (``columns.py``)
as the tables ``kernels/decode.py`` runs, in the layout of ``json_text/tables.py``.

``vals``: one row per value position of the schema (a struct, list or map node, or a leaf), ``props``: the
properties of each object with their names (in ``consts``), ``hashes``: an open-addressing table per object
finding a property by the FNV-1a hash of its name.
"""

from __future__ import annotations

from ..columns.output import Layout
from ..json_text.tables import (
    VAL_WORDS, V_COUNT, V_END, V_HASH_BASE, V_HASH_MASK, V_KEY, V_KIND, V_NODE, V_NULLABLE, V_SUB, add_name_table,
    decode_tables
)
from .model import ARRAY, BINARY, BOOLEAN, DATE, INTEGER, JSON, MAP, NULL, NUMBER, OBJECT, STRING, TIMESTAMP, JType
from .spark_types import property_nullable

# value kinds
JK_OBJECT = 1
JK_MAP = 2
JK_ARRAY = 3
JK_STRING = 4
JK_DATE = 5
JK_TIMESTAMP = 6
JK_BINARY = 7
JK_INTEGER = 8
JK_NUMBER = 9
JK_BOOLEAN = 10
JK_NULL = 11
JK_JSON = 12
KINDS = {OBJECT: JK_OBJECT, MAP: JK_MAP, ARRAY: JK_ARRAY, STRING: JK_STRING, DATE: JK_DATE, TIMESTAMP: JK_TIMESTAMP,
         BINARY: JK_BINARY, INTEGER: JK_INTEGER, NUMBER: JK_NUMBER, BOOLEAN: JK_BOOLEAN, NULL: JK_NULL, JSON: JK_JSON}

class JsonProgram:
    """The tables decoding JSON values of ``root`` into ``layout``."""

    def __init__(self, root: JType, layout: Layout) -> None:
        self.layout = layout
        self.vals: list[list[int]] = []
        self.props: list[list[int]] = []
        self.hashes: list[int] = []
        self.consts = bytearray()
        self.depth = 0
        self.root = self._value(root, 0, True, 1)
        self._arrays = None

    def _subtree_end(self, node: int) -> int:
        children = self.layout.nodes[node].children
        return self._subtree_end(children[-1]) if children else node + 1

    def _value(self, t: JType, node: int, nullable: bool, depth: int) -> int:
        self.depth = max(self.depth, depth)
        index = len(self.vals)
        row = [0] * VAL_WORDS
        self.vals.append(row)
        row[V_KIND], row[V_NODE], row[V_NULLABLE] = KINDS[t.kind], node, int(nullable)
        row[V_END] = self._subtree_end(node)
        children = self.layout.nodes[node].children
        if t.kind == OBJECT:
            rows = []
            for i, (name, sub) in enumerate(t.properties):
                nullable_property = property_nullable(t, name, sub)
                data = name.encode("utf-8")
                offset = len(self.consts)
                self.consts += data
                value = self._value(sub, children[i], nullable_property, depth + 1)
                rows.append([offset, len(data), value, int(not nullable_property)])
            row[V_SUB], row[V_COUNT] = len(self.props), len(rows)
            self.props.extend(rows)
            names = [name.encode("utf-8") for name, _ in t.properties]
            row[V_HASH_BASE], row[V_HASH_MASK] = add_name_table(self.hashes, names)
        elif t.kind == ARRAY:
            row[V_SUB] = self._value(t.items, children[0], t.items.nullable, depth + 1)
        elif t.kind == MAP:
            entries = children[0]
            key, value = self.layout.nodes[entries].children
            row[V_KEY] = key
            row[V_SUB] = self._value(t.items, value, t.items.nullable, depth + 1)
        return index

    def arrays(self) -> tuple:
        """(vals, props, hashes, consts) for the kernel."""
        if self._arrays is None:
            self._arrays = decode_tables(self.vals, self.props, self.hashes, self.consts, VAL_WORDS)
        return self._arrays

    def path_at(self, node: int) -> str:
        return self.layout.path(node) if 0 <= node < len(self.layout.nodes) else ""
