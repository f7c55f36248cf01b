"""Protobuf encoding programs: checks that an Arrow (Spark) type can be written as a Protobuf message and makes
the pair into the tables ``vm_encode.py`` runs.

The fit follows spark-protobuf's ``ProtobufSerializer``: struct fields are matched to the message's fields
by name (exactly, else ignoring case when that is unambiguous); a struct field the message lacks is an error,
as is a required message field the struct lacks. Types: boolean -> bool; int (and byte, short) -> int32,
sint32, sfixed32, fixed32, uint32 (its 32 bits), an enum (its number) and the 64-bit integers; bigint ->
int64, sint64, sfixed64, fixed64, uint64 (its bits) and uint32 when in range (``upcast.unsigned.ints``
reads); decimal(20,0) -> uint64; float -> float, double; double -> double; string -> string, an enum (the
value's name); binary -> bytes; date -> int32 (days); timestamp -> int64 (milliseconds, as spark-protobuf)
or google.protobuf.Timestamp; interval day to second -> int64 (microseconds) or google.protobuf.Duration;
struct -> message; a primitive -> its wrapper message (google.protobuf.Int32Value...); array -> repeated
(packed where the field is); map -> map. Beyond spark-protobuf: Timestamp, Duration, wrappers and int enums.
Nulls: a null scalar is not written (a required one gets its default, as Spark does); null list elements
and a null required message fail the row. Zero values of implicit-presence fields are not written.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..columns.output import Layout
from ..errors import TypeMismatchError
from .model import F, FieldInfo, MessageType
from .opcodes import (EF_AUX, EF_DEFAULT, EF_FLAGS, EF_ITEM, EF_NODE, EF_OP, EF_PACKED_TAG, EF_SUB, EF_TAG,
                      EF_WORDS, EFLAG_CLOSED_ENUM, EFLAG_IMPLICIT, EFLAG_NULL_DEFAULT, EFLAG_REPEATED,
                      EFLAG_REQUIRED, EOP_BOOL,
                      EOP_BYTES, EOP_DURATION, EOP_EMPTY, EOP_ENUM_NAME, EOP_F32_DOUBLE, EOP_FIXED32, EOP_FIXED64,
                      EOP_I32, EOP_I32_FIXED64, EOP_I32_Z64, EOP_I64, EOP_MAP, EOP_MESSAGE, EOP_MILLIS,
                      EOP_TIMESTAMP, EOP_U32, EOP_U32_OF_I64, EOP_U64_OF_DEC, EOP_WRAPPER, EOP_Z32, EOP_Z64,
                      M_FIELD_BASE, M_NFIELDS, MSG_WORDS, WT_I32, WT_I64, WT_LEN, WT_VARINT)
from .spark_types import WRAPPERS, is_time_message

_INT32_FAMILY = {F.TYPE_INT32: EOP_I32, F.TYPE_UINT32: EOP_U32, F.TYPE_SINT32: EOP_Z32, F.TYPE_SFIXED32: EOP_FIXED32,
                 F.TYPE_FIXED32: EOP_FIXED32, F.TYPE_INT64: EOP_I32, F.TYPE_UINT64: EOP_I32,
                 F.TYPE_SINT64: EOP_I32_Z64, F.TYPE_FIXED64: EOP_I32_FIXED64, F.TYPE_SFIXED64: EOP_I32_FIXED64}
_INT64_FAMILY = {F.TYPE_INT64: EOP_I64, F.TYPE_UINT64: EOP_I64, F.TYPE_SINT64: EOP_Z64, F.TYPE_FIXED64: EOP_FIXED64,
                 F.TYPE_SFIXED64: EOP_FIXED64, F.TYPE_UINT32: EOP_U32_OF_I64}
_WIRE = {EOP_I32: WT_VARINT, EOP_U32: WT_VARINT, EOP_Z32: WT_VARINT, EOP_I64: WT_VARINT, EOP_Z64: WT_VARINT,
         EOP_I32_Z64: WT_VARINT, EOP_U32_OF_I64: WT_VARINT, EOP_U64_OF_DEC: WT_VARINT, EOP_BOOL: WT_VARINT,
         EOP_ENUM_NAME: WT_VARINT, EOP_MILLIS: WT_VARINT, EOP_FIXED32: WT_I32, EOP_F32_DOUBLE: WT_I64,
         EOP_FIXED64: WT_I64, EOP_I32_FIXED64: WT_I64}


class EncodeProgram:
    """The tables writing values of ``layout`` (an Arrow struct's nodes) as ``message``; raises
    :class:`TypeMismatchError` naming the field and both types when they do not fit."""

    def __init__(self, message: MessageType, layout: Layout) -> None:
        self.layout = layout
        self.msgs: list[list[int]] = []
        self.fields: list[list[int]] = []
        self.enums: list[int] = []
        self.consts = bytearray()
        self._enum_tables: dict[str, int] = {}
        self.depth = 0
        self._paths: list[str] = []
        t = layout.nodes[0].type
        if not pa.types.is_struct(t):
            raise TypeMismatchError(f"a Protobuf message is written from a struct, not {t}", "value")
        self.root = self._message(message, 0, "", 1)
        self._arrays = None

    def _enum_table(self, enum) -> int:
        """[count, open (1) or closed (0), prefix offset, prefix length, then (name offset, name length, number) per
        value] for looking names up; an open enum also takes the names kwire reads its unknown numbers as
        (``UNKNOWN_ENUM_VALUE_<Enum>_<n>``, the prefix)."""
        found = self._enum_tables.get(enum.full_name)
        if found is None:
            found = self._enum_tables[enum.full_name] = len(self.enums)
            prefix = f"UNKNOWN_ENUM_VALUE_{enum.name}_".encode()
            self.enums += [len(enum.values), 0 if enum.closed else 1, len(self.consts), len(prefix)]
            self.consts += prefix
            for name, number in enum.values:
                data = name.encode("utf-8")
                self.enums += [len(self.consts), len(data), number]
                self.consts += data
        return found

    def _mismatch(self, t: pa.DataType, f: FieldInfo, path: str, why: str = ""):
        raise TypeMismatchError(f"Arrow type {t} cannot be written as Protobuf {f.type_label} "
                                f"(field {f.name} = {f.number}){why}", path)

    def _message(self, message: MessageType, node: int, path: str, depth: int) -> int:
        self.depth = max(self.depth, depth)
        struct = self.layout.nodes[node]
        by_name = {f.name: f for f in message.fields}
        folded: dict[str, list[FieldInfo]] = {}
        for f in message.fields:
            folded.setdefault(f.name.lower(), []).append(f)
        pairs, used = [], set()
        for i, af in enumerate(struct.type):
            fpath = f"{path}.{af.name}" if path else af.name
            f = by_name.get(af.name)
            if f is None and len(folded.get(af.name.lower(), [])) == 1:
                f = folded[af.name.lower()][0]
            if f is None or f.number in used:
                raise TypeMismatchError(f"the struct's field {af.name!r} has no counterpart in Protobuf message "
                                        f"{message.full_name} (fields {[x.name for x in message.fields]})", fpath)
            used.add(f.number)
            pairs.append((f, struct.children[i], af.type, fpath))
        for f in message.fields:
            if f.required and f.number not in used:
                raise TypeMismatchError(f"Protobuf message {message.full_name} requires field {f.name!r}, which the "
                                        f"struct lacks", f"{path}.{f.name}" if path else f.name)
        return self._add_message(pairs, depth, entry=False)

    def _add_message(self, pairs: list, depth: int, entry: bool) -> int:
        """A message program of (proto field, Arrow node, Arrow type, path) rows."""
        index = len(self.msgs)
        self.msgs.append([0] * MSG_WORDS)
        rows = [self._field(f, node, t, path, depth, entry) for f, node, t, path in pairs]
        base = len(self.fields)
        self.fields.extend(row for row, _ in rows)
        self._paths.extend(path for _, path in rows)
        self.msgs[index][M_NFIELDS], self.msgs[index][M_FIELD_BASE] = len(rows), base
        return index

    def _field(self, f: FieldInfo, node: int, t: pa.DataType, path: str, depth: int, entry: bool):
        row = [0] * EF_WORDS
        row[EF_NODE], row[EF_ITEM], row[EF_PACKED_TAG] = node, -1, -1
        flags = 0
        if f.is_map:
            if not pa.types.is_map(t):
                self._mismatch(t, f, path, ": a map field is written from a map")
            entries = self.layout.child(node)
            key, value = f.message.field_by_number(1), f.message.field_by_number(2)
            key_node, value_node = self.layout.nodes[entries].children
            pairs = [(key, key_node, t.key_type, f"{path}{{key}}"), (value, value_node, t.item_type, f"{path}{{}}")]
            row[EF_OP], row[EF_ITEM], row[EF_TAG] = EOP_MAP, entries, f.number << 3 | WT_LEN
            row[EF_SUB] = self._add_message(pairs, depth + 1, entry=True)
            row[EF_FLAGS] = EFLAG_REPEATED
            return row, path
        if f.repeated:
            if not pa.types.is_list(t):
                self._mismatch(t, f, path, ": a repeated field is written from an array")
            flags |= EFLAG_REPEATED
            node = row[EF_ITEM] = self.layout.child(node)
            t = t.value_type
        op, sub, aux = self._value_op(f, t, node, path + ("[]" if f.repeated else ""), depth)
        row[EF_OP], row[EF_SUB], row[EF_AUX] = op, sub, aux
        wire = _WIRE.get(op, WT_LEN)
        row[EF_TAG] = f.number << 3 | wire
        if f.repeated and f.packed and wire != WT_LEN:
            row[EF_PACKED_TAG] = f.number << 3 | WT_LEN
        if entry:
            flags |= EFLAG_NULL_DEFAULT
            row[EF_DEFAULT] = self._default(f, op)
        elif not f.repeated and not f.has_presence:
            flags |= EFLAG_IMPLICIT
        if f.required:
            flags |= EFLAG_REQUIRED
            if f.message is None:
                row[EF_DEFAULT] = self._default(f, op)
        if f.enum is not None and f.enum.closed and op != EOP_ENUM_NAME:
            flags |= EFLAG_CLOSED_ENUM
        row[EF_FLAGS] = flags
        return row, path

    def _default(self, f: FieldInfo, op: int) -> int:
        value = f.default if f.default is not None else (f.enum.default_number if f.enum is not None else 0)
        if op in (EOP_BYTES, EOP_MESSAGE, EOP_TIMESTAMP, EOP_DURATION, EOP_WRAPPER, EOP_EMPTY):
            return 0  # empty (strings, bytes, messages); an explicit default of a required string is not kept
        if f.type == F.TYPE_FLOAT:
            return int(np.array([value], np.float32).view(np.int32)[0])
        if f.type == F.TYPE_DOUBLE:
            return int(np.array([value], np.float64).view(np.int64)[0])
        return int(value) - (1 << 64) if int(value) >= 1 << 63 else int(value)

    def _value_op(self, f: FieldInfo, t: pa.DataType, node: int, path: str, depth: int) -> tuple[int, int, int]:
        types = pa.types
        m = f.message
        if m is not None:
            if types.is_struct(t):
                return EOP_MESSAGE, self._message(m, node, path, depth + 1), 0
            if is_time_message(m, "Timestamp") and types.is_timestamp(t):
                return EOP_TIMESTAMP, 0, 0
            if is_time_message(m, "Duration") and types.is_duration(t):
                return EOP_DURATION, 0, 0
            if m.full_name in WRAPPERS and not types.is_struct(t):
                inner = FieldInfo("value", 1, WRAPPERS[m.full_name], False, False, False, False, -1)
                op, _, _ = self._value_op(inner, t, node, path, depth)
                return EOP_WRAPPER, op, 1 << 3 | _WIRE.get(op, WT_LEN)
            if types.is_null(t):
                return EOP_EMPTY, 0, 0
            self._mismatch(t, f, path)
        k = f.type
        if types.is_boolean(t) and k == F.TYPE_BOOL:
            return EOP_BOOL, 0, 0
        if types.is_int32(t) and (k in _INT32_FAMILY or k == F.TYPE_ENUM):
            return (EOP_I32 if k == F.TYPE_ENUM else _INT32_FAMILY[k]), self._enum_or_zero(f), 0
        if types.is_date32(t) and k in (F.TYPE_INT32, F.TYPE_SINT32, F.TYPE_SFIXED32, F.TYPE_INT64):
            return _INT32_FAMILY[k], 0, 0
        if types.is_int64(t) and k in _INT64_FAMILY:
            return _INT64_FAMILY[k], 0, 0
        if types.is_decimal(t) and k == F.TYPE_UINT64 and t.scale == 0 and t.precision <= 20:
            return EOP_U64_OF_DEC, 0, 0
        if types.is_float32(t) and k == F.TYPE_FLOAT:
            return EOP_FIXED32, 0, 0
        if types.is_float32(t) and k == F.TYPE_DOUBLE:
            return EOP_F32_DOUBLE, 0, 0
        if types.is_float64(t) and k == F.TYPE_DOUBLE:
            return EOP_FIXED64, 0, 0
        if types.is_string(t) and k == F.TYPE_STRING:
            return EOP_BYTES, 0, 0
        if types.is_string(t) and k == F.TYPE_ENUM:
            return EOP_ENUM_NAME, self._enum_table(f.enum), 0
        if types.is_binary(t) and k == F.TYPE_BYTES:
            return EOP_BYTES, 0, 0
        if types.is_timestamp(t) and k == F.TYPE_INT64:
            return EOP_MILLIS, 0, 0
        if types.is_duration(t) and k == F.TYPE_INT64:
            return EOP_I64, 0, 0
        if types.is_null(t):
            return EOP_EMPTY, 0, 0
        self._mismatch(t, f, path)

    def _enum_or_zero(self, f: FieldInfo) -> int:
        return self._enum_table(f.enum) if f.enum is not None else 0

    # ---- running ----
    def arrays(self) -> tuple:
        """(msgs, fields, enums, consts) for the kernel."""
        if self._arrays is None:
            self._arrays = (np.array(self.msgs, dtype=np.int64).reshape(-1, MSG_WORDS),
                            np.array(self.fields or [[0] * EF_WORDS], dtype=np.int64).reshape(-1, EF_WORDS),
                            np.array(self.enums or [0], dtype=np.int64),
                            np.frombuffer(bytes(self.consts) or b"\0", dtype=np.uint8))
        return self._arrays

    def path_at(self, f: int) -> str:
        return self._paths[f] if 0 <= f < len(self._paths) else ""
