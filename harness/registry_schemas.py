"""What the test schema registry does with a schema's text: check it, give it a canonical form (same schema, same
id) and say whether a new version is compatible with earlier ones.

* AVRO: parsed by the ``avro`` package (with the named types of its references), written back as compact JSON
  with attributes in a fixed order and names relative to their enclosing namespace, as Avro's Java
  ``Schema.toString()`` (what a real registry stores) writes them: whitespace, attribute order and
  ``{"type": "int"}`` versus ``"int"`` do not change the id. Compatibility (BACKWARD, FORWARD, FULL and their
  transitive forms) is checked by the ``avro`` package's reader/writer checker.
* JSON: checked against its meta-schema by ``jsonschema``, written back as compact JSON (key order kept).
* PROTOBUF: `.proto` text (compiled by protoc) or a base64 ``FileDescriptorProto`` (checked by building it in a
  descriptor pool with its references); see :mod:`harness.proto_text`. Compatibility of JSON and Protobuf
  schemas is not checked (any new version is accepted unless its type differs).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["InvalidSchema", "ParsedSchema", "SCHEMA_TYPES", "parse_schema", "incompatibilities"]

SCHEMA_TYPES = ("AVRO", "PROTOBUF", "JSON")
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_WELL_KNOWN_PREFIX = "google/protobuf/"


class InvalidSchema(ValueError):
    """The registry answers it with HTTP 422, error code 42201."""


@dataclass
class ParsedSchema:
    schema_type: str
    text: str  # what GET returns by default
    identity: str  # equal for the same schema whatever its form
    serialized: str | None = None  # PROTOBUF: the base64 FileDescriptorProto (format=serialized)
    avro: Any = None  # AVRO: the avro package's schema object (for compatibility checks)


def parse_schema(schema_type: str, text: str, references: list[tuple[str, ParsedSchema]]) -> ParsedSchema:
    """Check ``text`` and canonicalise it. ``references``: (reference name, parsed schema) of every schema it
    references, directly or not, dependencies first. Raises :class:`InvalidSchema`."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidSchema("Empty schema")
    if schema_type == "AVRO":
        return _parse_avro(text, references)
    if schema_type == "JSON":
        return _parse_json(text)
    if schema_type == "PROTOBUF":
        return _parse_protobuf(text, references)
    raise InvalidSchema(f"Invalid schema type {schema_type!r}: accepted are {', '.join(SCHEMA_TYPES)}")


# -- AVRO -------------------------------------------------------------------------------------------------

_PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
_NAMED = {"record", "error", "enum", "fixed"}
_ORDER = {"record": ("doc", "fields"), "error": ("doc", "fields"), "enum": ("doc", "symbols", "default"),
          "fixed": ("doc", "size"), "array": ("items",), "map": ("values",)}
_FIELD_ORDER = ("doc", "default", "order")


def _split_name(name: str, namespace: str) -> tuple[str, str]:
    if "." in name:
        space, _, short = name.rpartition(".")
        return short, space
    return name, namespace


class _AvroCanon:
    """Compact JSON of an Avro schema in a fixed attribute order, names relative to the enclosing namespace."""

    def __init__(self, known: set[str]) -> None:
        self.known = set(known)

    def resolve(self, name: str, namespace: str) -> str:
        if "." in name or not namespace:
            return name
        qualified = f"{namespace}.{name}"
        return qualified if qualified in self.known or name not in self.known else name

    def ref(self, full: str, namespace: str) -> str:
        space, _, short = full.rpartition(".")
        return short if space == namespace and space else full

    def node(self, schema: Any, namespace: str) -> Any:
        if isinstance(schema, list):
            return [self.node(branch, namespace) for branch in schema]
        if isinstance(schema, str):
            if schema in _PRIMITIVES:
                return schema
            return self.ref(self.resolve(schema, namespace), namespace)
        if not isinstance(schema, dict):
            raise InvalidSchema(f"not an Avro schema: {json.dumps(schema)[:80]}")
        kind = schema.get("type")
        if isinstance(kind, (dict, list)):
            return self.node(kind, namespace) if len(schema) == 1 else {
                "type": self.node(kind, namespace), **{k: v for k, v in schema.items() if k != "type"}}
        if kind in _PRIMITIVES or (isinstance(kind, str) and kind not in _NAMED and kind not in _ORDER):
            extra = {k: v for k, v in schema.items() if k != "type"}
            base = kind if kind in _PRIMITIVES else self.ref(self.resolve(kind, namespace), namespace)
            return {"type": base, **extra} if extra else base
        out: dict[str, Any] = {"type": kind}
        inner = namespace
        if kind in _NAMED:
            short, space = _split_name(str(schema.get("name", "")), str(schema.get("namespace", namespace) or ""))
            full = f"{space}.{short}" if space else short
            self.known.add(full)
            out["name"] = short
            if space != namespace:
                out["namespace"] = space
            inner = space
        for key in _ORDER[kind]:
            if key not in schema:
                continue
            if key == "fields":
                out["fields"] = [self.field(f, inner) for f in schema["fields"]]
            elif key in ("items", "values"):
                out[key] = self.node(schema[key], inner)
            else:
                out[key] = schema[key]
        taken = {"type", "name", "namespace", "aliases", *_ORDER[kind]}
        out.update({k: v for k, v in schema.items() if k not in taken})
        if "aliases" in schema:
            out["aliases"] = schema["aliases"]
        return out

    def field(self, spec: dict, namespace: str) -> dict:
        out = {"name": spec.get("name"), "type": self.node(spec.get("type"), namespace)}
        for key in _FIELD_ORDER:
            if key in spec and not (key == "order" and spec[key] == "ascending"):
                out[key] = spec[key]
        out.update({k: v for k, v in spec.items() if k not in ("name", "type", "aliases", *_FIELD_ORDER)})
        if "aliases" in spec:
            out["aliases"] = spec["aliases"]
        return out


def _parse_avro(text: str, references: list[tuple[str, ParsedSchema]]) -> ParsedSchema:
    import avro.errors
    import avro.name
    import avro.schema as avs

    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InvalidSchema(f"Invalid schema: the Avro schema is not JSON: {exc}") from None
    names = avro.name.Names()
    known: set[str] = set()
    try:
        for _, ref in references:
            if ref.schema_type != "AVRO":
                raise InvalidSchema(f"an Avro schema cannot reference a {ref.schema_type} schema")
            avs.make_avsc_object(json.loads(ref.text), names)
        known = set(names.names)
        parsed = avs.make_avsc_object(data, names)
    except (avro.errors.AvroException, TypeError, ValueError, KeyError, AttributeError) as exc:
        raise InvalidSchema(f"Invalid schema: {exc}") from None
    canonical = json.dumps(_AvroCanon(known).node(data, ""), separators=(",", ":"), ensure_ascii=False)
    return ParsedSchema("AVRO", canonical, canonical, avro=parsed)


def incompatibilities(level: str, new: ParsedSchema, earlier: list[ParsedSchema]) -> list[str]:
    """Why ``new`` may not follow ``earlier`` (oldest first) under compatibility ``level``; empty when it may."""
    if level == "NONE" or not earlier:
        return []
    kinds = {old.schema_type for old in earlier}
    if kinds != {new.schema_type}:
        return [f"Incompatible schema type: {new.schema_type} after {', '.join(sorted(kinds))}"]
    if new.schema_type != "AVRO":
        return []
    from avro.compatibility import ReaderWriterCompatibilityChecker, SchemaCompatibilityType

    checker = ReaderWriterCompatibilityChecker()
    against = earlier if level.endswith("_TRANSITIVE") else earlier[-1:]
    base = level.removesuffix("_TRANSITIVE")
    problems = []
    for old in against:
        pairs = []
        if base in ("BACKWARD", "FULL"):
            pairs.append(("BACKWARD", new.avro, old.avro))
        if base in ("FORWARD", "FULL"):
            pairs.append(("FORWARD", old.avro, new.avro))
        for direction, reader, writer in pairs:
            result = checker.get_compatibility(reader, writer)
            if result.compatibility is not SchemaCompatibilityType.compatible:
                kinds = ", ".join(sorted({i.value for i in result.incompatibilities})) or "incompatible"
                detail = "; ".join(sorted(str(m) for m in result.messages))
                where = ", ".join(sorted(result.locations)) or "/"
                problems.append(f"{direction}: {kinds} ({detail}) at {where}")
    return problems


# -- JSON -------------------------------------------------------------------------------------------------

def _parse_json(text: str) -> ParsedSchema:
    import jsonschema
    import jsonschema.exceptions

    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InvalidSchema(f"Invalid schema: the JSON schema is not JSON: {exc}") from None
    if not isinstance(data, (dict, bool)):
        raise InvalidSchema("Invalid schema: a JSON schema is an object or a boolean")
    try:
        jsonschema.validators.validator_for(data).check_schema(data)
    except jsonschema.exceptions.SchemaError as exc:
        raise InvalidSchema(f"Invalid schema: {exc.message}") from None
    canonical = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return ParsedSchema("JSON", canonical, canonical)


# -- PROTOBUF ---------------------------------------------------------------------------------------------

def _descriptor_from_base64(text: str):
    from google.protobuf import descriptor_pb2
    from google.protobuf.message import DecodeError

    compact = text.strip()
    if not _BASE64.fullmatch(compact):
        return None
    try:
        return descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(compact, validate=True))
    except (binascii.Error, DecodeError, ValueError):
        return None


def _well_known_file(name: str) -> bytes:
    import importlib

    from google.protobuf import descriptor_pool

    module = name.removeprefix(_WELL_KNOWN_PREFIX).removesuffix(".proto").replace("/", ".") + "_pb2"
    importlib.import_module(f"google.protobuf.{module}")
    return descriptor_pool.Default().FindFileByName(name).serialized_pb


def _check_in_pool(file_proto, references: list[tuple[str, ParsedSchema]]) -> None:
    from google.protobuf import descriptor_pb2, descriptor_pool

    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()

    def add(name: str, serialized: bytes) -> None:
        proto = descriptor_pb2.FileDescriptorProto.FromString(serialized)
        proto.name = name
        for dependency in proto.dependency:
            if dependency not in added and dependency.startswith(_WELL_KNOWN_PREFIX):
                add(dependency, _well_known_file(dependency))
        if name not in added:
            added.add(name)
            pool.Add(proto)

    try:
        for ref_name, ref in references:
            if ref.schema_type != "PROTOBUF" or ref.serialized is None:
                raise InvalidSchema(f"the reference {ref_name!r} is not a Protobuf schema")
            add(ref_name, base64.b64decode(ref.serialized))
        missing = [d for d in file_proto.dependency if d not in added and not d.startswith(_WELL_KNOWN_PREFIX)]
        if missing:
            raise InvalidSchema(f"Invalid schema: the imports {missing} have no reference")
        add(file_proto.name or "default.proto", file_proto.SerializeToString())
    except (TypeError, KeyError) as exc:
        raise InvalidSchema(f"Invalid schema: {exc}") from None


def _parse_protobuf(text: str, references: list[tuple[str, ParsedSchema]]) -> ParsedSchema:
    from harness.proto_text import ProtoCompileError, ProtoPrintError, compile_proto, identity, print_proto

    file_proto = _descriptor_from_base64(text)
    if file_proto is not None:
        _check_in_pool(file_proto, references)
        try:
            shown = print_proto(file_proto)
        except ProtoPrintError:
            shown = text.strip()  # a real registry would print it; the harness hands the base64 back
        serialized = text.strip()
    else:
        imports = {}
        for name, ref in references:
            if ref.schema_type != "PROTOBUF":
                raise InvalidSchema(f"the reference {name!r} is not a Protobuf schema")
            imports[name] = ref.text
        try:
            file_proto = compile_proto(text, imports)
        except ProtoCompileError as exc:
            raise InvalidSchema(f"Invalid schema: {exc}") from None
        shown = text
        serialized = base64.b64encode(file_proto.SerializeToString()).decode("ascii")
    return ParsedSchema("PROTOBUF", shown, base64.b64encode(identity(file_proto)).decode("ascii"),
                        serialized=serialized)
