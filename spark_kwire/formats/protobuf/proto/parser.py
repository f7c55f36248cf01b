"""`.proto` text (proto2, proto3, editions 2023/2024) read into Google's ``FileDescriptorProto``, the form a
registry also serves (``format=serialized``), so both reach the same model (``model.py``).

Read: syntax/edition, package, imports, file/message/field/enum options that change decoding (``features.*``,
``packed``, ``default``, ``json_name``; others are skipped, custom options included), messages with nested
messages and enums, fields with labels, ``map<K, V>`` (a nested ``XxxEntry`` message, placed where protoc
places it), ``oneof``, proto3 ``optional`` (a synthetic oneof), reserved and extension ranges. Services and
``extend`` blocks are skipped. Refused with a :class:`SchemaError` naming the line: proto2 groups, and any
text that is not valid .proto. Type names are kept as written; ``model.py`` resolves them.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2

from .lexer import END, FLOAT, IDENT, INT, STRING, SYMBOL, Token, proto_error, tokenize  # noqa: F401

F = descriptor_pb2.FieldDescriptorProto
SCALAR_TYPES = {
    "double": F.TYPE_DOUBLE, "float": F.TYPE_FLOAT, "int64": F.TYPE_INT64, "uint64": F.TYPE_UINT64,
    "int32": F.TYPE_INT32, "fixed64": F.TYPE_FIXED64, "fixed32": F.TYPE_FIXED32, "bool": F.TYPE_BOOL,
    "string": F.TYPE_STRING, "bytes": F.TYPE_BYTES, "uint32": F.TYPE_UINT32, "sfixed32": F.TYPE_SFIXED32,
    "sfixed64": F.TYPE_SFIXED64, "sint32": F.TYPE_SINT32, "sint64": F.TYPE_SINT64,
}
_MAP_KEY_TYPES = set(SCALAR_TYPES) - {"double", "float", "bytes"}
_LABELS = {"optional": F.LABEL_OPTIONAL, "required": F.LABEL_REQUIRED, "repeated": F.LABEL_REPEATED}
_EDITIONS = {"2023": "EDITION_2023", "2024": "EDITION_2024"}
MAX_FIELD_NUMBER = 536_870_911


def map_entry_name(field_name: str) -> str:
    """protoc's name of the entry message of a map field: CamelCase of the field name, then ``Entry``."""
    out, upper = [], True
    for ch in field_name:
        if ch == "_":
            upper = True
        elif upper:
            out.append(ch.upper() if "a" <= ch <= "z" else ch)
            upper = False
        else:
            out.append(ch)
    return "".join(out) + "Entry"


def parse_proto(text: str, name: str = "schema.proto") -> descriptor_pb2.FileDescriptorProto:
    """The ``FileDescriptorProto`` of ``.proto`` text (named ``name``)."""
    return _Parser(text, name).file()


class _Parser:
    def __init__(self, text: str, name: str) -> None:
        self.tokens = tokenize(text)
        self.i = 0
        self.proto = descriptor_pb2.FileDescriptorProto(name=name)
        self.syntax = "proto2"

    # ---- tokens ----
    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def next(self) -> Token:
        t = self.tokens[self.i]
        if t.kind != END:
            self.i += 1
        return t

    def at(self, text: str) -> bool:
        t = self.tok
        return t.kind in (SYMBOL, IDENT) and t.text == text

    def accept(self, text: str) -> bool:
        if self.at(text):
            self.next()
            return True
        return False

    def expect(self, text: str) -> Token:
        if not self.at(text):
            raise proto_error(f"expected {text!r}, found {self._shown()}", self.tok)
        return self.next()

    def _shown(self) -> str:
        t = self.tok
        return "the end of the text" if t.kind == END else repr(t.text)

    def ident(self, what: str = "a name") -> str:
        t = self.tok
        if t.kind != IDENT:
            raise proto_error(f"expected {what}, found {self._shown()}", t)
        return self.next().text

    def full_ident(self) -> str:
        parts = [self.ident()]
        while self.accept("."):
            parts.append(self.ident())
        return ".".join(parts)

    def type_name(self) -> str:
        lead = "." if self.accept(".") else ""
        return lead + self.full_ident()

    def integer(self, what: str) -> int:
        negative = self.accept("-")
        t = self.tok
        if t.kind != INT:
            raise proto_error(f"expected {what} (an integer), found {self._shown()}", t)
        self.next()
        return -t.value if negative else t.value

    def string(self) -> bytes:
        t = self.tok
        if t.kind != STRING:
            raise proto_error(f"expected a string, found {self._shown()}", t)
        out = b""
        while self.tok.kind == STRING:
            out += self.next().value
        return out

    def skip_block(self) -> None:
        """Skips a ``{ ... }`` block (services, extend blocks, aggregate option values)."""
        start = self.expect("{")
        depth = 1
        while depth:
            t = self.next()
            if t.kind == END:
                raise proto_error("unterminated { block", start)
            if t.kind == SYMBOL and t.text == "{":
                depth += 1
            elif t.kind == SYMBOL and t.text == "}":
                depth -= 1

    # ---- file ----
    def file(self) -> descriptor_pb2.FileDescriptorProto:
        if self.at("syntax"):
            self.next()
            self.expect("=")
            at = self.tok
            value = self.string().decode("utf-8", "replace")
            if value not in ("proto2", "proto3"):
                raise proto_error(f"unknown syntax {value!r} (accepted: proto2, proto3)", at)
            self.expect(";")
            self.syntax = value
            if value == "proto3":
                self.proto.syntax = "proto3"
        elif self.at("edition"):
            self.next()
            self.expect("=")
            at = self.tok
            value = self.string().decode("utf-8", "replace")
            if value not in _EDITIONS:
                raise proto_error(f"edition {value!r} is not supported (supported: {', '.join(_EDITIONS)})", at)
            self.expect(";")
            self.syntax = "editions"
            self.proto.syntax = "editions"
            self.proto.edition = descriptor_pb2.Edition.Value(_EDITIONS[value])
        while self.tok.kind != END:
            if self.accept(";"):
                continue
            word = self.tok
            if self.accept("package"):
                self.proto.package = self.full_ident()
                self.expect(";")
            elif self.accept("import"):
                kind = self.next().text if self.at("public") or self.at("weak") else ""
                path = self.string().decode("utf-8")
                self.expect(";")
                if kind == "public":
                    self.proto.public_dependency.append(len(self.proto.dependency))
                elif kind == "weak":
                    self.proto.weak_dependency.append(len(self.proto.dependency))
                self.proto.dependency.append(path)
            elif self.accept("option"):
                self.option_statement(self.proto.options)
            elif self.accept("message"):
                self.message(self.proto.message_type.add())
            elif self.accept("enum"):
                self.enum(self.proto.enum_type.add())
            elif self.accept("service") or self.accept("extend"):
                self.type_name()
                self.skip_block()
            else:
                raise proto_error(f"unexpected {self._shown()} at the top level of the file", word)
        return self.proto

    # ---- options ----
    def option_name(self) -> list[str]:
        """The parts of an option name; a custom option's parenthesised name is one part starting with '('."""
        parts = []
        while True:
            if self.accept("("):
                parts.append("(" + self.type_name() + ")")
                self.expect(")")
            else:
                parts.append(self.ident("an option name"))
            if not self.accept("."):
                return parts

    def constant(self):
        """An option value: bool, identifier (enum value name), number, string; aggregates are skipped (None)."""
        t = self.tok
        if self.at("{"):
            self.skip_block()
            return None
        sign = -1 if self.accept("-") else (1 if self.accept("+") else 0)
        t = self.tok
        if t.kind in (INT, FLOAT):
            self.next()
            return t.value if sign >= 0 else -t.value
        if t.kind == IDENT:
            self.next()
            if t.text in ("inf", "infinity"):
                return float("-inf") if sign < 0 else float("inf")
            if t.text == "nan":
                return float("nan")
            if sign:
                raise proto_error(f"a sign before {t.text!r}", t)
            return {"true": True, "false": False}.get(t.text, t.text)
        if t.kind == STRING and not sign:
            return self.string()
        raise proto_error(f"expected an option value, found {self._shown()}", t)

    def option_statement(self, options) -> None:
        at = self.tok
        name = self.option_name()
        self.expect("=")
        value = self.constant()
        self.expect(";")
        self.set_option(options, name, value, at)

    def set_option(self, options, name: list[str], value, at: Token) -> None:
        if name[0].startswith("("):
            return  # custom options change nothing kwire reads
        if name[0] == "features" and len(name) == 2:
            features = options.features
            field = features.DESCRIPTOR.fields_by_name.get(name[1])
            if field is None or field.enum_type is None or not isinstance(value, str):
                raise proto_error(f"unknown feature {'.'.join(name)} = {value!r}", at)
            number = field.enum_type.values_by_name.get(value)
            if number is None:
                raise proto_error(f"unknown value {value!r} of feature {name[1]}", at)
            setattr(features, name[1], number.number)
            return
        if len(name) == 1 and name[0] in options.DESCRIPTOR.fields_by_name and name[0] in ("packed", "allow_alias"):
            if not isinstance(value, bool):
                raise proto_error(f"option {name[0]} must be true or false", at)
            setattr(options, name[0], value)

    # ---- messages ----
    def message(self, msg: descriptor_pb2.DescriptorProto) -> None:
        msg.name = self.ident("a message name")
        self.expect("{")
        self.message_body(msg)
        self.synthetic_oneofs(msg)

    def message_body(self, msg: descriptor_pb2.DescriptorProto) -> None:
        while not self.accept("}"):
            t = self.tok
            if t.kind == END:
                raise proto_error(f"message {msg.name} is not closed with '}}'", t)
            if self.accept(";"):
                continue
            if self.accept("option"):
                self.option_statement(msg.options)
            elif self.accept("message"):
                self.message(msg.nested_type.add())
            elif self.accept("enum"):
                self.enum(msg.enum_type.add())
            elif self.accept("oneof"):
                self.oneof(msg)
            elif self.accept("reserved"):
                self.reserved(msg.reserved_range, msg.reserved_name, exclusive_end=True)
            elif self.accept("extensions"):
                self.ranges(msg.extension_range, exclusive_end=True)
                if self.at("["):
                    self.field_options(None, None)
                self.expect(";")
            elif self.accept("extend"):
                self.type_name()
                self.skip_block()
            elif self.at("map") and self.tokens[self.i + 1].text == "<":
                self.map_field(msg)
            else:
                self.field(msg, in_oneof=None)

    def synthetic_oneofs(self, msg: descriptor_pb2.DescriptorProto) -> None:
        names = {o.name for o in msg.oneof_decl} | {f.name for f in msg.field}
        for f in msg.field:
            if f.proto3_optional:
                name = "_" + f.name
                while name in names:
                    name = "X" + name
                names.add(name)
                f.oneof_index = len(msg.oneof_decl)
                msg.oneof_decl.add(name=name)

    def field(self, msg: descriptor_pb2.DescriptorProto, in_oneof: int | None) -> None:
        start = self.tok
        label = None
        if in_oneof is None and start.kind == IDENT and start.text in _LABELS:
            label = self.next().text
        if self.at("group"):
            raise proto_error("proto2 groups are not supported (use a nested message)", self.tok)
        f = msg.field.add()
        type_token = self.tok
        type_text = self.type_name()
        f.name = self.ident("a field name")
        if self.at("{"):
            raise proto_error("proto2 groups are not supported (use a nested message)", self.tok)
        self.expect("=")
        f.number = self.field_number()
        if type_text in SCALAR_TYPES:
            f.type = SCALAR_TYPES[type_text]
        else:
            f.type_name = type_text
        if label == "repeated":
            f.label = F.LABEL_REPEATED
        elif label == "required":
            if self.syntax != "proto2":
                raise proto_error(f"required fields are not allowed in {self.syntax} files", start)
            f.label = F.LABEL_REQUIRED
        else:
            f.label = F.LABEL_OPTIONAL
            if label == "optional" and self.syntax == "proto3":
                f.proto3_optional = True
            elif label is None and in_oneof is None and self.syntax == "proto2":
                raise proto_error(f"field {f.name} needs a label (optional, required or repeated) in proto2",
                                  type_token)
            elif label == "optional" and self.syntax == "editions":
                raise proto_error("editions files have no 'optional' label (use features.field_presence)", start)
        if in_oneof is not None:
            f.oneof_index = in_oneof
        if self.at("["):
            self.field_options(f, f.options)
        self.expect(";")

    def field_number(self) -> int:
        at = self.tok
        number = self.integer("a field number")
        if not 1 <= number <= MAX_FIELD_NUMBER or 19000 <= number <= 19999:
            raise proto_error(f"field number {number} is out of the allowed range (1..{MAX_FIELD_NUMBER}, "
                              f"without 19000..19999)", at)
        return number

    def field_options(self, f, options) -> None:
        self.expect("[")
        while True:
            at = self.tok
            name = self.option_name()
            self.expect("=")
            value = self.constant()
            if f is not None and name == ["default"]:
                f.default_value = _default_text(value, at, f.type)
            elif f is not None and name == ["json_name"]:
                if not isinstance(value, bytes):
                    raise proto_error("json_name must be a string", at)
                f.json_name = value.decode("utf-8")
            elif options is not None:
                self.set_option(options, name, value, at)
            if not self.accept(","):
                break
        self.expect("]")

    def map_field(self, msg: descriptor_pb2.DescriptorProto) -> None:
        self.expect("map")
        self.expect("<")
        key_at = self.tok
        key = self.type_name()
        if key not in _MAP_KEY_TYPES:
            raise proto_error(f"map keys must be integers, bool or string, not {key}", key_at)
        self.expect(",")
        value = self.type_name()
        self.expect(">")
        f = msg.field.add()
        f.name = self.ident("a field name")
        self.expect("=")
        f.number = self.field_number()
        f.label = F.LABEL_REPEATED
        f.type = F.TYPE_MESSAGE
        entry_name = map_entry_name(f.name)
        f.type_name = entry_name
        entry = msg.nested_type.add(name=entry_name)
        entry.options.map_entry = True
        entry.field.add(name="key", number=1, label=F.LABEL_OPTIONAL, type=SCALAR_TYPES[key])
        v = entry.field.add(name="value", number=2, label=F.LABEL_OPTIONAL)
        if value in SCALAR_TYPES:
            v.type = SCALAR_TYPES[value]
        else:
            v.type_name = value
        if self.at("["):
            self.field_options(None, f.options)
        self.expect(";")

    def oneof(self, msg: descriptor_pb2.DescriptorProto) -> None:
        index = len(msg.oneof_decl)
        decl = msg.oneof_decl.add(name=self.ident("a oneof name"))
        self.expect("{")
        while not self.accept("}"):
            if self.tok.kind == END:
                raise proto_error(f"oneof {decl.name} is not closed with '}}'", self.tok)
            if self.accept(";"):
                continue
            if self.accept("option"):
                self.option_statement(decl.options)
                continue
            if self.at("map") and self.tokens[self.i + 1].text == "<":
                raise proto_error("map fields cannot be in a oneof", self.tok)
            if self.tok.kind == IDENT and self.tok.text in _LABELS:
                raise proto_error(f"fields in a oneof take no label ({self.tok.text})", self.tok)
            self.field(msg, in_oneof=index)

    def ranges(self, target, exclusive_end: bool) -> None:
        while True:
            start = self.integer("a range start")
            end = start
            if self.accept("to"):
                end = MAX_FIELD_NUMBER if self.accept("max") else self.integer("a range end")
            target.add(start=start, end=end + 1 if exclusive_end else end)
            if not self.accept(","):
                return

    def reserved(self, ranges, names, exclusive_end: bool) -> None:
        if self.tok.kind == STRING or self.tok.kind == IDENT:
            while True:
                names.append(self.string().decode("utf-8") if self.tok.kind == STRING else self.ident())
                if not self.accept(","):
                    break
        else:
            self.ranges(ranges, exclusive_end)
        self.expect(";")

    # ---- enums ----
    def enum(self, enum: descriptor_pb2.EnumDescriptorProto) -> None:
        enum.name = self.ident("an enum name")
        self.expect("{")
        while not self.accept("}"):
            t = self.tok
            if t.kind == END:
                raise proto_error(f"enum {enum.name} is not closed with '}}'", t)
            if self.accept(";"):
                continue
            if self.accept("option"):
                self.option_statement(enum.options)
            elif self.accept("reserved"):
                self.reserved(enum.reserved_range, enum.reserved_name, exclusive_end=False)
            else:
                value = enum.value.add(name=self.ident("an enum value name"))
                self.expect("=")
                at = self.tok
                value.number = self.integer("an enum value number")
                if not -2**31 <= value.number < 2**31:
                    raise proto_error(f"enum value {value.name} = {value.number} is out of the int32 range", at)
                if self.at("["):
                    self.field_options(None, value.options)
                self.expect(";")
        if not enum.value:
            raise proto_error(f"enum {enum.name} has no values", self.tokens[self.i - 1])


def _default_text(value, at: Token, field_type: int) -> str:
    """A ``[default = ...]`` value as ``FileDescriptorProto.default_value`` holds it: strings as they are,
    bytes C-escaped, numbers, bools and enum value names as text."""
    if value is None:
        raise proto_error("a default value cannot be an aggregate", at)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes) and field_type == F.TYPE_STRING:
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise proto_error("a string default must be valid UTF-8", at) from None
    if isinstance(value, bytes):
        return "".join(chr(b) if 0x20 <= b < 0x7F and b not in (0x5C, 0x22, 0x27) else f"\\{b:03o}"
                       for b in value)
    if isinstance(value, float):
        if value != value:
            return "nan"
        if value in (float("inf"), float("-inf")):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    return str(value)


__all__ = ["parse_proto", "map_entry_name", "SCALAR_TYPES"]
