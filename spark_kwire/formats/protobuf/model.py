"""Protobuf schemas as kwire reads them: messages, fields and enums with their type names resolved and
what decoding needs made explicit (presence, packing, closed enums, defaults), from ``FileDescriptorProto``s.

The files come from the registry (base64 descriptors), from `.proto` text (``proto_parser.py``) or from the
protobuf runtime's well-known types; ``schemas.py`` gathers them. Features follow the protobuf rules: proto2
(explicit presence, closed enums, expanded repeated fields unless ``packed``), proto3 (implicit presence unless
``optional``, a message or a oneof member; open enums; packed), editions 2023/2024 (``features.*`` resolved
from the edition's defaults through file, message and field).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from google.protobuf import descriptor_pb2

from ..errors import MissingReferenceError, SchemaError

F = descriptor_pb2.FieldDescriptorProto
_INTEGER_TYPES = {F.TYPE_INT32, F.TYPE_INT64, F.TYPE_UINT32, F.TYPE_UINT64, F.TYPE_SINT32, F.TYPE_SINT64,
                  F.TYPE_FIXED32, F.TYPE_FIXED64, F.TYPE_SFIXED32, F.TYPE_SFIXED64}
TYPE_NAMES = {v: k[5:].lower() for k, v in F.Type.items()}

# resolved features (a subset of FeatureSet, by value name)
_DEFAULTS = {
    "proto2": {"field_presence": "EXPLICIT", "enum_type": "CLOSED", "repeated_field_encoding": "EXPANDED",
               "utf8_validation": "NONE", "message_encoding": "LENGTH_PREFIXED"},
    "proto3": {"field_presence": "IMPLICIT", "enum_type": "OPEN", "repeated_field_encoding": "PACKED",
               "utf8_validation": "VERIFY", "message_encoding": "LENGTH_PREFIXED"},
    "editions": {"field_presence": "EXPLICIT", "enum_type": "OPEN", "repeated_field_encoding": "PACKED",
                 "utf8_validation": "VERIFY", "message_encoding": "LENGTH_PREFIXED"},
}


def _merge_features(parent: dict, options) -> dict:
    """``parent`` overridden by the ``features`` set in ``options`` (editions files)."""
    if options is None or not options.HasField("features"):
        return parent
    out = dict(parent)
    for fd, value in options.features.ListFields():
        if fd.name in out and fd.enum_type is not None:
            out[fd.name] = fd.enum_type.values_by_number[value].name
    return out


@dataclass(eq=False)
class EnumType:
    full_name: str
    name: str
    values: list[tuple[str, int]]  # declaration order
    closed: bool

    def number_of(self, name: str) -> int | None:
        for n, v in self.values:
            if n == name:
                return v
        return None

    def name_of(self, number: int) -> str | None:
        for n, v in self.values:
            if v == number:
                return n
        return None

    @property
    def default_number(self) -> int:
        return self.values[0][1]


@dataclass(eq=False)
class FieldInfo:
    name: str
    number: int
    type: int  # FieldDescriptorProto.Type
    repeated: bool
    required: bool
    has_presence: bool  # explicit presence (false for repeated and implicit-presence fields)
    packed: bool  # how an encoder writes it (readers accept both)
    oneof: int  # index of a real oneof of the message, -1 otherwise
    type_name: str = ""
    message: "MessageType | None" = None
    enum: EnumType | None = None
    default: object = None  # an explicit [default = ...], typed; None without one
    delimited: bool = False  # group encoding (proto2 groups, editions DELIMITED): not supported
    utf8_check: bool = True

    @property
    def type_label(self) -> str:
        t = TYPE_NAMES.get(self.type, str(self.type))
        if self.message is not None:
            t = self.message.full_name
        elif self.enum is not None:
            t = f"enum {self.enum.full_name}"
        return ("repeated " if self.repeated else "") + t

    @property
    def is_map(self) -> bool:
        return self.repeated and self.message is not None and self.message.map_entry


@dataclass(eq=False)
class MessageType:
    full_name: str
    name: str
    fields: list[FieldInfo] = field(default_factory=list)
    nested: list["MessageType"] = field(default_factory=list)  # nested_type order (message indexes count these)
    map_entry: bool = False
    oneofs: list[str] = field(default_factory=list)

    def field_by_number(self, number: int) -> FieldInfo | None:
        for f in self.fields:
            if f.number == number:
                return f
        return None


class ProtoSchema:
    """A Protobuf schema: its main file's messages (``top``, in file order, for message indexes) and every
    type of the main file and of the files it imports (``types``: full name -> MessageType / EnumType)."""

    def __init__(self, main: descriptor_pb2.FileDescriptorProto,
                 files: dict[str, descriptor_pb2.FileDescriptorProto]) -> None:
        self.main = main
        self.files = files
        self.types: dict[str, MessageType | EnumType] = {}
        self._pending: list[tuple[FieldInfo, F, str, str]] = []
        for f in self._closure():
            self._declare_file(f)
        for info, proto, scope, where in self._pending:
            self._resolve(info, proto, scope, where)
        del self._pending
        package = f"{main.package}." if main.package else ""
        self.top: list[MessageType] = [self.types[package + m.name] for m in main.message_type]

    @property
    def package(self) -> str:
        return self.main.package

    def _closure(self) -> list[descriptor_pb2.FileDescriptorProto]:
        order: list = []
        seen: set[str] = set()

        def visit(f, chain):
            if f.name in seen:
                return
            seen.add(f.name)
            for dep in f.dependency:
                target = self.files.get(dep)
                if target is None:
                    raise MissingReferenceError(f"{f.name or 'the schema'} imports {dep!r}, which was not given: "
                                                f"pass it among the references (import path -> schema)")
                if dep in chain:
                    raise SchemaError(f"imports form a cycle: {' -> '.join(chain + [dep])}")
                visit(target, chain + [dep])
            order.append(f)

        visit(self.main, [self.main.name])
        return order

    # ---- declaration ----
    def _declare_file(self, f: descriptor_pb2.FileDescriptorProto) -> None:
        syntax = f.syntax or "proto2"
        if syntax not in _DEFAULTS:
            raise SchemaError(f"{f.name}: unknown syntax {syntax!r} (accepted: proto2, proto3, editions)")
        features = _merge_features(_DEFAULTS[syntax], f.options)
        prefix = f"{f.package}." if f.package else ""
        for e in f.enum_type:
            self._declare_enum(e, prefix, syntax, features)
        for m in f.message_type:
            self._declare_message(m, prefix, syntax, features, f.name)

    def _add(self, full_name: str, value) -> None:
        if full_name in self.types:
            raise SchemaError(f"{full_name} is defined twice")
        self.types[full_name] = value

    def _declare_enum(self, e, prefix: str, syntax: str, features: dict) -> EnumType:
        if not e.value:
            raise SchemaError(f"enum {prefix}{e.name} has no values")
        features = _merge_features(features, e.options)
        enum = EnumType(prefix + e.name, e.name, [(v.name, v.number) for v in e.value],
                        closed=features["enum_type"] == "CLOSED")
        if syntax == "proto3" and enum.values[0][1] != 0:
            raise SchemaError(f"the first value of proto3 enum {enum.full_name} must be 0")
        self._add(enum.full_name, enum)
        return enum

    def _declare_message(self, m, prefix: str, syntax: str, features: dict, file_name: str) -> MessageType:
        full = prefix + m.name
        features = _merge_features(features, m.options)
        msg = MessageType(full, m.name, map_entry=m.options.map_entry)
        self._add(full, msg)
        for e in m.enum_type:
            self._declare_enum(e, full + ".", syntax, features)
        for nested in m.nested_type:
            msg.nested.append(self._declare_message(nested, full + ".", syntax, features, file_name))
        real_oneofs = [i for i, _ in enumerate(m.oneof_decl)
                       if not all(fp.proto3_optional for fp in m.field if fp.HasField("oneof_index")
                                  and fp.oneof_index == i)]
        msg.oneofs = [m.oneof_decl[i].name for i in real_oneofs]
        numbers: dict[int, str] = {}
        for fp in m.field:
            where = f"{full}.{fp.name}"
            if fp.number in numbers:
                raise SchemaError(f"{full}: fields {numbers[fp.number]} and {fp.name} have the same number {fp.number}")
            numbers[fp.number] = fp.name
            ff = _merge_features(features, fp.options)
            repeated = fp.label == F.LABEL_REPEATED
            required = fp.label == F.LABEL_REQUIRED or ff["field_presence"] == "LEGACY_REQUIRED"
            in_oneof = fp.HasField("oneof_index")
            oneof = real_oneofs.index(fp.oneof_index) if in_oneof and fp.oneof_index in real_oneofs else -1
            if syntax == "proto2":
                packed = fp.options.packed
            elif syntax == "proto3":
                packed = not (fp.options.HasField("packed") and not fp.options.packed)
            else:
                packed = ff["repeated_field_encoding"] == "PACKED"
            info = FieldInfo(fp.name, fp.number, fp.type, repeated, required,
                             has_presence=not repeated and (required or in_oneof or fp.proto3_optional
                                                            or ff["field_presence"] != "IMPLICIT"),
                             packed=repeated and packed, oneof=oneof, type_name=fp.type_name,
                             delimited=fp.type == F.TYPE_GROUP or ff["message_encoding"] == "DELIMITED",
                             utf8_check=ff["utf8_validation"] == "VERIFY")
            msg.fields.append(info)
            self._pending.append((info, fp, full, where))
        return msg

    # ---- resolution ----
    def lookup(self, name: str, scope: str) -> MessageType | EnumType | None:
        """A type by the name a field uses in ``scope`` (a message's or package's full name), with protobuf's
        scoping: ``.a.B`` is absolute; otherwise the innermost enclosing scope where the name's first part is
        defined."""
        if name.startswith("."):
            return self.types.get(name[1:])
        first = name.split(".", 1)[0]
        parts = scope.split(".") if scope else []
        while True:
            prefix = ".".join(parts)
            candidate = f"{prefix}.{first}" if prefix else first
            if candidate in self.types or any(k.startswith(candidate + ".") for k in self.types):
                full = f"{prefix}.{name}" if prefix else name
                found = self.types.get(full)
                if found is not None:
                    return found
            if not parts:
                return None
            parts.pop()

    def _resolve(self, info: FieldInfo, fp, scope: str, where: str) -> None:
        if fp.type_name:
            target = self.lookup(fp.type_name, scope)
            if target is None:
                raise SchemaError(f"field {where} has type {fp.type_name}, which is not defined (nor imported)")
            if isinstance(target, MessageType):
                if fp.HasField("type") and fp.type not in (F.TYPE_MESSAGE, F.TYPE_GROUP):
                    raise SchemaError(f"field {where}: {fp.type_name} is a message, not a {TYPE_NAMES[fp.type]}")
                info.message = target
                info.type = F.TYPE_GROUP if fp.type == F.TYPE_GROUP else F.TYPE_MESSAGE
                info.has_presence = not info.repeated
            else:
                info.enum = target
                info.type = F.TYPE_ENUM
        elif info.type in (F.TYPE_MESSAGE, F.TYPE_ENUM, F.TYPE_GROUP, 0):
            raise SchemaError(f"field {where} has no type")
        if info.message is not None or info.type in (F.TYPE_STRING, F.TYPE_BYTES):
            info.packed = False  # only scalar numbers and enums pack
        if fp.HasField("default_value"):
            if info.repeated or info.message is not None:
                raise SchemaError(f"field {where}: repeated and message fields cannot have a default")
            info.default = _typed_default(info, fp.default_value, where)


def _typed_default(info: FieldInfo, text: str, where: str):
    t = info.type
    try:
        if t in _INTEGER_TYPES:
            return int(text, 0) if text.lower().startswith(("0x", "-0x")) else int(text)
        if t in (F.TYPE_FLOAT, F.TYPE_DOUBLE):
            return float({"inf": "inf", "-inf": "-inf", "nan": "nan"}.get(text, text))
        if t == F.TYPE_BOOL:
            if text not in ("true", "false"):
                raise ValueError(text)
            return text == "true"
        if t == F.TYPE_STRING:
            return text
        if t == F.TYPE_BYTES:
            return _c_unescape(text)
        if t == F.TYPE_ENUM:
            number = info.enum.number_of(text)
            if number is None:
                raise ValueError(f"{text} is not a value of {info.enum.full_name}")
            return number
    except ValueError as exc:
        raise SchemaError(f"field {where}: bad default value {text!r} ({exc})") from None
    raise SchemaError(f"field {where}: a default for type {TYPE_NAMES.get(t, t)}")


def _c_unescape(text: str) -> bytes:
    out = bytearray()
    i = 0
    simple = {"n": 10, "r": 13, "t": 9, "\\": 92, "'": 39, '"': 34, "a": 7, "b": 8, "f": 12, "v": 11, "?": 63}
    while i < len(text):
        c = text[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        e = text[i + 1] if i + 1 < len(text) else ""
        if e in simple:
            out.append(simple[e])
            i += 2
        elif e in "01234567" and e:
            j = i + 1
            while j < len(text) and j < i + 4 and text[j] in "01234567":
                j += 1
            out.append(int(text[i + 1:j], 8) & 0xFF)
            i = j
        elif e in "xX" and e:
            j = i + 2
            while j < len(text) and j < i + 4 and text[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(text[i + 2:j], 16))
            i = j
        else:
            raise ValueError(f"bad escape in {text!r}")
    return bytes(out)
