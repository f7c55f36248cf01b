"""The JSON decoding program: a schema's type tree (``model.py``) laid over the output columns (``columns.py``)
as the tables ``vm_decode.py`` runs.

``vals``: one row per value position of the schema (a struct, list or map node, or a leaf), ``props``: the
properties of each object with their names (in ``consts``), ``hashes``: an open-addressing table per object
finding a property by the FNV-1a hash of its name.
"""

from __future__ import annotations

import numpy as np

from ..columns.output import Layout
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

# vals columns
V_KIND = 0
V_NODE = 1
V_NULLABLE = 2
V_SUB = 3  # object: first props row; array: item value; map: value value
V_COUNT = 4  # object: properties
V_HASH_BASE = 5
V_HASH_MASK = 6
V_END = 7  # one past the last node of the node's subtree (undoing a repeated key)
V_KEY = 8  # map: the key node
VAL_WORDS = 9

# props columns
P_NAME = 0
P_NAME_LEN = 1
P_VALUE = 2
P_REQUIRED = 3  # missing (or null) is an error
PROP_WORDS = 4

FNV_OFFSET = -3750763034362895579  # 0xcbf29ce484222325 as int64
FNV_PRIME = 1099511628211


def fnv1a(data: bytes) -> int:
    h = FNV_OFFSET & 0xFFFFFFFFFFFFFFFF
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return h


def add_name_table(hashes: list[int], names: list[bytes]) -> tuple[int, int]:
    """Appends to ``hashes`` an open-addressing table finding each of ``names`` (by its position) from the FNV-1a
    hash of its bytes, as ``vm_decode.find_property`` probes it; (where it starts, its mask)."""
    size = 1
    while size < 2 * len(names):
        size *= 2
    table = [-1] * size
    for i, name in enumerate(names):
        h = fnv1a(name) & (size - 1)
        while table[h] >= 0:
            h = (h + 1) & (size - 1)
        table[h] = i
    base = len(hashes)
    hashes.extend(table)
    return base, size - 1


def decode_tables(vals: list, props: list, hashes: list, consts: bytearray, val_words: int) -> tuple:
    """(vals, props, hashes, consts) of a decoding program (rows of ``val_words``) as the kernel takes them."""
    return (np.array(vals, dtype=np.int64).reshape(-1, val_words),
            np.array(props or [[0] * PROP_WORDS], dtype=np.int64).reshape(-1, PROP_WORDS),
            np.array(hashes or [-1], dtype=np.int64), np.frombuffer(bytes(consts) or b"\0", dtype=np.uint8))


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
