"""The plain-JSON decoding program: a Spark schema (as Arrow) laid over the output columns as the tables
``kernels/decode.py`` runs, in the layout both JSON formats' programs share (``json_text/tables.py``: ``vals`` per value
position, ``props`` per struct field with its name in ``consts``, a hash table per struct), with the Spark type
of each leaf (``PK_*``) and its parameters.

Bytes and shorts are decoded into int32 columns (``decode_type``) and cast at the end; the corrupt-record field
is not read from the JSON (``from_json`` leaves it out of the schema it parses with) but filled afterwards.
"""

from __future__ import annotations

import pyarrow as pa

from ..columns.output import Layout
from ..json_text.tables import (P_NAME, P_NAME_LEN, P_VALUE, V_COUNT, V_END, V_HASH_BASE,
                                   V_HASH_MASK, V_KEY, V_KIND, V_NODE, V_NULLABLE, V_SUB, add_name_table,
                                   decode_tables)

# value kinds
PK_STRUCT = 1
PK_MAP = 2
PK_ARRAY = 3
PK_STRING = 4
PK_DATE = 5
PK_TIMESTAMP = 6
PK_BINARY = 7
PK_INT = 8  # V_AUX: bits (8, 16, 32, 64)
PK_DOUBLE = 9
PK_FLOAT = 10
PK_BOOLEAN = 11
PK_NULL = 12
PK_DECIMAL = 13  # V_AUX: precision, V_AUX2: scale
PK_TIMESTAMP_NTZ = 14

V_AUX = 9
V_AUX2 = 10
VAL_WORDS = 11

__all__ = ["PlainJsonProgram", "decode_type", "P_NAME", "P_NAME_LEN", "P_VALUE", "V_COUNT", "V_END", "V_HASH_BASE",
           "V_HASH_MASK", "V_KEY", "V_KIND", "V_NODE", "V_SUB"]


def decode_type(t: pa.DataType) -> pa.DataType:
    """``t`` with its bytes and shorts widened to int32 (the column kinds the kernels write)."""
    if pa.types.is_int8(t) or pa.types.is_int16(t):
        return pa.int32()
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(decode_type(f.type)) for f in t])
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(decode_type(t.value_type)))
    if pa.types.is_map(t):
        return pa.map_(t.key_field, t.item_field.with_type(decode_type(t.item_type)))
    return t


def _leaf(t: pa.DataType) -> tuple[int, int, int]:
    types = pa.types
    if types.is_boolean(t):
        return PK_BOOLEAN, 0, 0
    for bits, test in ((8, types.is_int8), (16, types.is_int16), (32, types.is_int32), (64, types.is_int64)):
        if test(t):
            return PK_INT, bits, 0
    if types.is_float64(t):
        return PK_DOUBLE, 0, 0
    if types.is_float32(t):
        return PK_FLOAT, 0, 0
    if types.is_decimal(t):
        return PK_DECIMAL, t.precision, t.scale
    if types.is_string(t):
        return PK_STRING, 0, 0
    if types.is_binary(t):
        return PK_BINARY, 0, 0
    if types.is_date32(t):
        return PK_DATE, 0, 0
    if types.is_timestamp(t):
        return (PK_TIMESTAMP if t.tz else PK_TIMESTAMP_NTZ), 0, 0
    if types.is_null(t):
        return PK_NULL, 0, 0
    raise TypeError(f"no JSON reading of Arrow type {t}")


class PlainJsonProgram:
    """The tables decoding JSON text as ``schema`` (the Arrow struct of the given schema); ``skip``: a root field
    the kernel does not read (the corrupt-record field), ``rescue``: the name of a string field appended for the
    rescued data, or None."""

    def __init__(self, schema: pa.StructType, skip: str | None = None, rescue: str | None = None) -> None:
        fields = [f.with_nullable(True) for f in schema if f.name != skip]
        if rescue is not None:
            fields.append(pa.field(rescue, pa.string()))
        self.schema_type = pa.struct(fields)  # what the kernel checks values against (bytes, shorts)
        self.arrow_type = decode_type(self.schema_type)  # what it writes
        self.layout = Layout(pa.field("value", self.arrow_type, nullable=True))
        self.vals: list[list[int]] = []
        self.props: list[list[int]] = []
        self.hashes: list[int] = []
        self.consts = bytearray()
        self.depth = 0
        self.rescue_node = self.layout.child(0, len(fields) - 1) if rescue is not None else -1
        self.root = self._value(self.schema_type, 0, 1, rescue)
        self._arrays = None

    def _subtree_end(self, node: int) -> int:
        children = self.layout.nodes[node].children
        return self._subtree_end(children[-1]) if children else node + 1

    def _value(self, t: pa.DataType, node: int, depth: int, rescue: str | None = None) -> int:
        self.depth = max(self.depth, depth)
        index = len(self.vals)
        row = [0] * VAL_WORDS
        self.vals.append(row)
        row[V_NODE], row[V_NULLABLE], row[V_END] = node, 1, self._subtree_end(node)
        children = self.layout.nodes[node].children
        if pa.types.is_struct(t):
            row[V_KIND] = PK_STRUCT
            read = [(i, f) for i, f in enumerate(t) if not (depth == 1 and f.name == rescue)]
            rows = []
            for i, f in read:
                name = f.name.encode("utf-8")
                offset = len(self.consts)
                self.consts += name
                rows.append([offset, len(name), self._value(f.type, children[i], depth + 1), 0])
            row[V_SUB], row[V_COUNT] = len(self.props), len(rows)
            self.props.extend(rows)
            row[V_HASH_BASE], row[V_HASH_MASK] = add_name_table(self.hashes, [f.name.encode("utf-8") for _, f in read])
        elif pa.types.is_list(t):
            row[V_KIND] = PK_ARRAY
            row[V_SUB] = self._value(t.value_type, children[0], depth + 1)
        elif pa.types.is_map(t):
            row[V_KIND] = PK_MAP
            key, value = self.layout.nodes[children[0]].children
            row[V_KEY] = key
            row[V_SUB] = self._value(t.item_type, value, depth + 1)
        else:
            row[V_KIND], row[V_AUX], row[V_AUX2] = _leaf(t)
        return index

    def arrays(self) -> tuple:
        """(vals, props, hashes, consts) for the kernel."""
        if self._arrays is None:
            self._arrays = decode_tables(self.vals, self.props, self.hashes, self.consts, VAL_WORDS)
        return self._arrays

    def names_bytes(self) -> int:
        """Bytes of every field name (the rescued text may repeat them)."""
        return len(self.consts)

    def path_at(self, node: int) -> str:
        return self.layout.path(node) if 0 <= node < len(self.layout.nodes) else ""
