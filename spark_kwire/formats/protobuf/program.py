"""The Protobuf decoding program: the reader's message plan (``spark_types.py``) made into the tables
``vm_decode.py`` runs (``opcodes.py`` numbers their columns), and the writers' message trees that say which
message each row's message indexes name.

One message program per struct node of the output (a message type used at two places gets two, each
appending to its own columns); a map's entry is a message program of two fields whose absent values are
their defaults, as Protobuf defines map entries.
"""

from __future__ import annotations

import numpy as np

from ..columns.output import Layout
from .model import F, FieldInfo, MessageType, ProtoSchema
from .opcodes import (FIELD_WORDS, FL_AUX, FL_AUX2, FL_DEF_A, FL_DEF_B, FL_FLAGS, FL_ITEM, FL_NODE, FL_NUMBER,
                      FL_ONEOF, FL_OP, FL_SUB, FL_WT, FLAG_CLOSED_ENUM, FLAG_DEFAULT, FLAG_EMIT_ZERO, FLAG_IMPLICIT,
                      FLAG_INSTANCE, FLAG_PACKABLE, FLAG_REPEATED, FLAG_REQUIRED, FLAG_UTF8, M_FIELD_BASE,
                      M_LOOKUP_BASE, M_LOOKUP_LEN, M_NFIELDS, M_NODE, M_NONEOF, M_SORTED_BASE, M_SORTED_LEN,
                      MSG_WORDS, OP_BOOL, OP_BYTES, OP_DURATION, OP_ENUM_NAME, OP_FIXED32, OP_FIXED64, OP_INT32,
                      OP_INT64, OP_MAP, OP_MESSAGE, OP_NULL, OP_SINT32, OP_SINT64, OP_STRING, OP_TIMESTAMP,
                      OP_UINT32_LONG, OP_UINT64_DEC, OP_WRAPPER, WT_I32, WT_I64, WT_LEN, WT_VARINT)
from .spark_types import FieldPlan, MessagePlan, ProtobufOptions

_DENSE_LIMIT = 1024  # field numbers below this are found by a table, others by binary search
_WIRE = {OP_INT32: WT_VARINT, OP_INT64: WT_VARINT, OP_UINT32_LONG: WT_VARINT, OP_UINT64_DEC: WT_VARINT,
         OP_SINT32: WT_VARINT, OP_SINT64: WT_VARINT, OP_BOOL: WT_VARINT, OP_ENUM_NAME: WT_VARINT,
         OP_FIXED32: WT_I32, OP_FIXED64: WT_I64}


def scalar_op(t: int, options: ProtobufOptions) -> int:
    """How a scalar of Protobuf type ``t`` becomes its column value (see ``spark_types.scalar_arrow_type``)."""
    if t in (F.TYPE_INT32, F.TYPE_UINT32) and not (t == F.TYPE_UINT32 and options.upcast_unsigned_ints):
        return OP_INT32
    if t == F.TYPE_UINT32:
        return OP_UINT32_LONG
    if t == F.TYPE_UINT64:
        return OP_UINT64_DEC if options.upcast_unsigned_ints else OP_INT64
    if t == F.TYPE_ENUM:
        return OP_INT32 if options.enums_as_ints else OP_ENUM_NAME
    return {F.TYPE_INT64: OP_INT64, F.TYPE_SINT32: OP_SINT32, F.TYPE_SINT64: OP_SINT64, F.TYPE_BOOL: OP_BOOL,
            F.TYPE_FIXED32: OP_FIXED32, F.TYPE_SFIXED32: OP_FIXED32, F.TYPE_FLOAT: OP_FIXED32,
            F.TYPE_FIXED64: OP_FIXED64, F.TYPE_SFIXED64: OP_FIXED64, F.TYPE_DOUBLE: OP_FIXED64,
            F.TYPE_STRING: OP_STRING, F.TYPE_BYTES: OP_BYTES}[t]


def stored_value(op: int, t: int, value) -> int:
    """A default (Python value) as the kernel stores it once converted (see ``vm_wire.convert``)."""
    if t == F.TYPE_FLOAT:
        return int(np.array([value], dtype=np.float32).view(np.int32)[0])
    if t == F.TYPE_DOUBLE:
        return int(np.array([value], dtype=np.float64).view(np.int64)[0])
    v = int(value)
    if op in (OP_INT32, OP_ENUM_NAME, OP_FIXED32, OP_SINT32):
        v &= 0xFFFFFFFF
        return v - (1 << 32) if v >= 1 << 31 else v
    if op == OP_UINT32_LONG:
        return v & 0xFFFFFFFF
    v &= 0xFFFFFFFFFFFFFFFF
    return v - (1 << 64) if v >= 1 << 63 else v


class ProtobufProgram:
    """The tables decoding payloads of the reader's message into ``layout`` (whose root is its struct)."""

    def __init__(self, plan: MessagePlan, layout: Layout, options: ProtobufOptions) -> None:
        self.layout = layout
        self.options = options
        self.msgs: list[list[int]] = []
        self.fields: list[list[int]] = []
        self.lookup: list[int] = []
        self.enums: list[int] = []
        self.consts = bytearray()
        self._enum_tables: dict[str, int] = {}
        self.depth = 0
        self.root = self._message(plan, 0, in_entry=False, depth=1)
        self.slot_rows = sum(m[M_NFIELDS] + m[M_NONEOF] for m in self.msgs)
        self.scratch_bytes = 32 + max((len(self.consts),), default=0)
        self._arrays = None

    # ---- building ----
    def _const(self, data: bytes) -> tuple[int, int]:
        offset = len(self.consts)
        self.consts += data
        return offset, len(data)

    def _enum_table(self, enum) -> int:
        found = self._enum_tables.get(enum.full_name)
        if found is not None:
            return found
        by_number: dict[int, str] = {}
        for name, number in enum.values:
            by_number.setdefault(number, name)  # aliases: the first name, as the Java runtime shows it
        base = len(self.enums)
        prefix = self._const(f"UNKNOWN_ENUM_VALUE_{enum.name}_".encode())
        self.enums += [len(by_number), prefix[0], prefix[1]]
        for number in sorted(by_number):
            self.enums += [number, *self._const(by_number[number].encode())]
        self._enum_tables[enum.full_name] = base
        return base

    def _message(self, plan: MessagePlan, node: int, in_entry: bool, depth: int) -> int:
        self.depth = max(self.depth, depth)
        index = len(self.msgs)
        self.msgs.append([0] * MSG_WORDS)
        children = self.layout.nodes[node].children
        rows = [self._field(fp, children[i], in_entry, depth) for i, fp in enumerate(plan.fields)]
        if plan.dummy:
            row = [0] * FIELD_WORDS
            row[FL_OP], row[FL_NODE], row[FL_WT], row[FL_ONEOF], row[FL_ITEM] = OP_NULL, children[0], -1, -1, -1
            rows.append(row)
        base = len(self.fields)
        self.fields.extend(rows)
        m = self.msgs[index]
        m[M_NFIELDS], m[M_FIELD_BASE], m[M_NODE] = len(rows), base, node
        m[M_NONEOF] = len(plan.message.oneofs)
        numbers = {fp.info.number: i for i, fp in enumerate(plan.fields)}
        dense = min(max(numbers, default=0) + 1, _DENSE_LIMIT)
        m[M_LOOKUP_BASE], m[M_LOOKUP_LEN] = len(self.lookup), dense
        table = [-1] * dense
        for number, i in numbers.items():
            if number < dense:
                table[number] = i
        self.lookup += table
        sparse = sorted((number, i) for number, i in numbers.items() if number >= dense)
        m[M_SORTED_BASE], m[M_SORTED_LEN] = len(self.lookup), len(sparse)
        for number, i in sparse:
            self.lookup += [number, i]
        return index

    def _field(self, fp: FieldPlan, node: int, in_entry: bool, depth: int) -> list[int]:
        f: FieldInfo = fp.info
        row = [0] * FIELD_WORDS
        row[FL_NUMBER], row[FL_NODE], row[FL_ONEOF], row[FL_ITEM] = f.number, node, f.oneof, -1
        flags = 0
        value_node = node
        if fp.kind == "map":
            entries = self.layout.child(node)
            row[FL_OP], row[FL_WT], row[FL_ITEM] = OP_MAP, WT_LEN, entries
            row[FL_SUB] = self._message(fp.message, entries, in_entry=True, depth=depth + 1)
            row[FL_FLAGS] = FLAG_REPEATED
            return row
        if f.repeated:
            flags |= FLAG_REPEATED
            value_node = row[FL_ITEM] = self.layout.child(node)
        if f.required:
            flags |= FLAG_REQUIRED
        if in_entry and not f.repeated:
            flags |= FLAG_INSTANCE  # map entries: an absent key or value is its default
        if fp.kind == "message":
            row[FL_OP], row[FL_WT] = OP_MESSAGE, WT_LEN
            row[FL_SUB] = self._message(fp.message, value_node, in_entry=False, depth=depth + 1)
        elif fp.kind in ("timestamp", "duration"):
            row[FL_OP], row[FL_WT] = (OP_TIMESTAMP if fp.kind == "timestamp" else OP_DURATION), WT_LEN
            row[FL_AUX], row[FL_AUX2] = f.message.fields[0].number, f.message.fields[1].number
        elif fp.kind == "wrapper":
            inner = scalar_op(fp.inner, self.options)
            row[FL_OP], row[FL_WT], row[FL_SUB] = OP_WRAPPER, WT_LEN, inner
            row[FL_AUX] = _WIRE.get(inner, WT_LEN)
            if self.options.emit_default_values:
                flags |= FLAG_EMIT_ZERO
            if fp.inner == F.TYPE_STRING:
                flags |= FLAG_UTF8
        else:
            op = scalar_op(f.type, self.options)
            row[FL_OP], row[FL_WT] = op, _WIRE.get(op, WT_LEN)
            if f.enum is not None:
                row[FL_SUB] = self._enum_table(f.enum)
                if f.enum.closed:
                    flags |= FLAG_CLOSED_ENUM
            if f.repeated and op in _WIRE:
                flags |= FLAG_PACKABLE
            if f.type == F.TYPE_STRING and f.utf8_check:
                flags |= FLAG_UTF8
            if not f.repeated:
                flags |= self._presence(f, op, row, in_entry)
        row[FL_FLAGS] = flags
        return row

    def _presence(self, f: FieldInfo, op: int, row: list[int], in_entry: bool) -> int:
        """Flags for a singular scalar's absence, filling its default: an explicit default, or (implicit presence
        with emit.default.values, and map entries) the type's zero value."""
        flags = 0
        if not f.has_presence and not in_entry:
            flags |= FLAG_IMPLICIT
        value = f.default
        if value is None and (in_entry or (not f.has_presence and self.options.emit_default_values)):
            value = f.enum.default_number if f.enum is not None else ("" if f.type == F.TYPE_STRING else
                                                                      b"" if f.type == F.TYPE_BYTES else 0)
        if value is None:
            return flags
        if op in (OP_STRING, OP_BYTES):
            row[FL_DEF_A], row[FL_DEF_B] = self._const(value.encode("utf-8") if isinstance(value, str) else value)
        else:
            row[FL_DEF_A] = stored_value(op, f.type, value)
        return flags | FLAG_DEFAULT

    # ---- running ----
    def arrays(self) -> tuple:
        """(msgs, fields, lookup, enums, consts) for the kernel."""
        if self._arrays is None:
            self._arrays = (np.array(self.msgs, dtype=np.int64).reshape(-1, MSG_WORDS),
                            np.array(self.fields or [[0] * FIELD_WORDS], dtype=np.int64).reshape(-1, FIELD_WORDS),
                            np.array(self.lookup or [-1], dtype=np.int64),
                            np.array(self.enums or [0], dtype=np.int64),
                            np.frombuffer(bytes(self.consts) or b"\0", dtype=np.uint8))
        return self._arrays

    def path_at(self, node: int) -> str:
        return self.layout.path(node) if 0 <= node < len(self.layout.nodes) else ""


def writer_tree(schema: ProtoSchema, reader: MessageType, tree: list[int]) -> int:
    """Appends to ``tree`` the messages of ``schema``'s file as message indexes walk them (a node: whether it is
    the reader's message (1, else 0), its nested messages' count, their nodes); returns the root's offset."""

    def add(match: int, children: list[MessageType]) -> int:
        at = len(tree)
        tree.extend([match, len(children)] + [0] * len(children))
        for i, child in enumerate(children):
            tree[at + 2 + i] = add(1 if child.full_name == reader.full_name else 0, child.nested)
        return at

    return add(-1, schema.top)
