"""Avro decoding programs: a resolution plan (``resolution.py``) turned into instructions (``opcodes.py``)
for ``vm_decode.py``, writing into the output columns of the reader's Arrow type (``columns.Layout``).

One :class:`DecodeProgram` per reader schema holds the programs of every writer schema met so far, in one
instruction array: each writer's entry point is a program index, so one batch can mix writer versions.
Subprograms (array items, union branches, defaults) are appended as they are built; jumps within a
sequence (``D_OPTIONAL``) are relative, so sequences can be placed anywhere.
"""

from __future__ import annotations

import numpy as np

from ..columns.output import Layout
from ..vm.slots import K_NULL
from .defaults import encode_default
from .model import Array, Enum, Fixed, Map, Primitive, Record, Schema, Union
from .opcodes import (D_ARRAY, D_BOOL, D_BYTES, D_DEC_BYTES, D_DEC_FIXED, D_DEFAULT, D_DOUBLE, D_ENUM, D_FIXED,
                      D_FLOAT, D_FLOAT_DOUBLE, D_INT, D_INT_DOUBLE, D_INT_FLOAT, D_INT_LONG, D_LONG, D_LONG_DOUBLE,
                      D_LONG_FLOAT, D_NULL, D_OPTIONAL, D_PAD, D_RECORD, D_RETURN, D_SKIP_ARRAY, D_SKIP_BYTES,
                      D_SKIP_FIXED, D_SKIP_VARINT, D_UNION)
from .resolution import (ArrayPlan, EnumPlan, MapPlan, Plan, Read, ReaderBranchPlan, RecordPlan, WriterUnionPlan,
                         resolve)
from .spark_types import union_shape

_MILLIS = ("timestamp-millis", "local-timestamp-millis")
_SIMPLE = {("int", "int"): D_INT, ("int", "long"): D_INT_LONG, ("int", "float"): D_INT_FLOAT,
           ("int", "double"): D_INT_DOUBLE, ("long", "long"): D_LONG, ("long", "float"): D_LONG_FLOAT,
           ("long", "double"): D_LONG_DOUBLE, ("float", "float"): D_FLOAT, ("float", "double"): D_FLOAT_DOUBLE,
           ("double", "double"): D_DOUBLE, ("boolean", "boolean"): D_BOOL}
_FIXED_SKIP = {"boolean": 1, "float": 4, "double": 8}

Op = tuple  # (op, a, b, c, path)


def min_bytes(schema: Schema) -> int:
    """The fewest bytes a value of ``schema`` takes (bounds the item count an array block may claim)."""
    if isinstance(schema, Primitive):
        return {"null": 0, "float": 4, "double": 8}.get(schema.type, 1)
    if isinstance(schema, Fixed):
        return schema.size
    if isinstance(schema, Record):
        return sum(min_bytes(f.schema) for f in schema.fields)
    if isinstance(schema, Union):
        return 1 + min((min_bytes(b) for b in schema.branches), default=0)
    return 1  # enum index, array/map terminator


class DecodeProgram:
    """The instructions decoding any writer schema added so far into ``layout`` (the reader's columns)."""

    def __init__(self, reader: Schema, layout: Layout) -> None:
        self.reader = reader
        self.layout = layout
        self.code: list[tuple[int, int, int, int]] = []
        self.paths: list[str] = []
        self.tables: list[int] = []
        self.consts = bytearray()
        self.max_depth = 0
        self._symbols: dict[str, int] = {}
        self._frozen: tuple | None = None

    # ---- building ----
    def add(self, writer: Schema) -> int:
        """Resolves ``writer`` against the reader and adds its program; returns its entry pc. Raises
        :class:`ResolutionError` when the writer's data cannot be read as the reader."""
        plan = resolve(writer, self.reader)
        ops = self._emit(plan, 0, 0)
        self._frozen = None
        return self._commit(ops)

    def _commit(self, ops: list[Op]) -> int:
        start = len(self.code)
        for op, a, b, c, path in ops:
            self.code.append((op, a, b, c))
            self.paths.append(path)
        self.code.append((D_RETURN, 0, 0, 0))
        self.paths.append(ops[-1][4] if ops else "")
        return start

    def _sub(self, ops: list[Op], depth: int) -> int:
        self.max_depth = max(self.max_depth, depth)
        return self._commit(ops)

    def _const(self, data: bytes) -> int:
        offset = len(self.consts)
        self.consts += data
        return offset

    def _symbol(self, text: str) -> tuple[int, int]:
        data = text.encode("utf-8")
        if text not in self._symbols:
            self._symbols[text] = self._const(data)
        return self._symbols[text], len(data)

    def _path(self, node: int) -> str:
        return self.layout.path(node)

    def _emit(self, plan: Plan, node: int, depth: int) -> list[Op]:
        path = self._path(node)
        if isinstance(plan, Read):
            return [self._read(plan.writer, plan.reader, node, path)]
        if isinstance(plan, EnumPlan):
            table = len(self.tables)
            for j in plan.mapping:
                self.tables.extend(self._symbol(plan.reader.symbols[j]) if j >= 0 else (-1, -1))
            return [(D_ENUM, node, table, len(plan.mapping), path)]
        if isinstance(plan, RecordPlan):
            ops = [(D_RECORD, node, 0, 0, path)]
            for wf, i, sub in plan.steps:
                if i < 0:
                    ops += self._skip(wf.schema, depth, f"{path}.{wf.name} (writer only)" if path else wf.name)
                else:
                    ops += self._emit(sub, self.layout.child(node, i), depth)
            for i in plan.missing:
                ops += self._default(plan.reader.fields[i], self.layout.child(node, i), depth)
            return ops
        if isinstance(plan, ArrayPlan):
            item = self._sub(self._emit(plan.items, self.layout.child(node), depth + 1), depth + 1)
            return [(D_ARRAY, node, item, min_bytes(plan.writer.items), path)]
        if isinstance(plan, MapPlan):
            entries = self.layout.child(node)
            key, value = self.layout.child(entries, 0), self.layout.child(entries, 1)
            body = [(D_RECORD, entries, 0, 0, path), (D_BYTES, key, 0, 0, self._path(key))]
            body += self._emit(plan.values, value, depth + 1)
            return [(D_ARRAY, node, self._sub(body, depth + 1), 1 + min_bytes(plan.writer.values), path)]
        if isinstance(plan, ReaderBranchPlan):
            return self._reader_branch(plan, node, depth)
        if isinstance(plan, WriterUnionPlan):
            return self._writer_union(plan, node, depth)
        raise AssertionError(f"unexpected plan {plan!r}")  # pragma: no cover

    def _read(self, w: Schema, r: Schema, node: int, path: str) -> Op:
        wt, rt = w.type, r.type
        if rt == "null":
            return (D_NULL, node, 0, 0, path)
        op = _SIMPLE.get((wt, rt))
        if op is not None:
            scale = 1000 if r.logical in _MILLIS and op in (D_LONG, D_INT_LONG) else 1
            return (op, node, scale, 0, path)
        if rt in ("bytes", "string"):
            if r.logical == "decimal" and rt == "bytes":
                return (D_DEC_BYTES, node, r.precision, 0, path)
            return (D_BYTES, node, 0, 0, path)
        assert isinstance(r, Fixed)
        if r.logical == "decimal":
            return (D_DEC_FIXED, node, r.size, r.precision, path)
        return (D_FIXED, node, r.size, 0, path)

    def _reader_branch(self, plan: ReaderBranchPlan, node: int, depth: int) -> list[Op]:
        union = plan.reader
        branch = union.branches[plan.index]
        path = self._path(node)
        if branch.type == "null":
            if self.layout.nodes[node].kind == K_NULL:
                return [(D_NULL, node, 0, 0, path)]
            return [(D_PAD, node, 0, 0, path)]
        shape = union_shape(union)
        if shape in ("long", "double"):  # spark-avro widens int+long to long, float+double to double
            return [self._read(plan.inner.writer, Primitive(shape), node, path)]
        if shape != "members":
            return self._emit(plan.inner, node, depth)
        k = union.non_null.index(branch)
        ops = [(D_RECORD, node, 0, 0, path)]
        members = self.layout.nodes[node].children
        ops += [(D_PAD, m, 0, 0, path) for i, m in enumerate(members) if i != k]
        return ops + self._emit(plan.inner, members[k], depth)

    def _writer_union(self, plan: WriterUnionPlan, node: int, depth: int) -> list[Op]:
        path = self._path(node)
        bodies = [None if isinstance(b, str) else self._emit(b, node, depth + 1) for b in plan.branches]
        nulls = [i for i, b in enumerate(plan.writer.branches) if b.type == "null"]
        if len(bodies) == 2 and nulls and all(b is not None for b in bodies):
            null_index = nulls[0]
            other = bodies[1 - null_index]
            if bodies[null_index] == [(D_PAD, node, 0, 0, path)]:
                return [(D_OPTIONAL, node, null_index, len(other), path)] + other
        targets = [-1 if body is None else self._sub(body, depth + 1) for body in bodies]
        table = len(self.tables)
        self.tables.extend(targets)
        return [(D_UNION, table, len(bodies), 0, path)]

    def _default(self, field, node: int, depth: int) -> list[Op]:
        path = self._path(node)
        if field.default is None and isinstance(field.schema, Union) and field.schema.has_null:
            return [(D_PAD, node, 0, 0, path)] if self.layout.nodes[node].kind != K_NULL else \
                [(D_NULL, node, 0, 0, path)]
        data = encode_default(field.schema, field.default)
        body = self._emit(resolve(field.schema, field.schema), node, depth + 1)
        return [(D_DEFAULT, self._sub(body, depth + 1), self._const(data), len(data), path)]

    def _skip(self, w: Schema, depth: int, path: str) -> list[Op]:
        t = w.type
        if t == "null":
            return []
        if t in _FIXED_SKIP or isinstance(w, Fixed):
            return [(D_SKIP_FIXED, w.size if isinstance(w, Fixed) else _FIXED_SKIP[t], 0, 0, path)]
        if t in ("int", "long") or isinstance(w, Enum):
            return [(D_SKIP_VARINT, 0, 0, 0, path)]
        if t in ("bytes", "string"):
            return [(D_SKIP_BYTES, 0, 0, 0, path)]
        if isinstance(w, Record):
            ops: list[Op] = []
            for f in w.fields:
                for op in self._skip(f.schema, depth, f"{path}.{f.name}"):
                    if ops and op[0] == D_SKIP_FIXED and ops[-1][0] == D_SKIP_FIXED:
                        ops[-1] = (D_SKIP_FIXED, ops[-1][1] + op[1], 0, 0, ops[-1][4])
                    else:
                        ops.append(op)
            return ops
        if isinstance(w, Array):
            item = self._sub(self._skip(w.items, depth + 1, f"{path}[]"), depth + 1)
            return [(D_SKIP_ARRAY, 0, item, min_bytes(w.items), path)]
        if isinstance(w, Map):
            body = [(D_SKIP_BYTES, 0, 0, 0, path)] + self._skip(w.values, depth + 1, f"{path}{{}}")
            return [(D_SKIP_ARRAY, 0, self._sub(body, depth + 1), 1 + min_bytes(w.values), path)]
        assert isinstance(w, Union)
        targets = [self._sub(self._skip(b, depth + 1, path), depth + 1) for b in w.branches]
        table = len(self.tables)  # after the branches' programs, which may add tables of their own
        self.tables.extend(targets)
        return [(D_UNION, table, len(w.branches), 0, path)]

    # ---- running ----
    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(instructions int64 [4 per pc], tables int64, consts uint8 read-only) for the kernel."""
        if self._frozen is None:
            code = np.array(self.code, dtype=np.int64).reshape(-1)
            tables = np.array(self.tables or [0], dtype=np.int64)
            consts = np.frombuffer(bytes(self.consts) or b"\0", dtype=np.uint8)
            self._frozen = (code, tables, consts)
        return self._frozen

    def path_at(self, pc: int) -> str:
        return self.paths[pc] if 0 <= pc < len(self.paths) else ""
