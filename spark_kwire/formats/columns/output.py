"""Arrow output columns that compiled decoders fill, whatever the format: the layout of an Arrow type as a
tree of nodes, the arenas holding their buffers, growing them, and assembling the final Arrow array.

A node per Arrow array in the type (struct, list, map and their children), numbered parents first. Each
node owns regions of a few shared arenas (int64, int32, uint8 for validity and booleans, bytes for binary
data), described by one row of the int64 node table ``state`` (columns in ``vm/slots.py``). Kernels append
through ``vm/column_writes.py``; :meth:`OutputColumns.to_arrow` wraps the regions as Arrow buffers without
copying (validity and booleans are packed into bits).

Nodes outside any list hold exactly one element per row: their regions are sized for the batch and never
fill. Nodes under a list or map, and binary data, are sized from hints (what the last batch used per row)
or a guess, and grow when a kernel reports one full: the kernel rolls the record back, the region is
enlarged (the arenas laid out anew) and the kernel resumes at that record.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from ..vm.slots import (
    K_BINARY, K_BOOL, K_DEC128, K_F32, K_F64, K_I32, K_I64, K_LIST, K_MAP, K_NULL, K_STRUCT, N_SLOTS, ROOM_DATA,
    S_BASE, S_CAP, S_CHILD, S_DATA_BASE, S_DATA_CAP, S_DATA_LEN, S_KIND, S_LEN, S_PAD_END, S_PAD_START, S_PARENT,
    S_VALID
)

_ALIGN = 64  # bytes: every region starts on a 64-byte boundary, as Arrow recommends


@dataclass
class Node:
    index: int
    kind: int
    type: pa.DataType
    nullable: bool
    parent: int
    name: str
    repeated: bool  # under a list or map: its element count is not the row count
    path: str = ""  # readable, e.g. ``order.lines[].price``, ``tags{key}``, ``tags{}``
    children: list[int] = field(default_factory=list)


def _kind(t: pa.DataType) -> int:
    types = pa.types
    if types.is_null(t):
        return K_NULL
    if types.is_boolean(t):
        return K_BOOL
    if types.is_int32(t) or types.is_date32(t):
        return K_I32
    if types.is_int64(t) or types.is_timestamp(t) or types.is_time64(t) or types.is_duration(t):
        return K_I64
    if types.is_float32(t):
        return K_F32
    if types.is_float64(t):
        return K_F64
    if types.is_decimal128(t):
        return K_DEC128
    if types.is_binary(t) or types.is_string(t):
        return K_BINARY
    if types.is_struct(t):
        return K_STRUCT
    if types.is_map(t):
        return K_MAP
    if types.is_list(t):
        return K_LIST
    raise TypeError(f"no column kind for Arrow type {t}")


class Layout:
    """The node tree of an Arrow field (the root, node 0)."""

    def __init__(self, root: pa.Field) -> None:
        self.root = root
        self.nodes: list[Node] = []
        self._add(root.type, root.nullable, -1, root.name, False, "")
        pads: list[int] = []
        self.pad_ranges = []
        for node in self.nodes:
            start = len(pads)
            pads.extend(self._struct_subtree(node.index))
            self.pad_ranges.append((start, len(pads)))
        self.pad_nodes = np.array(pads, dtype=np.int64)

    def _add(self, t: pa.DataType, nullable: bool, parent: int, name: str, repeated: bool, path: str,
             map_path: str | None = None) -> int:
        index = len(self.nodes)
        node = Node(index, _kind(t), t, nullable, parent, name, repeated, path)
        self.nodes.append(node)
        if node.kind == K_STRUCT:
            for i, f in enumerate(t):
                if map_path is not None:
                    child_path = map_path + ("{key}" if i == 0 else "{}")
                else:
                    child_path = f"{path}.{f.name}" if path else f.name
                node.children.append(self._add(f.type, f.nullable, index, f.name, repeated, child_path))
        elif node.kind == K_LIST:
            node.children.append(self._add(t.value_type, t.value_field.nullable, index, "element", True, path + "[]"))
        elif node.kind == K_MAP:
            entries = pa.struct([t.key_field, t.item_field])
            node.children.append(self._add(entries, False, index, "entries", True, path, map_path=path))
        return index

    def _struct_subtree(self, index: int) -> list[int]:
        found = [index]
        node = self.nodes[index]
        if node.kind == K_STRUCT:
            for child in node.children:
                found.extend(self._struct_subtree(child))
        return found

    def child(self, index: int, i: int = 0) -> int:
        return self.nodes[index].children[i]

    def path(self, index: int) -> str:
        """A readable path of the node, e.g. ``order.lines[].price``."""
        return self.nodes[index].path


def _round_up(n: int, unit: int) -> int:
    return (n + unit - 1) // unit * unit


class OutputColumns:
    """The arenas and node table of one batch being decoded into a :class:`Layout`."""

    def __init__(self, layout: Layout, rows: int, items_per_row: dict[int, float] | None = None,
                 bytes_per_row: dict[int, float] | None = None, input_bytes: int = 0) -> None:
        self.layout = layout
        self.rows = rows
        nodes = layout.nodes
        self.state = np.zeros((len(nodes), N_SLOTS), dtype=np.int64)
        s = self.state
        binaries = sum(1 for n in nodes if n.kind == K_BINARY) or 1
        items_per_row = items_per_row or {}
        bytes_per_row = bytes_per_row or {}
        for n in nodes:
            s[n.index, S_KIND] = n.kind
            s[n.index, S_PARENT] = n.parent
            s[n.index, S_CHILD] = n.children[0] if n.kind in (K_LIST, K_MAP) else -1
            s[n.index, S_PAD_START], s[n.index, S_PAD_END] = layout.pad_ranges[n.index]
            s[n.index, S_VALID] = 1 if n.nullable else -1
            if n.repeated:
                guess = items_per_row.get(n.index)
                cap = int(guess * rows * 1.25) + 16 if guess is not None else 2 * rows + 16
            else:
                cap = rows
            s[n.index, S_CAP] = cap
            if n.kind == K_BINARY:
                guess = bytes_per_row.get(n.index)
                data = int(guess * rows * 1.25) + 64 if guess is not None else input_bytes // binaries + 64
                s[n.index, S_DATA_CAP] = data
        self._allocate()

    # ---- regions ----
    def _sizes(self, node: Node) -> tuple[int, int, int, int]:
        """Elements the node needs in the (int64, int32, uint8, data) arenas."""
        cap = int(self.state[node.index, S_CAP])
        k = node.kind
        i64 = cap if k in (K_I64, K_F64) else 2 * cap if k == K_DEC128 else 0
        i32 = cap if k in (K_I32, K_F32) else cap + 1 if k in (K_BINARY, K_LIST, K_MAP) else 0
        u8 = (cap if node.nullable else 0) + (cap if k == K_BOOL else 0)
        data = int(self.state[node.index, S_DATA_CAP]) if k == K_BINARY else 0
        return i64, i32, u8, data

    def _allocate(self, old: tuple | None = None, old_state: np.ndarray | None = None) -> None:
        """Lays the regions out in new arenas; with ``old`` arenas (and the node table they were laid out by),
        copies what the nodes hold so far."""
        s = self.state
        used = [0, 0, 0, 0]  # int64, int32, uint8, data
        places = []
        for node in self.layout.nodes:
            cap = int(s[node.index, S_CAP])
            k = node.kind
            i64 = cap if k in (K_I64, K_F64) else 2 * cap if k == K_DEC128 else 0
            i32 = cap if k in (K_I32, K_F32) else cap + 1 if k in (K_BINARY, K_LIST, K_MAP) else 0
            valid = cap if node.nullable else 0
            bools = cap if k == K_BOOL else 0
            data = int(s[node.index, S_DATA_CAP]) if k == K_BINARY else 0
            places.append((used[0], used[1], used[2], used[2] + _round_up(valid, _ALIGN), used[3]))
            used[0] += _round_up(i64, _ALIGN // 8)
            used[1] += _round_up(i32, _ALIGN // 4)
            used[2] += _round_up(valid, _ALIGN) + _round_up(bools, _ALIGN)
            used[3] += _round_up(data, _ALIGN)
        a64 = np.empty(max(used[0], 1), dtype=np.int64)
        a32 = np.empty(max(used[1], 1), dtype=np.int32)
        a8 = np.empty(max(used[2], 1), dtype=np.uint8)
        abytes = np.empty(max(used[3], 1), dtype=np.uint8)
        for node, (b64, b32, b_valid, b_bool, b_data) in zip(self.layout.nodes, places):
            i, k = node.index, node.kind
            length = int(s[i, S_LEN])
            if node.nullable and old is not None:
                at = old_state[i, S_VALID]
                a8[b_valid:b_valid + length] = old[2][at:at + length]
            s[i, S_VALID] = b_valid if node.nullable else -1
            base = 0
            if k in (K_I64, K_F64, K_DEC128):
                base, width = b64, (2 if k == K_DEC128 else 1)
                if old is not None:
                    at = old_state[i, S_BASE]
                    a64[base:base + width * length] = old[0][at:at + width * length]
            elif k in (K_I32, K_F32, K_BINARY, K_LIST, K_MAP):
                base, extra = b32, (0 if k in (K_I32, K_F32) else 1)
                if old is not None:
                    at = old_state[i, S_BASE]
                    a32[base:base + length + extra] = old[1][at:at + length + extra]
                elif extra:
                    a32[base] = 0
            elif k == K_BOOL:
                base = b_bool
                if old is not None:
                    at = old_state[i, S_BASE]
                    a8[base:base + length] = old[2][at:at + length]
            s[i, S_BASE] = base
            if k == K_BINARY:
                if old is not None:
                    at, d = old_state[i, S_DATA_BASE], int(s[i, S_DATA_LEN])
                    abytes[b_data:b_data + d] = old[3][at:at + d]
                s[i, S_DATA_BASE] = b_data
        self.a64, self.a32, self.a8, self.abytes = a64, a32, a8, abytes
        self.f64 = a64.view(np.float64)
        self.f32 = a32.view(np.float32)

    def grow(self, node: int, room: int, want: int, rows_done: int) -> None:
        """Enlarges the region of ``node`` that a kernel found full after ``rows_done`` complete rows (``room``:
        ROOM_VALUES or ROOM_DATA; ``want``: what the failed append needed)."""
        s = self.state
        slot_cap, slot_len = (S_DATA_CAP, S_DATA_LEN) if room == ROOM_DATA else (S_CAP, S_LEN)
        cap, used = int(s[node, slot_cap]), int(s[node, slot_len])
        estimate = int(used / rows_done * self.rows * 1.25) if rows_done else 0
        old_state = s.copy()
        s[node, slot_cap] = max(2 * cap, estimate, used + want) + 64
        self._allocate((self.a64, self.a32, self.a8, self.abytes), old_state)

    def kernel_args(self) -> tuple:
        return (self.state, self.layout.pad_nodes, self.a64, self.f64, self.a32, self.f32, self.a8, self.abytes)

    # ---- hints for the next batch ----
    def usage(self) -> tuple[dict[int, float], dict[int, float]]:
        """(items per row of repeated nodes, data bytes per row of binary nodes) in this batch."""
        rows = max(self.rows, 1)
        s = self.state
        items = {n.index: float(s[n.index, S_LEN]) / rows for n in self.layout.nodes if n.repeated}
        data = {n.index: float(s[n.index, S_DATA_LEN]) / rows for n in self.layout.nodes if n.kind == K_BINARY}
        return items, data

    # ---- Arrow ----
    def to_arrow(self, index: int = 0) -> pa.Array:
        """The node's values as an Arrow array (zero-copy views of the arenas)."""
        node = self.layout.nodes[index]
        s = self.state
        n = int(s[index, S_LEN])
        base = int(s[index, S_BASE])
        validity, nulls = None, 0
        if node.nullable:
            vb = int(s[index, S_VALID])
            flags = self.a8[vb:vb + n]
            nulls = n - int(np.count_nonzero(flags))
            if nulls:
                validity = pa.py_buffer(np.packbits(flags, bitorder="little"))
        k = node.kind
        t = node.type
        if k == K_NULL:
            return pa.nulls(n)
        if k == K_STRUCT:
            children = [self.to_arrow(c) for c in node.children]
            return pa.Array.from_buffers(t, n, [validity], null_count=nulls, children=children)
        if k in (K_LIST, K_MAP):
            offsets = pa.py_buffer(self.a32[base:base + n + 1])
            child = self.to_arrow(node.children[0])
            return pa.Array.from_buffers(t, n, [validity, offsets], null_count=nulls, children=[child])
        if k == K_BINARY:
            offsets = pa.py_buffer(self.a32[base:base + n + 1])
            db = int(s[index, S_DATA_BASE])
            data = pa.py_buffer(self.abytes[db:db + int(s[index, S_DATA_LEN])])
            return pa.Array.from_buffers(t, n, [validity, offsets, data], null_count=nulls)
        if k == K_BOOL:
            values = pa.py_buffer(np.packbits(self.a8[base:base + n], bitorder="little"))
        elif k in (K_I32, K_F32):
            values = pa.py_buffer(self.a32[base:base + n])
        elif k == K_DEC128:
            values = pa.py_buffer(self.a64[base:base + 2 * n])
        else:
            values = pa.py_buffer(self.a64[base:base + n])
        return pa.Array.from_buffers(t, n, [validity, values], null_count=nulls)
