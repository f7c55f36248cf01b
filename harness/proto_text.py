"""Protobuf schemas both ways, for the test schema registry: `.proto` text into a ``FileDescriptorProto`` (with
protoc from ``grpcio-tools``) and a ``FileDescriptorProto`` back into `.proto` text (a printer written here).

A real registry stores Protobuf schemas as `.proto` text and hands out the file's descriptor in base64 when asked
for ``format=serialized``; Java serializers register text, confluent-kafka's Python serializer registers the
base64 descriptor. :func:`identity` gives both forms of one file the same key (what decides "same schema, same
id"): the descriptor without its file name, source info and the ``json_name`` values protoc derives anyway.

The printer covers proto2, proto3 (``optional`` included) and editions files: messages, nested types, enums, maps,
oneofs, extensions, reserved ranges and names, services and every option that the descriptor holds as a known
field. It refuses proto2 groups (:class:`ProtoPrintError`). Type names are written fully qualified (``.pkg.Msg``),
which protoc reads back unchanged.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["ProtoCompileError", "ProtoPrintError", "compile_proto", "default_json_name", "identity",
           "normalized", "print_proto", "well_known_include_dir"]


class ProtoCompileError(ValueError):
    """protoc refused a `.proto` text; the message is protoc's."""


class ProtoPrintError(ValueError):
    """The descriptor uses something the printer does not write (proto2 groups)."""


def well_known_include_dir() -> str:
    """The folder of ``google/protobuf/*.proto`` that ships with grpcio-tools."""
    import grpc_tools

    return str(Path(grpc_tools.__file__).parent / "_proto")


def compile_proto(text: str, imports: dict[str, str] | None = None, name: str = "default.proto"):
    """The ``FileDescriptorProto`` of ``text`` compiled by protoc; ``imports`` maps import paths to their texts
    (the schema's references). Well-known ``google/protobuf/*.proto`` imports need no entry."""
    from google.protobuf import descriptor_pb2

    with tempfile.TemporaryDirectory(prefix="kwire-protoc-") as folder:
        root = Path(folder)
        for path, content in {**(imports or {}), name: text}.items():
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
        out = root / "out.pb"
        done = subprocess.run(
            [sys.executable, "-m", "grpc_tools.protoc", f"-I{root}", f"-I{well_known_include_dir()}",
             f"--descriptor_set_out={out}", name],
            cwd=root, capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            message = (done.stderr or done.stdout).strip().replace(f"{root}{os.sep}", "")
            raise ProtoCompileError(message or f"protoc failed with exit code {done.returncode}")
        files = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file
    return next(f for f in files if f.name == name)


def default_json_name(field_name: str) -> str:
    """protoc's JSON name of a field: underscores dropped, the letter after each one upper-cased."""
    out, upper = [], False
    for ch in field_name:
        if ch == "_":
            upper = True
        elif upper:
            out.append(ch.upper())
            upper = False
        else:
            out.append(ch)
    return "".join(out)


def normalized(file_proto):
    """A copy without the file name, source info and derivable ``json_name`` values."""
    from google.protobuf import descriptor_pb2

    copy = descriptor_pb2.FileDescriptorProto()
    copy.CopyFrom(file_proto)
    copy.ClearField("name")
    copy.ClearField("source_code_info")

    def fields_of(message):
        yield from message.field
        yield from message.extension
        for nested in message.nested_type:
            yield from fields_of(nested)

    everything = list(copy.extension)
    for message in copy.message_type:
        everything.extend(fields_of(message))
    for field in everything:
        if field.HasField("json_name") and field.json_name == default_json_name(field.name):
            field.ClearField("json_name")
    _clear_empty_options(copy)
    return copy


def _clear_empty_options(message) -> None:
    """Drop ``options`` messages that are set but hold nothing (protoc leaves some after stripping
    source-retention options); they mean the same as no options."""
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        if field.name == "options" and not field.is_repeated and value.ByteSize() == 0:
            message.ClearField("options")
            continue
        for item in (value if field.is_repeated else [value]):
            _clear_empty_options(item)


def identity(file_proto) -> bytes:
    """What makes two Protobuf schemas the same schema (see the module docstring)."""
    return normalized(file_proto).SerializeToString(deterministic=True)


# -- the printer ------------------------------------------------------------------------------------------

_SCALARS = {1: "double", 2: "float", 3: "int64", 4: "uint64", 5: "int32", 6: "fixed64", 7: "fixed32", 8: "bool",
            9: "string", 12: "bytes", 13: "uint32", 15: "sfixed32", 16: "sfixed64", 17: "sint32", 18: "sint64"}
_GROUP, _MESSAGE, _ENUM = 10, 11, 14
_OPTIONAL, _REQUIRED, _REPEATED = 1, 2, 3
_MAX_FIELD_NUMBER = 536_870_911


def _quote(text: str | bytes) -> str:
    data = text.encode("utf-8") if isinstance(text, str) else text
    escapes = {0x22: '\\"', 0x27: "\\'", 0x5C: "\\\\", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"}
    out = []
    for byte in data:
        if byte in escapes:
            out.append(escapes[byte])
        elif 0x20 <= byte < 0x7F:
            out.append(chr(byte))
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def _scalar_text(field, value) -> str:
    if field.type == field.TYPE_ENUM:
        enum_value = field.enum_type.values_by_number.get(value)
        return enum_value.name if enum_value is not None else str(value)
    if field.type == field.TYPE_BOOL:
        return "true" if value else "false"
    if field.type in (field.TYPE_STRING, field.TYPE_BYTES):
        return _quote(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    return str(value)


def _option_items(options) -> list[tuple[str, str]]:
    """(name, value text) of every option set in an options message: message-valued ones as aggregates
    (``{ field: value }``), extensions named ``(full.name)``."""
    from google.protobuf import text_format

    items = []
    for field, value in options.ListFields():
        name = f"({field.full_name})" if field.is_extension else field.name
        for item in (value if field.is_repeated else [value]):
            if field.type in (_MESSAGE, _GROUP):
                items.append((name, "{ " + text_format.MessageToString(item, as_one_line=True) + " }"))
            else:
                items.append((name, _scalar_text(field, item)))
    return items


class _Printer:
    def __init__(self, file_proto) -> None:
        self.file = file_proto
        self.lines: list[str] = []
        self.proto3 = file_proto.syntax == "proto3"
        self.editions = file_proto.syntax == "editions"

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("  " * depth + text)

    def options(self, depth: int, options) -> None:
        for name, value in _option_items(options):
            self.emit(depth, f"option {name} = {value};")

    @staticmethod
    def inline_options(pairs: list[tuple[str, str]]) -> str:
        return f" [{', '.join(f'{name} = {value}' for name, value in pairs)}]" if pairs else ""

    # -- file ---------------------------------------------------------------------------------------------
    def run(self) -> str:
        f = self.file
        if self.editions:
            from google.protobuf import descriptor_pb2

            edition = descriptor_pb2.Edition.Name(f.edition).removeprefix("EDITION_")
            self.emit(0, f'edition = "{edition}";')
        else:
            self.emit(0, f'syntax = "{f.syntax or "proto2"}";')
        if f.package:
            self.emit(0, f"package {f.package};")
        public, weak = set(f.public_dependency), set(f.weak_dependency)
        for index, dependency in enumerate(f.dependency):
            kind = "public " if index in public else "weak " if index in weak else ""
            self.emit(0, f"import {kind}{_quote(dependency)};")
        self.options(0, f.options)
        for message in f.message_type:
            self.message(0, message)
        for enum in f.enum_type:
            self.enum(0, enum)
        for service in f.service:
            self.service(service)
        self.extensions(0, f.extension)
        return "\n".join(self.lines) + "\n"

    # -- messages -----------------------------------------------------------------------------------------
    def message(self, depth: int, message) -> None:
        self.emit(depth, f"message {message.name} {{")
        inner = depth + 1
        self.options(inner, message.options)
        map_entries = {nested.name: nested for nested in message.nested_type if nested.options.map_entry}
        synthetic = {i for i, field in enumerate(message.field) if field.proto3_optional and field.HasField("oneof_index")}
        synthetic_oneofs = {message.field[i].oneof_index for i in synthetic}
        printed_oneofs = set()
        for index, field in enumerate(message.field):
            if field.HasField("oneof_index") and field.oneof_index not in synthetic_oneofs:
                if field.oneof_index in printed_oneofs:
                    continue
                printed_oneofs.add(field.oneof_index)
                self.oneof(inner, message, field.oneof_index, map_entries)
            else:
                self.field(inner, field, map_entries, in_oneof=False)
        for nested in message.nested_type:
            if nested.name not in map_entries:
                self.message(inner, nested)
        for enum in message.enum_type:
            self.enum(inner, enum)
        for extension_range in message.extension_range:
            end = "max" if extension_range.end - 1 >= _MAX_FIELD_NUMBER else str(extension_range.end - 1)
            span = str(extension_range.start) if end == str(extension_range.start) else f"{extension_range.start} to {end}"
            extra = self.inline_options(_option_items(extension_range.options))
            self.emit(inner, f"extensions {span}{extra};")
        self.reserved(inner, message.reserved_range, message.reserved_name, exclusive_end=True)
        self.extensions(inner, message.extension)
        self.emit(depth, "}")

    def oneof(self, depth: int, message, index: int, map_entries) -> None:
        decl = message.oneof_decl[index]
        self.emit(depth, f"oneof {decl.name} {{")
        self.options(depth + 1, decl.options)
        for field in message.field:
            if field.HasField("oneof_index") and field.oneof_index == index:
                self.field(depth + 1, field, map_entries, in_oneof=True)
        self.emit(depth, "}")

    def type_name(self, field) -> str:
        if field.type in _SCALARS:
            return _SCALARS[field.type]
        if field.type == _GROUP:
            raise ProtoPrintError(f"field {field.name!r} is a proto2 group, which this printer does not write")
        return field.type_name

    def label(self, field, in_oneof: bool) -> str:
        if in_oneof:
            return ""
        if field.label == _REPEATED:
            return "repeated "
        if self.editions:
            return ""
        if field.label == _REQUIRED:
            return "required "
        if self.proto3:
            return "optional " if field.proto3_optional else ""
        return "optional "

    def field(self, depth: int, field, map_entries, *, in_oneof: bool) -> None:
        short = field.type_name.rsplit(".", 1)[-1]
        if field.type == _MESSAGE and field.label == _REPEATED and short in map_entries \
                and field.type_name.endswith("." + short):
            entry = map_entries[short]
            key, value = entry.field[0], entry.field[1]
            declared = f"map<{self.type_name(key)}, {self.type_name(value)}>"
            label = ""
        else:
            declared = self.type_name(field)
            label = self.label(field, in_oneof)
        pairs = []
        if field.HasField("default_value"):
            if field.type == field.TYPE_STRING:
                pairs.append(("default", _quote(field.default_value)))
            elif field.type == field.TYPE_BYTES:  # already C-escaped in the descriptor
                pairs.append(("default", f'"{field.default_value}"'))
            else:
                pairs.append(("default", field.default_value))
        if field.HasField("json_name") and field.json_name != default_json_name(field.name):
            pairs.append(("json_name", _quote(field.json_name)))
        pairs.extend(_option_items(field.options))
        self.emit(depth, f"{label}{declared} {field.name} = {field.number}{self.inline_options(pairs)};")

    def extensions(self, depth: int, fields) -> None:
        by_extendee: dict[str, list] = {}
        for field in fields:
            by_extendee.setdefault(field.extendee, []).append(field)
        for extendee, members in by_extendee.items():
            self.emit(depth, f"extend {extendee} {{")
            for field in members:
                self.field(depth + 1, field, {}, in_oneof=False)
            self.emit(depth, "}")

    def reserved(self, depth: int, ranges, names, *, exclusive_end: bool) -> None:
        spans = []
        for span in ranges:
            end = span.end - 1 if exclusive_end else span.end
            spans.append(str(span.start) if end == span.start else
                         f"{span.start} to {'max' if end >= _MAX_FIELD_NUMBER else end}")
        if spans:
            self.emit(depth, f"reserved {', '.join(spans)};")
        if names:
            shown = ", ".join(name if self.editions else _quote(name) for name in names)
            self.emit(depth, f"reserved {shown};")

    # -- enums and services -------------------------------------------------------------------------------
    def enum(self, depth: int, enum) -> None:
        self.emit(depth, f"enum {enum.name} {{")
        self.options(depth + 1, enum.options)
        for value in enum.value:
            self.emit(depth + 1, f"{value.name} = {value.number}{self.inline_options(_option_items(value.options))};")
        self.reserved(depth + 1, enum.reserved_range, enum.reserved_name, exclusive_end=False)
        self.emit(depth, "}")

    def service(self, service) -> None:
        self.emit(0, f"service {service.name} {{")
        self.options(1, service.options)
        for method in service.method:
            head = (f"rpc {method.name}({'stream ' if method.client_streaming else ''}{method.input_type}) returns "
                    f"({'stream ' if method.server_streaming else ''}{method.output_type})")
            items = _option_items(method.options)
            if items:
                self.emit(1, head + " {")
                for name, value in items:
                    self.emit(2, f"option {name} = {value};")
                self.emit(1, "}")
            else:
                self.emit(1, head + ";")
        self.emit(0, "}")


def print_proto(file_proto) -> str:
    """`.proto` text of a ``FileDescriptorProto`` that protoc compiles back into the same descriptor
    (compared with :func:`identity`)."""
    return _Printer(file_proto).run()
