"""Avro encoding programs: checks that an Arrow (Spark) type can be written with an Avro schema and turns
the pair into instructions for ``vm_encode.py``.

The fit follows spark-avro's ``AvroSerializer``: struct -> record (fields by name, exact first, then
ignoring case; an Arrow field the record lacks is an error; a record field the struct lacks is written
as its default, or null when its type allows null, else an error), string -> string or enum, binary ->
bytes or fixed, decimal -> decimal of the same scale (and enough precision), date -> int, timestamp ->
long (timestamp-millis or no logical type: milliseconds, rounding down; timestamp-micros: microseconds;
timestamp_ntz likewise with local-timestamp-*), list -> array, map<string, _> -> map, a nullable value ->
a union holding null, int64 -> [int, long] (long branch), float64 -> [float, double] (double branch), a
struct of member0..memberN -> a union of N+1 non-null branches. Beyond spark-avro, lossless widenings are
accepted: int32 -> long, float32 -> double. Nulls where the schema has none fail per row (``E_NULL``).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..columns.output import Layout
from ..errors import TypeMismatchError
from ...protocol.records.pure.ints import encode_varint
from .defaults import encode_default
from .model import Array, Enum, Fixed, Map, Primitive, Record, Schema, Union
from .opcodes import (E_ARRAY, E_BOOL, E_BYTES, E_CONST, E_DEC_BYTES, E_DEC_FIXED, E_DOUBLE, E_ENUM, E_FIXED,
                      E_FLOAT, E_FLOAT_DOUBLE, E_INT, E_LONG, E_MEMBERS, E_OPTIONAL, E_RETURN, E_STRUCT)

_TIMESTAMP_DIVISOR = {  # (time zone?, logical type) -> divisor of microseconds
    (True, None): 1000, (True, "timestamp-millis"): 1000, (True, "timestamp-micros"): 1,
    (False, None): 1000, (False, "local-timestamp-millis"): 1000, (False, "local-timestamp-micros"): 1,
}


class EncodeProgram:
    """The instructions writing values of ``layout`` (an Arrow type's nodes) as ``schema``; raises
    :class:`TypeMismatchError` naming the field and both types when they do not fit."""

    def __init__(self, schema: Schema, layout: Layout) -> None:
        self.schema = schema
        self.layout = layout
        self.code: list[tuple[int, int, int, int]] = []
        self.paths: list[str] = []
        self.tables: list[int] = []
        self.consts = bytearray()
        self.max_depth = 0
        self.entry = self._commit(self._value(schema, 0, "", 0))
        self._frozen = None

    def _commit(self, ops: list[tuple]) -> int:
        start = len(self.code)
        for op, a, b, c, path in ops:
            self.code.append((op, a, b, c))
            self.paths.append(path)
        self.code.append((E_RETURN, 0, 0, 0))
        self.paths.append("")
        return start

    def _sub(self, ops: list[tuple], depth: int) -> int:
        self.max_depth = max(self.max_depth, depth)
        return self._commit(ops)

    def _const(self, data: bytes, path: str) -> tuple:
        offset = len(self.consts)
        self.consts += data
        return (E_CONST, offset, len(data), 0, path)

    def _mismatch(self, t: pa.DataType, s: Schema, path: str, why: str = ""):
        raise TypeMismatchError(f"Arrow type {t} cannot be written as Avro {s.describe()}{why}", path or "value")

    def _value(self, s: Schema, node: int, path: str, depth: int) -> list[tuple]:
        t = self.layout.nodes[node].type
        types = pa.types
        if isinstance(s, Union):
            return self._union(s, node, path, depth)
        kind = s.type
        if kind == "null":
            if types.is_null(t):
                return []
            self._mismatch(t, s, path)
        if isinstance(s, Primitive):
            if kind == "boolean" and types.is_boolean(t):
                return [(E_BOOL, node, 0, 0, path)]
            if kind == "int" and (types.is_int32(t) or types.is_date32(t)):
                return [(E_INT, node, 0, 0, path)]
            if kind == "long":
                if types.is_int64(t) or types.is_time64(t):
                    return [(E_LONG, node, 1, 0, path)]
                if types.is_int32(t):
                    return [(E_INT, node, 0, 0, path)]  # the same varint
                if types.is_timestamp(t):
                    divisor = _TIMESTAMP_DIVISOR.get((t.tz is not None, s.logical))
                    if divisor is None:
                        self._mismatch(t, s, path, ": the time zones or units differ")
                    return [(E_LONG, node, divisor, 0, path)]
            if kind == "float" and types.is_float32(t):
                return [(E_FLOAT, node, 0, 0, path)]
            if kind == "double" and types.is_float64(t):
                return [(E_DOUBLE, node, 0, 0, path)]
            if kind == "double" and types.is_float32(t):
                return [(E_FLOAT_DOUBLE, node, 0, 0, path)]
            if kind == "string" and types.is_string(t):
                return [(E_BYTES, node, 0, 0, path)]
            if kind == "bytes":
                if types.is_binary(t):
                    return [(E_BYTES, node, 0, 0, path)]
                if types.is_decimal(t) and s.logical == "decimal":
                    self._check_decimal(t, s, path)
                    return [(E_DEC_BYTES, node, 0, 0, path)]
            self._mismatch(t, s, path)
        if isinstance(s, Fixed):
            if types.is_binary(t):
                return [(E_FIXED, node, s.size, 0, path)]
            if types.is_decimal(t) and s.logical == "decimal":
                self._check_decimal(t, s, path)
                return [(E_DEC_FIXED, node, s.size, 0, path)]
            self._mismatch(t, s, path)
        if isinstance(s, Enum):
            if not types.is_string(t):
                self._mismatch(t, s, path)
            table = len(self.tables)
            for symbol in s.symbols:
                data = symbol.encode("utf-8")
                self.tables.extend((len(self.consts), len(data)))
                self.consts += data
            return [(E_ENUM, node, table, len(s.symbols), path)]
        if isinstance(s, Record):
            if not types.is_struct(t):
                self._mismatch(t, s, path)
            return self._record(s, node, path, depth)
        if isinstance(s, Array):
            if not types.is_list(t):
                self._mismatch(t, s, path)
            item = self._sub(self._value(s.items, self.layout.child(node), f"{path}[]", depth + 1), depth + 1)
            return [(E_ARRAY, node, item, 0, path)]
        if isinstance(s, Map):
            if not types.is_map(t) or not types.is_string(t.key_type):
                self._mismatch(t, s, path)
            entries = self.layout.child(node)
            key, value = self.layout.child(entries, 0), self.layout.child(entries, 1)
            body = [(E_BYTES, key, 0, 0, f"{path}{{key}}")] + self._value(s.values, value, f"{path}{{}}", depth + 1)
            return [(E_ARRAY, node, self._sub(body, depth + 1), 0, path)]
        self._mismatch(t, s, path)  # pragma: no cover

    def _check_decimal(self, t: pa.DataType, s: Schema, path: str) -> None:
        if t.scale != s.scale or t.precision > s.precision:
            self._mismatch(t, s, path, ": the scale must be equal and the precision not larger")

    def _record(self, s: Record, node: int, path: str, depth: int) -> list[tuple]:
        arrow_fields = {f.name: i for i, f in enumerate(self.layout.nodes[node].type)}
        folded: dict[str, list[str]] = {}
        for name in arrow_fields:
            folded.setdefault(name.lower(), []).append(name)
        ops = [(E_STRUCT, node, 0, 0, path)]
        used = set()
        for f in s.fields:
            fpath = f"{path}.{f.name}" if path else f.name
            name = f.name if f.name in arrow_fields else None
            if name is None and len(folded.get(f.name.lower(), [])) == 1:
                name = folded[f.name.lower()][0]
            if name is None or name in used:
                if f.has_default:
                    ops.append(self._const(encode_default(f.schema, f.default), fpath))
                elif isinstance(f.schema, Union) and f.schema.has_null:
                    ops.append(self._const(encode_varint(f.schema.index_of_null()), fpath))
                else:
                    raise TypeMismatchError(f"the Avro record {s.fullname} needs field {f.name!r} (no default, not "
                                            f"nullable) and the Arrow struct has no such field", fpath)
                continue
            used.add(name)
            ops += self._value(f.schema, self.layout.child(node, arrow_fields[name]), fpath, depth)
        extra = [n for n in arrow_fields if n not in used]
        if extra:
            raise TypeMismatchError(f"the Arrow struct's field(s) {extra} have no counterpart in the Avro record "
                                    f"{s.fullname} (fields {[f.name for f in s.fields]})", path or "value")
        return ops

    def _union(self, s: Union, node: int, path: str, depth: int) -> list[tuple]:
        t = self.layout.nodes[node].type
        types = pa.types
        nn = s.non_null
        null_index = s.index_of_null()
        if not nn:
            if null_index >= 0 and (types.is_null(t) or (types.is_struct(t) and t.num_fields == 0)):
                return [self._const(encode_varint(null_index), path)]
            self._mismatch(t, s, path)
        kinds = sorted(b.type for b in nn)
        chosen = None
        if len(nn) == 1:
            chosen = nn[0]
        elif kinds == ["int", "long"] and (types.is_int64(t) or types.is_int32(t)):
            chosen = next(b for b in nn if b.type == "long")
        elif kinds == ["double", "float"] and (types.is_float64(t) or types.is_float32(t)):
            chosen = next(b for b in nn if b.type == "double")
        if chosen is not None:
            j = s.branches.index(chosen)
            inner = self._value(chosen, node, path, depth)
            if null_index < 0:
                return [self._const(encode_varint(j), path)] + inner
            return [(E_OPTIONAL, node, null_index | ((j + 1) << 16), len(inner), path)] + inner
        names = [f"member{i}" for i in range(len(nn))]
        if not types.is_struct(t) or [f.name for f in t] != names:
            self._mismatch(t, s, path, f": a union of several types is written from a struct of {', '.join(names)}")
        members = self.layout.nodes[node].children
        entries = []
        for i, branch in enumerate(nn):
            body = self._value(branch, members[i], f"{path}.member{i}", depth + 1)
            entries += [members[i], s.branches.index(branch), self._sub(body, depth + 1)]
        table = len(self.tables)  # after the members' programs, which may add tables of their own
        self.tables.extend(entries + [null_index])
        return [(E_MEMBERS, node, table, len(nn), path)]

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._frozen is None:
            code = np.array(self.code, dtype=np.int64).reshape(-1)
            tables = np.array(self.tables or [0], dtype=np.int64)
            consts = np.frombuffer(bytes(self.consts) or b"\0", dtype=np.uint8)
            self._frozen = (code, tables, consts)
        return self._frozen

    def path_at(self, pc: int) -> str:
        return self.paths[pc] if 0 <= pc < len(self.paths) else ""
