"""Protobuf schemas in the forms they arrive in, made into a :class:`ProtoSchema`.

A schema is `.proto` text (an inline ``valueSchema``, or a registry's default answer), a base64
``FileDescriptorProto`` (a registry's ``format=serialized`` answer, what confluent-kafka registers), its raw bytes,
a ``FileDescriptorProto`` or a parsed :class:`ProtoSchema`. ``references`` gives the files it imports, by import
path: a mapping ``{path: schema}``, ``(path, schema)`` pairs, or the registry client's ``(name, RegisteredSchema)``
pairs. ``google/protobuf/*.proto`` imports need no reference: the protobuf runtime ships them.
"""

from __future__ import annotations

import base64
import binascii
import importlib
import re
from collections.abc import Mapping

from google.protobuf import descriptor_pb2
from google.protobuf.message import DecodeError as _ProtobufDecodeError

from ..errors import SchemaError
from .model import MessageType, ProtoSchema
from .proto.parser import parse_proto

_BASE64 = re.compile(rb"[A-Za-z0-9+/=\s]+")
_WELL_KNOWN = re.compile(r"google/protobuf/([a-z_]+)\.proto")


def _text_of(value):
    """The schema inside what a registry client returns (``RegisteredSchema``, ``Schema``) or the value itself."""
    for attribute in ("schema", "text"):
        inner = getattr(value, attribute, None)
        if inner is not None and not callable(inner):
            return _text_of(inner)
    return value


def file_descriptor(schema, name: str = "schema.proto") -> descriptor_pb2.FileDescriptorProto:
    """The ``FileDescriptorProto`` of one schema in any of the module's forms; ``name`` is used for text."""
    schema = _text_of(schema)
    if isinstance(schema, descriptor_pb2.FileDescriptorProto):
        return schema
    if isinstance(schema, ProtoSchema):
        return schema.main
    if isinstance(schema, (bytes, bytearray, memoryview)):
        raw = bytes(schema)
        if _BASE64.fullmatch(raw) and raw.strip():
            try:
                return _from_bytes(base64.b64decode(raw, validate=False), name)
            except SchemaError:
                pass
        return _from_bytes(raw, name)
    if not isinstance(schema, str):
        raise SchemaError(f"a Protobuf schema is .proto text, a base64 or binary FileDescriptorProto; got "
                          f"{type(schema).__name__}")
    stripped = schema.strip()
    if stripped and _BASE64.fullmatch(stripped.encode("ascii", "replace")):
        try:
            decoded = base64.b64decode(stripped + "=" * (-len(stripped) % 4), validate=False)
            return _from_bytes(decoded, name)
        except (binascii.Error, SchemaError):
            pass  # not base64 after all: read it as text
    return parse_proto(schema, name)


def _from_bytes(raw: bytes, name: str) -> descriptor_pb2.FileDescriptorProto:
    try:
        proto = descriptor_pb2.FileDescriptorProto.FromString(raw)
    except (_ProtobufDecodeError, ValueError) as exc:
        raise SchemaError(f"not a serialized FileDescriptorProto ({exc})") from None
    if not proto.message_type and not proto.enum_type and not proto.name:
        raise SchemaError("not a serialized FileDescriptorProto (it defines nothing)")
    if not proto.name:
        proto.name = name
    return proto


def well_known_file(path: str) -> descriptor_pb2.FileDescriptorProto | None:
    """``google/protobuf/<name>.proto`` from the protobuf runtime, or None when it ships no such file."""
    match = _WELL_KNOWN.fullmatch(path)
    if match is None:
        return None
    try:
        module = importlib.import_module(f"google.protobuf.{match.group(1)}_pb2")
    except ImportError:
        return None
    return descriptor_pb2.FileDescriptorProto.FromString(module.DESCRIPTOR.serialized_pb)


def _reference_pairs(references) -> list[tuple[str, object]]:
    if not references:
        return []
    if isinstance(references, Mapping):
        return list(references.items())
    pairs = []
    for item in references:
        if isinstance(item, tuple) and len(item) == 2:
            pairs.append((str(item[0]), item[1]))
        elif hasattr(item, "name") and (hasattr(item, "schema") or hasattr(item, "text")):
            pairs.append((str(item.name), item))
        else:
            raise SchemaError(f"a reference is (import path, schema) or a mapping of them; got {item!r}")
    return pairs


def load_schema(schema, references=()) -> ProtoSchema:
    """A :class:`ProtoSchema` of ``schema`` and the files it imports (see the module's docstring)."""
    if isinstance(schema, ProtoSchema) and not references:
        return schema
    main = file_descriptor(schema)
    files: dict[str, descriptor_pb2.FileDescriptorProto] = {}
    for path, value in _reference_pairs(references):
        proto = file_descriptor(value, path)
        files[path] = proto
        if proto.name and proto.name != path:
            files.setdefault(proto.name, proto)
    pending = list(main.dependency)
    for proto in list(files.values()):
        pending.extend(proto.dependency)
    while pending:
        path = pending.pop()
        if path in files:
            continue
        known = well_known_file(path)
        if known is not None:
            files[path] = known
            pending.extend(known.dependency)
    files[main.name] = main
    return ProtoSchema(main, files)


def select_message(schema: ProtoSchema, message_name: str | None) -> MessageType:
    """The message to read or write: ``message_name`` (full, or relative to the package, or a unique short name)
    or, without one, the main file's first message (what message index ``[0]`` means)."""
    if message_name is None:
        if not schema.top:
            raise SchemaError("the Protobuf schema defines no message")
        return schema.top[0]
    candidates = [message_name.lstrip("."), f"{schema.package}.{message_name}" if schema.package else message_name]
    for name in candidates:
        found = schema.types.get(name)
        if isinstance(found, MessageType):
            return found
    short = [t for n, t in schema.types.items() if isinstance(t, MessageType) and n.rsplit(".", 1)[-1] == message_name]
    if len(short) == 1:
        return short[0]
    known = sorted(n for n, t in schema.types.items() if isinstance(t, MessageType) and not t.map_entry)
    why = "is ambiguous" if short else "is not defined"
    raise SchemaError(f"message {message_name!r} {why} in the Protobuf schema; its messages: {', '.join(known)}")


def message_indexes(schema: ProtoSchema, message: MessageType) -> list[int]:
    """The Confluent message-index path of ``message`` in the main file (``[0]``: the first message)."""

    def walk(messages, path):
        for i, m in enumerate(messages):
            if m is message:
                return path + [i]
            found = walk(m.nested, path + [i])
            if found is not None:
                return found
        return None

    found = walk(schema.top, [])
    if found is None:
        raise SchemaError(f"message {message.full_name} is not defined in the schema's own file (it is imported): "
                          f"a Confluent payload can only name messages of the schema's file")
    return found
