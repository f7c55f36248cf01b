"""Protobuf messages as spark-protobuf 4.0 (``SchemaConverters``) maps them to Spark, expressed as Arrow types
that Spark's Arrow conversion turns into those Spark types, with the options of ``ProtobufOptions``.

Protobuf -> Spark (-> Arrow):
  int32, sint32, sfixed32, fixed32 -> int; uint32 -> int (bits kept: values past 2^31 - 1 show negative), or
  bigint with ``upcast.unsigned.ints``; int64, sint64, sfixed64, fixed64 -> bigint; uint64 -> bigint (bits kept),
  or decimal(20,0) with ``upcast.unsigned.ints``; float; double; bool -> boolean; string; bytes -> binary;
  enum -> string (the value's name), int with ``enums.as.ints``; message -> struct; repeated T -> array<T>
  (elements not null); map<K, V> -> map<K, V> (values not null); a message named ``Timestamp`` with fields
  seconds, nanos (google.protobuf.Timestamp) -> timestamp (UTC, Arrow timestamp[us, UTC]); one named
  ``Duration`` likewise -> interval day to second (Arrow duration[us]); the wrappers (google.protobuf.Int32Value,
  ...) -> struct<value: T>, or T with ``unwrap.primitive.wrapper.types``; google.protobuf.Any ->
  struct<type_url: string, value: binary>.
Nullability: a repeated or map field is nullable (never null: absent is empty), a ``required`` field is not,
every other field is. A message with no field left is dropped from its parent (Spark has no empty struct)
unless ``retain.empty.message.types``, which gives it one string field ``__dummy_field_in_empty_struct``.
Recursive messages are refused unless ``recursive.fields.max.depth`` (1..10) says how deep to unroll them: a
message type met that many times on a path is dropped there.
Not supported (a clear error): ``convert.any.fields.to.json``, proto2 groups (and editions DELIMITED fields).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields

import pyarrow as pa

from ..errors import SchemaError
from .model import F, FieldInfo, MessageType

TIMESTAMP = pa.timestamp("us", tz="UTC")
DURATION = pa.duration("us")
UINT64_DECIMAL = pa.decimal128(20, 0)
DUMMY_FIELD = "__dummy_field_in_empty_struct"
WRAPPERS = {
    "google.protobuf.BoolValue": F.TYPE_BOOL, "google.protobuf.Int32Value": F.TYPE_INT32,
    "google.protobuf.UInt32Value": F.TYPE_UINT32, "google.protobuf.Int64Value": F.TYPE_INT64,
    "google.protobuf.UInt64Value": F.TYPE_UINT64, "google.protobuf.StringValue": F.TYPE_STRING,
    "google.protobuf.BytesValue": F.TYPE_BYTES, "google.protobuf.FloatValue": F.TYPE_FLOAT,
    "google.protobuf.DoubleValue": F.TYPE_DOUBLE,
}


@dataclass(frozen=True)
class ProtobufOptions:
    """spark-protobuf's options (``from_protobuf(..., options)``), same names with dots as keys of
    :meth:`from_mapping`; defaults as in Spark 4.0."""

    enums_as_ints: bool = False  # enums.as.ints
    upcast_unsigned_ints: bool = False  # upcast.unsigned.ints
    emit_default_values: bool = False  # emit.default.values
    unwrap_primitive_wrapper_types: bool = False  # unwrap.primitive.wrapper.types
    retain_empty_message_types: bool = False  # retain.empty.message.types
    recursive_fields_max_depth: int = -1  # recursive.fields.max.depth
    convert_any_fields_to_json: bool = False  # convert.any.fields.to.json: refused

    @staticmethod
    def option_names() -> list[str]:
        return [f.name.replace("_", ".") for f in fields(ProtobufOptions)]

    @classmethod
    def from_mapping(cls, options: Mapping[str, object] | None) -> "ProtobufOptions":
        """Options by spark-protobuf's names (case-insensitive; values as strings or Python values). An unknown
        name or a value that is not a boolean / integer is a ``ValueError`` saying what is accepted."""
        if not options:
            return cls()
        known = {f.name.replace("_", "."): f for f in fields(cls)}
        values = {}
        for key, raw in options.items():
            f = known.get(str(key).lower())
            if f is None:
                raise ValueError(f"unknown Protobuf option {key!r}; accepted: {', '.join(sorted(known))}")
            if f.type == "int" or f.type is int:
                try:
                    values[f.name] = int(raw)
                except (TypeError, ValueError):
                    raise ValueError(f"Protobuf option {key} must be an integer, not {raw!r}") from None
            else:
                text = str(raw).strip().lower()
                if text not in ("true", "false"):
                    raise ValueError(f"Protobuf option {key} must be true or false, not {raw!r}")
                values[f.name] = text == "true"
        return cls(**values)


@dataclass(eq=False)
class FieldPlan:
    """A reader field kept in the Spark type: ``kind`` is scalar, message, map, timestamp, duration or wrapper."""

    info: FieldInfo
    kind: str
    arrow: pa.Field
    message: "MessagePlan | None" = None  # message fields, and a map's entry
    inner: int = 0  # wrappers: the wrapped scalar's type


@dataclass(eq=False)
class MessagePlan:
    message: MessageType
    fields: list[FieldPlan] = field(default_factory=list)
    dummy: bool = False  # retained empty message: one always-null string field
    arrow_type: pa.DataType = None


def scalar_arrow_type(t: int, options: ProtobufOptions) -> pa.DataType:
    if t in (F.TYPE_INT32, F.TYPE_SINT32, F.TYPE_SFIXED32, F.TYPE_FIXED32):
        return pa.int32()
    if t == F.TYPE_UINT32:
        return pa.int64() if options.upcast_unsigned_ints else pa.int32()
    if t in (F.TYPE_INT64, F.TYPE_SINT64, F.TYPE_SFIXED64, F.TYPE_FIXED64):
        return pa.int64()
    if t == F.TYPE_UINT64:
        return UINT64_DECIMAL if options.upcast_unsigned_ints else pa.int64()
    if t == F.TYPE_FLOAT:
        return pa.float32()
    if t == F.TYPE_DOUBLE:
        return pa.float64()
    if t == F.TYPE_BOOL:
        return pa.bool_()
    if t == F.TYPE_STRING:
        return pa.string()
    if t == F.TYPE_BYTES:
        return pa.binary()
    if t == F.TYPE_ENUM:
        return pa.int32() if options.enums_as_ints else pa.string()
    raise SchemaError(f"no Spark type for Protobuf type {t}")  # pragma: no cover


def is_time_message(message: MessageType, name: str) -> bool:
    """spark-protobuf's test for Timestamp and Duration: the message's short name, and two fields named seconds
    and nanos (in that order)."""
    fs = message.fields
    return message.name == name and len(fs) == 2 and fs[0].name == "seconds" and fs[1].name == "nanos"


class _Converter:
    def __init__(self, options: ProtobufOptions) -> None:
        self.options = options
        if options.convert_any_fields_to_json:
            raise SchemaError("convert.any.fields.to.json is not supported by kwire: google.protobuf.Any fields "
                              "read as struct<type_url: string, value: binary>")
        depth = options.recursive_fields_max_depth
        self.max_depth = depth

    def message(self, message: MessageType, seen: dict[str, int], path: str) -> MessagePlan | None:
        """The plan of ``message`` reached with ``seen`` (full name -> times met on the path); None when
        it has no field left (dropped)."""
        plan = MessagePlan(message)
        for f in message.fields:
            kept = self.field(f, seen, f"{path}.{f.name}" if path else f.name)
            if kept is not None:
                plan.fields.append(kept)
        if not plan.fields:
            if not self.options.retain_empty_message_types:
                plan.arrow_type = pa.struct([])
                return None
            plan.dummy = True
            plan.arrow_type = pa.struct([pa.field(DUMMY_FIELD, pa.string())])
            return plan
        plan.arrow_type = pa.struct([fp.arrow for fp in plan.fields])
        return plan

    def field(self, f: FieldInfo, seen: dict[str, int], path: str) -> FieldPlan | None:
        if f.delimited:
            raise SchemaError("proto2 groups (and editions DELIMITED message encoding) are not supported", path)
        plan = self.value(f, seen, path)
        if plan is None:
            return None
        t = plan.arrow.type
        if plan.kind == "map":
            plan.arrow = pa.field(f.name, t, nullable=True)
        elif f.repeated:
            plan.arrow = pa.field(f.name, pa.list_(pa.field("element", t, nullable=False)), nullable=True)
        else:
            plan.arrow = pa.field(f.name, t, nullable=not f.required)
        return plan

    def value(self, f: FieldInfo, seen: dict[str, int], path: str) -> FieldPlan | None:
        """The field's element type (before repeated/nullability), or None when it is dropped."""
        m = f.message
        if m is None:
            return FieldPlan(f, "scalar", pa.field(f.name, scalar_arrow_type(f.type, self.options)))
        if is_time_message(m, "Duration") or is_time_message(m, "Timestamp"):
            kind = "duration" if m.name == "Duration" else "timestamp"
            seconds, nanos = m.fields
            if seconds.type != F.TYPE_INT64 or seconds.repeated or nanos.type != F.TYPE_INT32 or nanos.repeated:
                raise SchemaError(f"message {m.full_name} is read as a {kind} (spark-protobuf's rule: its name and "
                                  f"fields seconds, nanos), but its fields are {seconds.type_label} and "
                                  f"{nanos.type_label}, not int64 and int32", path)
            return FieldPlan(f, kind, pa.field(f.name, DURATION if kind == "duration" else TIMESTAMP))
        if self.options.unwrap_primitive_wrapper_types and m.full_name in WRAPPERS:
            inner = WRAPPERS[m.full_name]
            return FieldPlan(f, "wrapper", pa.field(f.name, scalar_arrow_type(inner, self.options)), inner=inner)
        if f.is_map:
            key, value = m.field_by_number(1), m.field_by_number(2)
            if key is None or value is None:
                raise SchemaError(f"map entry {m.full_name} lacks its key or value field", path)
            key_plan = self.value(key, seen, f"{path}{{key}}")
            value_plan = self.value(value, seen, f"{path}{{}}")
            if key_plan is None or value_plan is None:
                return None
            key_plan.arrow = pa.field("key", key_plan.arrow.type, nullable=False)
            value_plan.arrow = pa.field("value", value_plan.arrow.type, nullable=False)
            entry = MessagePlan(m, [key_plan, value_plan])
            entry.arrow_type = pa.struct([key_plan.arrow, value_plan.arrow])
            t = pa.map_(key_plan.arrow, value_plan.arrow)
            return FieldPlan(f, "map", pa.field(f.name, t), message=entry)
        times = seen.get(m.full_name, 0)
        if times:
            if not 1 <= self.max_depth <= 10:
                raise SchemaError(f"recursive message {m.full_name}: set recursive.fields.max.depth (1 to 10) to "
                                  f"read it unrolled that deep, as spark-protobuf does", path)
            if times >= self.max_depth:
                return None
        sub = self.message(m, {**seen, m.full_name: times + 1}, path)
        if sub is None:
            return None
        return FieldPlan(f, "message", pa.field(f.name, sub.arrow_type), message=sub)


def message_plan(message: MessageType, options: ProtobufOptions | None = None) -> MessagePlan:
    """The plan of the reader message: what each kept field becomes, and the Arrow struct type of the whole."""
    options = options or ProtobufOptions()
    converter = _Converter(options)
    plan = converter.message(message, {message.full_name: 1}, "")
    if plan is None:  # an empty top-level message is an empty struct (Spark keeps it at the top)
        plan = MessagePlan(message, arrow_type=pa.struct([]))
    return plan


def arrow_type(message: MessageType, options: ProtobufOptions | None = None) -> pa.DataType:
    """The Arrow struct type spark-protobuf gives ``message`` (with ``options``)."""
    return message_plan(message, options).arrow_type
