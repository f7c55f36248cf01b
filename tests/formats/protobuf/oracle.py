"""The oracle of the Protobuf tests: Google's runtime (upb) parses the payloads, and its messages are turned into
the values spark-protobuf 4.0 shows, rule by rule (each rule cites where spark-protobuf states it: its
``SchemaConverters``, ``ProtobufDeserializer.getFieldValue`` and ``ProtobufOptions``). Written from those
documented rules, not from kwire's code. Also: hypothesis strategies of AllTypes messages, and payloads whose
fields are written in shuffled order, split and merged, as protobuf allows."""

from __future__ import annotations

import datetime
import decimal
import random
from dataclasses import dataclass

from hypothesis import strategies as st

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
WRAPPERS = {"google.protobuf.BoolValue", "google.protobuf.Int32Value", "google.protobuf.UInt32Value",
            "google.protobuf.Int64Value", "google.protobuf.UInt64Value", "google.protobuf.StringValue",
            "google.protobuf.BytesValue", "google.protobuf.FloatValue", "google.protobuf.DoubleValue"}
T_UINT32, T_UINT64, T_FIXED32, T_FIXED64, T_ENUM, T_MESSAGE = 13, 4, 7, 6, 14, 11


@dataclass(frozen=True)
class Options:
    enums_as_ints: bool = False
    upcast_unsigned_ints: bool = False
    emit_default_values: bool = False
    unwrap_primitive_wrapper_types: bool = False
    retain_empty_message_types: bool = False


def repeated(fd) -> bool:
    return fd.is_repeated if hasattr(fd, "is_repeated") else fd.label == 3


def is_empty_message(descriptor) -> bool:
    # SchemaConverters: a message with no field left is dropped (Spark has no empty struct) unless
    # retain.empty.message.types
    return all(f.message_type is not None and is_empty_message(f.message_type) for f in descriptor.fields)


def _time(descriptor, name: str) -> bool:
    # SchemaConverters: a message named Timestamp / Duration whose two fields are seconds and nanos
    f = descriptor.fields
    return descriptor.name == name and len(f) == 2 and f[0].name == "seconds" and f[1].name == "nanos"


def _micros(message) -> int:
    # ProtobufDeserializer: millisToMicros(seconds * 1000) + NANOSECONDS.toMicros(nanos) (truncated toward zero)
    nanos = message.nanos
    return message.seconds * 1_000_000 + (abs(nanos) // 1000) * (1 if nanos >= 0 else -1)


def scalar(fd, value, options: Options):
    t = fd.type
    if t == T_ENUM:
        # enum -> the value's name (EnumValueDescriptor.getName; an open enum's unknown number is named
        # UNKNOWN_ENUM_VALUE_<Enum>_<n> by the Java runtime), or the number with enums.as.ints
        if options.enums_as_ints:
            return value
        known = fd.enum_type.values_by_number.get(value)
        return known.name if known is not None else f"UNKNOWN_ENUM_VALUE_{fd.enum_type.name}_{value}"
    if t == T_UINT32:
        # uint32 -> IntegerType (its 32 bits, as a Java int), LongType with upcast.unsigned.ints
        return value if options.upcast_unsigned_ints else (value - 2**32 if value >= 2**31 else value)
    if t == T_FIXED32:
        return value - 2**32 if value >= 2**31 else value  # fixed32 is JavaType INT: never upcast
    if t == T_UINT64:
        # uint64 -> LongType (bits), DecimalType(20, 0) with upcast.unsigned.ints
        return decimal.Decimal(value) if options.upcast_unsigned_ints else (value - 2**64 if value >= 2**63 else value)
    if t == T_FIXED64:
        return value - 2**64 if value >= 2**63 else value
    return value


def _zero(value) -> bool:
    return value in (0, "", b"", False) and not (isinstance(value, float) and str(value).startswith("-"))


def value_of(message, fd, options: Options):
    """What spark-protobuf shows for one field of ``message``."""
    if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
        # map -> MapType (all entries; an absent key or value is its default)
        value_fd = fd.message_type.fields_by_name["value"]
        key_fd = fd.message_type.fields_by_name["key"]
        return {scalar(key_fd, k, options): element(value_fd, v, options, in_map=True)
                for k, v in getattr(message, fd.name).items()}
    if repeated(fd):
        # repeated -> ArrayType(containsNull = false); absent -> empty array
        return [element(fd, v, options) for v in getattr(message, fd.name)]
    if fd.message_type is not None:
        # messages have presence: absent -> null
        return element(fd, getattr(message, fd.name), options) if message.HasField(fd.name) else None
    if fd.has_presence:
        # getFieldValue: present (hasField), or a proto2 explicit default (hasDefaultValue), else null
        if message.HasField(fd.name):
            return scalar(fd, getattr(message, fd.name), options)
        return scalar(fd, fd.default_value, options) if fd.has_default_value else None
    # no presence (proto3 implicit): a zero value is not on the wire and shows as null, unless
    # emit.default.values renders the type's zero value
    value = getattr(message, fd.name)
    if _zero(value) and not options.emit_default_values:
        return None
    return scalar(fd, value, options)


def element(fd, value, options: Options, in_map: bool = False):
    m = fd.message_type
    if m is None:
        return scalar(fd, value, options)
    if _time(m, "Timestamp"):
        return EPOCH + datetime.timedelta(microseconds=_micros(value))  # Timestamp -> TimestampType
    if _time(m, "Duration"):
        return datetime.timedelta(microseconds=_micros(value))  # Duration -> DayTimeIntervalType
    if options.unwrap_primitive_wrapper_types and m.full_name in WRAPPERS:
        # unwrap.primitive.wrapper.types: the wrapped value, itself a field without presence
        inner = value.DESCRIPTOR.fields_by_name["value"]
        return value_of(value, inner, options)
    return spark_value(value, options)


def spark_value(message, options: Options = Options()) -> dict:
    """spark-protobuf's row for a parsed message (fields in declaration order, empty messages dropped)."""
    out = {}
    for fd in message.DESCRIPTOR.fields:
        if fd.message_type is not None and not options.retain_empty_message_types and not \
                fd.message_type.GetOptions().map_entry and is_empty_message(fd.message_type):
            continue
        out[fd.name] = value_of(message, fd, options)
    if not out and options.retain_empty_message_types:
        # retain.empty.message.types: an empty message keeps a dummy string field (never set)
        return {"__dummy_field_in_empty_struct": None}
    return out


def normalize(row, t):
    """kwire's ``to_pylist()`` value of Arrow type ``t`` with maps as dicts (their entries are in wire order; a
    runtime's map keeps the last entry of a key, as a dict does)."""
    import pyarrow as pa

    if row is None:
        return None
    if pa.types.is_struct(t):
        return {f.name: normalize(row[f.name], f.type) for f in t}
    if pa.types.is_map(t):
        return {k: normalize(v, t.item_type) for k, v in row}
    if pa.types.is_list(t):
        return [normalize(x, t.value_type) for x in row]
    return row


# ---- payloads in any order -----------------------------------------------------------------------------------

def scrambled(message, rnd: random.Random) -> bytes:
    """An encoding of ``message`` that a protobuf parser reads as the same message: each field written on its own,
    fields interleaved in random order, repeated fields in several runs, singular messages split in two
    pieces that merge (their relative order kept where it matters)."""
    queues = []
    for fd, value in message.ListFields():
        cls = type(message)
        if repeated(fd) and not (fd.message_type is not None and fd.message_type.GetOptions().map_entry):
            items = list(value)
            runs, i = [], 0
            while i < len(items):
                k = rnd.randint(1, max(1, len(items) - i))
                part = cls()
                getattr(part, fd.name).extend(items[i:i + k])
                runs.append(part.SerializeToString())
                i += k
            queues.append(runs)
        elif fd.message_type is not None and not repeated(fd) and fd.containing_oneof is None \
                and len(value.ListFields()) > 1 and rnd.random() < 0.5:
            fields = value.ListFields()
            cut = rnd.randint(1, len(fields) - 1)
            pieces = []
            for group in (fields[:cut], fields[cut:]):
                part = cls()
                sub = getattr(part, fd.name)
                for sfd, svalue in group:
                    if repeated(sfd):
                        getattr(sub, sfd.name).extend(svalue) if sfd.message_type is None or not \
                            sfd.message_type.GetOptions().map_entry else getattr(sub, sfd.name).update(svalue)
                    elif sfd.message_type is not None:
                        getattr(sub, sfd.name).CopyFrom(svalue)
                    else:
                        setattr(sub, sfd.name, svalue)
                pieces.append(part.SerializeToString())
            queues.append(pieces)
        else:
            part = cls()
            part.MergeFrom(message)
            for other, _ in message.ListFields():
                if other.name != fd.name:
                    part.ClearField(other.name)
            queues.append([part.SerializeToString()])
    out = []
    while queues:
        q = rnd.choice(queues)
        out.append(q.pop(0))
        if not q:
            queues.remove(q)
    return b"".join(out)


# ---- hypothesis ---------------------------------------------------------------------------------------------

I32 = st.integers(-2**31, 2**31 - 1)
I64 = st.integers(-2**63, 2**63 - 1)
U32 = st.integers(0, 2**32 - 1)
U64 = st.integers(0, 2**64 - 1)
TEXT = st.text(max_size=12)
FLOAT32 = st.floats(width=32, allow_nan=False)
DOUBLE = st.floats(allow_nan=False)


def all_types(pb_all):
    """AllTypes messages with any subset of fields set, values at their types' edges included."""
    AllTypes = pb_all.AllTypes
    colors = st.sampled_from([0, 1, 2, -3, 7])  # 7: unknown to the (open) enum
    point = st.builds(lambda x, y, labels: AllTypes.Point(x=x, y=y, labels=labels), I32, I64,
                      st.lists(TEXT, max_size=3))
    seconds = st.integers(-62135596800, 253402300799)

    def build(fields):
        m = AllTypes()
        for name, value in fields.items():
            target = getattr(m, name)
            if name in ("point", "choice_point"):
                target.CopyFrom(value)
            elif name in ("points", "times"):
                target.extend(value)
            elif name in ("longs", "zigzags", "doubles", "texts", "blobs", "colors", "flags", "fixeds"):
                target.extend(value)
            elif name in ("counts", "names_by_flag", "colors_by_id"):
                target.update(value)
            elif name == "points_by_id":
                for k, v in value.items():
                    target[k].CopyFrom(v)
            elif name in ("at", "took"):
                target.seconds, target.nanos = value
            elif name.startswith("w_"):
                target.value = value
            elif name == "any":
                target.type_url, target.value = value
            else:
                setattr(m, name, value)
        return m

    one = {
        "i32": I32, "i64": I64, "u32": U32, "u64": U64, "s32": I32, "s64": I64, "f32": U32, "f64": U64,
        "sf32": I32, "sf64": I64, "fl": FLOAT32, "db": DOUBLE, "flag": st.booleans(), "text": TEXT,
        "data": st.binary(max_size=8), "color": colors, "opt_i32": I32, "opt_text": TEXT, "opt_color": colors,
        "point": point, "points": st.lists(point, max_size=3), "longs": st.lists(I64, max_size=4),
        "zigzags": st.lists(I32, max_size=4), "doubles": st.lists(DOUBLE, max_size=3),
        "texts": st.lists(TEXT, max_size=3), "blobs": st.lists(st.binary(max_size=4), max_size=3),
        "colors": st.lists(colors, max_size=3), "flags": st.lists(st.booleans(), max_size=3),
        "fixeds": st.lists(U32, max_size=3), "counts": st.dictionaries(TEXT, I64, max_size=3),
        "points_by_id": st.dictionaries(I32, point, max_size=2), "names_by_flag": st.dictionaries(st.booleans(), TEXT),
        "colors_by_id": st.dictionaries(U64, colors, max_size=2), "choice_text": TEXT, "choice_point": point,
        "choice_number": I64, "at": st.tuples(seconds, st.integers(0, 999_999_999)),
        "took": st.tuples(st.integers(-315576000000, 315576000000), st.integers(-999_999_999, 999_999_999)),
        "times": st.lists(st.builds(lambda s, n: _timestamp(pb_all, s, n), seconds, st.integers(0, 999_999_999)),
                          max_size=2),
        "w_i32": I32, "w_text": TEXT, "w_u64": U64, "any": st.tuples(TEXT, st.binary(max_size=4)),
        "big_number": U64,
    }
    return st.fixed_dictionaries({}, optional=one).map(build)


def _timestamp(pb_all, seconds, nanos):
    t = pb_all.google_dot_protobuf_dot_timestamp__pb2.Timestamp()
    t.seconds, t.nanos = seconds, nanos
    return t
