"""A small declarative engine for Kafka messages.

A message is declared once, as data, mirroring Kafka's JSON message
definitions::

    METADATA = Api(3, "Metadata", "0-13", flexible="9+",
        request=[
            F("topics", Array(
                F("topic_id", UUID, "10+"),
                F("name", STRING, nullable="10+"),
            ), nullable="1+"),
            F("allow_auto_topic_creation", BOOL, "4+", default=True),
        ],
        response=[...])

Encoders and decoders for every version are derived from the declaration (and
compiled lazily, once per struct and version).  In flexible versions strings,
bytes and arrays use their compact forms and every struct ends with a
tagged-field section; fields declared with ``tag=`` live in that section.
Unknown tagged fields are skipped on decode.

Bodies are plain dicts keyed by field name.  On encode a missing key takes the
field's default and keys of fields absent from the version are ignored.  On
decode every declared field is present in the result; fields absent from the
version (or tagged fields not sent) carry their default.

Defaults: the declared ``default=``, else ``None`` when the field is nullable
(in that version; for absent fields: in any version), else the type's zero
value: ``0``, ``0.0``, ``False``, ``""``, ``b""``, the zero UUID, ``[]`` for
arrays and a dict of defaults for structs.
"""

from __future__ import annotations

import re
import struct
from types import MappingProxyType
from typing import Any, Callable

from .errors import ProtocolDecodeError, ProtocolEncodeError
from .primitives import ZERO_UUID, Reader, Writer

__all__ = [
    "VersionRange", "Type", "Primitive", "ArrayType", "StructType", "Field", "MessageSchema", "Api",
    "F", "Array", "Struct", "snake_case",
    "INT8", "INT16", "INT32", "INT64", "UINT16", "UINT32", "FLOAT64", "BOOL", "UUID",
    "STRING", "BYTES", "RECORDS",
]

_MISSING: Any = object()
_EMPTY_STRUCT = MappingProxyType({})


def snake_case(json_name: str) -> str:
    """Kafka JSON field name to the dict key used here: ``IsrNodes`` -> ``isr_nodes``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", json_name).lower()


class VersionRange:
    """A Kafka version range: ``"3+"``, ``"0-4"``, ``"7"`` or ``"none"``."""

    __slots__ = ("low", "high", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        if text == "none":
            self.low, self.high = 1, 0  # empty
        elif text.endswith("+"):
            self.low, self.high = int(text[:-1]), 0x7FFF
        elif "-" in text:
            low, high = text.split("-")
            self.low, self.high = int(low), int(high)
        else:
            self.low = self.high = int(text)

    def __contains__(self, version: int) -> bool:
        return self.low <= version <= self.high

    def is_empty(self) -> bool:
        """True for ``"none"``."""
        return self.low > self.high

    def __repr__(self) -> str:
        return f"VersionRange({self.text!r})"


_NO_VERSIONS = VersionRange("none")


def _versions(spec) -> VersionRange:
    if spec is None:
        return _NO_VERSIONS
    return spec if isinstance(spec, VersionRange) else VersionRange(spec)


# --------------------------------------------------------------------------- types


class Type:
    """Base class of field types."""

    def zero(self) -> Any:
        """The type's default value when nothing else applies."""
        raise NotImplementedError


class Primitive(Type):
    """A scalar wire type.  ``kind`` is "fixed", "string" or "bytes"."""

    def __init__(self, name: str, kind: str, zero: Any, size: int = 0) -> None:
        self.name = name
        self.kind = kind
        self._zero = zero
        self.size = size  # fixed-width types only

    def zero(self) -> Any:
        return self._zero

    def __repr__(self) -> str:
        return self.name.upper()


INT8 = Primitive("int8", "fixed", 0, 1)
INT16 = Primitive("int16", "fixed", 0, 2)
INT32 = Primitive("int32", "fixed", 0, 4)
INT64 = Primitive("int64", "fixed", 0, 8)
UINT16 = Primitive("uint16", "fixed", 0, 2)
UINT32 = Primitive("uint32", "fixed", 0, 4)
FLOAT64 = Primitive("float64", "fixed", 0.0, 8)
BOOL = Primitive("bool", "fixed", False, 1)
UUID = Primitive("uuid", "fixed", ZERO_UUID, 16)
STRING = Primitive("string", "string", "")
BYTES = Primitive("bytes", "bytes", b"")
RECORDS = Primitive("records", "bytes", b"")
"""Raw record-set bytes: encoded like ``bytes``, decoded as a zero-copy memoryview."""


class ArrayType(Type):
    """An array of a primitive type or of a struct."""

    def __init__(self, element: Type) -> None:
        self.element = element

    def zero(self) -> Any:
        return []

    def __repr__(self) -> str:
        return f"Array({self.element!r})"


class StructType(Type):
    """A group of fields; the body of a message is a struct too."""

    def __init__(self, fields: list["Field"] | tuple["Field", ...], name: str = "struct") -> None:
        self.fields = tuple(fields)
        self.name = name
        names = [f.name for f in self.fields]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate field names in {name}: {names}")
        self._codecs: dict[tuple[int, bool], _StructCodec] = {}

    def codec(self, version: int, flexible: bool) -> "_StructCodec":
        """The compiled codec for ``version`` (cached)."""
        key = (version, flexible)
        codec = self._codecs.get(key)
        if codec is None:
            codec = _StructCodec(self, version, flexible)
            self._codecs[key] = codec
        return codec

    def zero(self) -> Any:
        return {}

    def default_dict(self, version: int) -> dict:
        """A dict holding the default of every field in ``version``."""
        return {field.name: field.default_for(version) for field in self.fields}

    def __repr__(self) -> str:
        return f"Struct({', '.join(f.name for f in self.fields)})"


class Field:
    """One declared field.  Build it with :func:`F`."""

    def __init__(
        self,
        name: str,
        type_: Type,
        versions: str = "0+",
        *,
        nullable: str | None = None,
        default: Any = _MISSING,
        tag: int | None = None,
        tagged: str | None = None,
        flexible: str | None = None,
    ) -> None:
        self.name = name
        self.type = type_
        self.versions = _versions(versions)
        self.nullable = _versions(nullable)
        self.default = default
        self.tag = tag
        self.tagged = _versions(tagged if tagged is not None else (versions if tag is not None else None))
        # None: follow the message's flexible versions; otherwise the versions
        # where this field uses compact encoding (RequestHeader.ClientId: "none").
        self.flexible = None if flexible is None else _versions(flexible)
        if isinstance(type_, StructType) and not self.nullable.is_empty():
            raise ValueError(f"nullable struct fields are not supported ({name})")

    def default_for(self, version: int) -> Any:
        """The default value of this field in ``version`` (fresh for mutable values)."""
        if isinstance(self.type, StructType):
            return self.type.default_dict(version)
        if self.default is not _MISSING:
            value = self.default
        elif version in self.versions:
            value = None if version in self.nullable else self.type.zero()
        else:
            value = None if not self.nullable.is_empty() else self.type.zero()
        if isinstance(value, list):
            return list(value)
        return value

    def __repr__(self) -> str:
        return f"F({self.name!r}, {self.type!r}, {self.versions.text!r})"


def F(name: str, type_: Type, versions: str = "0+", **options) -> Field:
    """Declare a field: ``F("topic_id", UUID, "10+")``.

    Options: ``nullable="1+"`` (versions where null is allowed), ``default=``,
    ``tag=0`` (tagged field, in the field's versions unless ``tagged="..."``)
    and ``flexible="none"`` (never use compact encoding for this field).
    """
    return Field(name, type_, versions, **options)


def Array(*items) -> ArrayType:
    """``Array(INT32)`` is an array of int32; ``Array(F(...), F(...))`` an array of structs."""
    if len(items) == 1 and isinstance(items[0], Type):
        return ArrayType(items[0])
    if not items or not all(isinstance(item, Field) for item in items):
        raise TypeError("Array() takes one Type or one or more fields")
    return ArrayType(StructType(items))


def Struct(*fields: Field) -> StructType:
    """A nested struct: ``Struct(F("leader_id", INT32, default=-1), ...)``."""
    return StructType(fields)


# --------------------------------------------------------------------------- codecs

_FIXED_READERS = {
    "int8": Reader.int8, "int16": Reader.int16, "int32": Reader.int32, "int64": Reader.int64,
    "uint16": Reader.uint16, "uint32": Reader.uint32, "float64": Reader.float64,
    "bool": Reader.bool, "uuid": Reader.uuid,
}
_FIXED_WRITERS = {
    "int8": Writer.int8, "int16": Writer.int16, "int32": Writer.int32, "int64": Writer.int64,
    "uint16": Writer.uint16, "uint32": Writer.uint32, "float64": Writer.float64,
    "bool": Writer.bool, "uuid": Writer.uuid,
}
# (kind, compact, nullable) -> Reader / Writer method
_VARIABLE_READERS = {
    ("string", False, False): Reader.string,
    ("string", False, True): Reader.nullable_string,
    ("string", True, False): Reader.compact_string,
    ("string", True, True): Reader.compact_nullable_string,
    ("bytes", False, False): Reader.bytes,
    ("bytes", False, True): Reader.nullable_bytes,
    ("bytes", True, False): Reader.compact_bytes,
    ("bytes", True, True): Reader.compact_nullable_bytes,
}
_VARIABLE_WRITERS = {
    ("string", False, False): Writer.string,
    ("string", False, True): Writer.nullable_string,
    ("string", True, False): Writer.compact_string,
    ("string", True, True): Writer.compact_nullable_string,
    ("bytes", False, False): Writer.bytes,
    ("bytes", False, True): Writer.nullable_bytes,
    ("bytes", True, False): Writer.compact_bytes,
    ("bytes", True, True): Writer.compact_nullable_bytes,
}


def _min_wire_size(type_: Type, version: int, compact: bool) -> int:
    """Smallest number of bytes a (non-null) value of ``type_`` can take."""
    if isinstance(type_, Primitive):
        if type_.kind == "fixed":
            return type_.size
        if compact:
            return 1
        return 2 if type_.kind == "string" else 4
    if isinstance(type_, ArrayType):
        return 1 if compact else 4
    return type_.codec(version, compact).min_size


def _value_reader(type_: Type, version: int, compact: bool, nullable: bool, flexible: bool) -> Callable:
    """A function ``reader -> value`` for one field."""
    if isinstance(type_, Primitive):
        if type_.kind == "fixed":
            return _FIXED_READERS[type_.name]
        return _VARIABLE_READERS[(type_.kind, compact, nullable)]
    if isinstance(type_, StructType):
        return type_.codec(version, flexible).decode
    element = type_.element
    element_size = _min_wire_size(element, version, compact)
    read_length = Reader.compact_array_length if compact else Reader.array_length

    if element is INT32:
        def read_int32_array(r: Reader):
            count = read_length(r, 4)
            if count < 0:
                if nullable:
                    return None
                raise ProtocolDecodeError(f"non-nullable array is null at offset {r.pos}")
            return r.int32_array_body(count)
        return read_int32_array

    read_element = _value_reader(element, version, compact, False, flexible)

    def read_array(r: Reader):
        count = read_length(r, element_size)
        if count < 0:
            if nullable:
                return None
            raise ProtocolDecodeError(f"non-nullable array is null at offset {r.pos}")
        return [read_element(r) for _ in range(count)]
    return read_array


def _value_writer(type_: Type, version: int, compact: bool, nullable: bool, flexible: bool) -> Callable:
    """A function ``(writer, value) -> None`` for one field."""
    if isinstance(type_, Primitive):
        if type_.kind == "fixed":
            return _FIXED_WRITERS[type_.name]
        return _VARIABLE_WRITERS[(type_.kind, compact, nullable)]
    if isinstance(type_, StructType):
        return type_.codec(version, flexible).encode
    element = type_.element
    write_length = Writer.compact_array_length if compact else Writer.array_length

    if element is INT32:
        def write_int32_array(w: Writer, values):
            if values is None:
                if not nullable:
                    raise ProtocolEncodeError("null is not allowed")
                write_length(w, -1)
                return
            write_length(w, len(values))
            w.buf += struct.pack(f">{len(values)}i", *values)
        return write_int32_array

    write_element = _value_writer(element, version, compact, False, flexible)

    def write_array(w: Writer, values):
        if values is None:
            if not nullable:
                raise ProtocolEncodeError("null is not allowed")
            write_length(w, -1)
            return
        write_length(w, len(values))
        for index, value in enumerate(values):
            try:
                write_element(w, value)
            except ProtocolEncodeError as exc:
                exc.path.insert(0, index)
                raise
            except (ValueError, TypeError, OverflowError, struct.error) as exc:
                raise ProtocolEncodeError(str(exc), [index]) from exc
    return write_array


class _StructCodec:
    """Encoder/decoder of one struct in one version, compiled from the declaration."""

    def __init__(self, struct_type: StructType, version: int, flexible: bool) -> None:
        self.version = version
        self.flexible = flexible
        self.fields = struct_type.fields
        read_steps = []       # (name, reader -> value), declaration order
        write_steps = []      # (name, writer fn, default)
        tagged_readers = {}   # tag -> (name, reader fn)
        tagged_writers = []   # (tag, name, writer fn, encoded default)
        min_size = 1 if flexible else 0
        for field in self.fields:
            is_tagged = field.tag is not None and version in field.tagged
            # Tagged fields only exist on the wire in flexible versions.
            present = version in field.versions and (flexible or not is_tagged)
            if not present or is_tagged:
                read_steps.append((field.name, _default_reader(field, version)))
            if not present:
                continue
            nullable = version in field.nullable
            compact = flexible if field.flexible is None else version in field.flexible
            reader = _value_reader(field.type, version, compact, nullable, flexible)
            writer = _value_writer(field.type, version, compact, nullable, flexible)
            default = _encode_default(field, version)
            if is_tagged:
                tagged_readers[field.tag] = (field.name, reader)
                scratch = Writer()
                writer(scratch, default)
                tagged_writers.append((field.tag, field.name, writer, scratch.getvalue()))
            else:
                read_steps.append((field.name, reader))
                write_steps.append((field.name, writer, default))
                min_size += _min_wire_size(field.type, version, compact)
        tagged_writers.sort(key=lambda entry: entry[0])
        if len(tagged_readers) != len(tagged_writers):
            raise ValueError(f"duplicate tags in {struct_type.name} v{version}")
        self.read_steps = tuple(read_steps)
        self.write_steps = tuple(write_steps)
        self.tagged_readers = tagged_readers
        self.tagged_writers = tuple(tagged_writers)
        self.min_size = min_size

    def decode(self, r: Reader) -> dict:
        """Read one struct from ``r``."""
        body = {name: read(r) for name, read in self.read_steps}
        if self.flexible:
            count = r.uvarint()
            if count:
                tagged = self.tagged_readers
                for _ in range(count):
                    tag = r.uvarint()
                    size = r.uvarint()
                    known = tagged.get(tag)
                    if known is None:
                        r.skip(size)
                    else:
                        name, read = known
                        body[name] = read(r.sub_reader(size))
        return body

    def encode(self, w: Writer, body) -> None:
        """Append one struct to ``w``."""
        if body is None:
            raise ProtocolEncodeError("null is not allowed for a struct")
        name = None
        try:
            get = body.get
            for name, write, default in self.write_steps:
                value = get(name, _MISSING)
                write(w, default if value is _MISSING else value)
            if self.flexible:
                name = None  # _encode_tagged names the failing field itself
                self._encode_tagged(w, body)
        except ProtocolEncodeError as exc:
            if name is not None:
                exc.path.insert(0, name)
            raise
        except (ValueError, TypeError, OverflowError, struct.error) as exc:
            raise ProtocolEncodeError(str(exc), [name] if name else []) from exc

    def _encode_tagged(self, w: Writer, body) -> None:
        sections = []
        for tag, name, write, encoded_default in self.tagged_writers:
            value = body.get(name, _MISSING)
            if value is _MISSING:
                continue
            scratch = Writer()
            try:
                write(scratch, value)
            except ProtocolEncodeError as exc:
                exc.path.insert(0, name)
                raise
            except (ValueError, TypeError, OverflowError, struct.error) as exc:
                raise ProtocolEncodeError(str(exc), [name]) from exc
            if scratch.buf != encoded_default:  # Kafka omits tagged fields holding their default
                sections.append((tag, scratch.buf))
        w.uvarint(len(sections))
        for tag, raw in sections:
            w.uvarint(tag)
            w.uvarint(len(raw))
            w.buf += raw


def _default_reader(field: Field, version: int) -> Callable:
    """A reader-shaped function returning the field's default without reading."""
    value = field.default_for(version)
    if isinstance(value, (list, dict)):
        return lambda _r: field.default_for(version)
    return lambda _r: value


def _encode_default(field: Field, version: int) -> Any:
    """Value written when the body has no key for ``field`` (never mutated)."""
    if isinstance(field.type, StructType):
        return _EMPTY_STRUCT
    value = field.default_for(version)
    return tuple(value) if isinstance(value, list) else value


# --------------------------------------------------------------------------- messages


class MessageSchema:
    """One request, response or header declaration."""

    def __init__(self, name: str, versions: str, flexible: str | None, fields) -> None:
        self.name = name
        self.versions = _versions(versions)
        self.flexible_versions = _versions(flexible)
        self.body = StructType(fields, name)

    @property
    def fields(self) -> tuple[Field, ...]:
        """The top-level fields."""
        return self.body.fields

    def is_flexible(self, version: int) -> bool:
        """True when ``version`` uses compact types and tagged fields."""
        return version in self.flexible_versions

    def check_version(self, version: int) -> None:
        """Raise ``ValueError`` unless ``version`` is declared."""
        if version not in self.versions:
            raise ValueError(f"{self.name} has no version {version} (valid: {self.versions.text})")

    def codec(self, version: int) -> _StructCodec:
        """The compiled codec of the body in ``version``."""
        self.check_version(version)
        return self.body.codec(version, self.is_flexible(version))

    def encode_into(self, w: Writer, version: int, body) -> None:
        """Append ``body`` encoded in ``version`` to ``w``."""
        try:
            self.codec(version).encode(w, body)
        except ProtocolEncodeError as exc:
            exc.message = f"cannot encode {self.name} v{version}"
            raise

    def encode(self, version: int, body) -> bytes:
        """``body`` encoded in ``version``."""
        w = Writer()
        self.encode_into(w, version, body)
        return bytes(w.buf)

    def decode_from(self, r: Reader, version: int) -> dict:
        """Read a body encoded in ``version`` from ``r``."""
        return self.codec(version).decode(r)

    def decode(self, version: int, data) -> dict:
        """Decode a complete body; trailing bytes are ignored (as Kafka does)."""
        return self.decode_from(Reader(data), version)

    def default_body(self, version: int) -> dict:
        """A body holding the default of every field."""
        self.check_version(version)
        return self.body.default_dict(version)

    def __repr__(self) -> str:
        return f"MessageSchema({self.name!r}, {self.versions.text!r})"


class Api:
    """A Kafka API: request and response declarations plus framing helpers.

    ``versions`` and ``flexible`` apply to both request and response (they are
    equal in Kafka's JSON for every API declared here).
    """

    def __init__(
        self,
        api_key: int,
        name: str,
        versions: str,
        *,
        flexible: str,
        request: list[Field],
        response: list[Field],
        request_header: MessageSchema,
        response_header: MessageSchema,
        latest_version_unstable: bool = False,
        response_header_v0_always: bool = False,
    ) -> None:
        self.api_key = api_key
        self.name = name
        self.request = MessageSchema(f"{name}Request", versions, flexible, request)
        self.response = MessageSchema(f"{name}Response", versions, flexible, response)
        self.min_version = self.request.versions.low
        self.max_version = self.request.versions.high
        flexible_range = _versions(flexible)
        self.flexible_from = None if flexible_range.is_empty() else flexible_range.low
        self.latest_version_unstable = latest_version_unstable
        """True when Kafka marks ``max_version`` unstable (brokers do not advertise it by default)."""
        self.response_header_v0_always = response_header_v0_always
        self._request_header = request_header
        self._response_header = response_header

    @property
    def max_stable_version(self) -> int:
        """The highest version brokers advertise by default."""
        return self.max_version - 1 if self.latest_version_unstable else self.max_version

    def is_flexible(self, version: int) -> bool:
        """True when ``version`` is a flexible version of this API."""
        return self.flexible_from is not None and version >= self.flexible_from

    def request_header_version(self, version: int) -> int:
        """Request header version: 2 for flexible versions, else 1."""
        return 2 if self.is_flexible(version) else 1

    def response_header_version(self, version: int) -> int:
        """Response header version: 1 for flexible versions, else 0 (ApiVersions: always 0)."""
        if self.response_header_v0_always:
            return 0
        return 1 if self.is_flexible(version) else 0

    def encode_request(self, version: int, body, *, correlation_id: int, client_id: str | None) -> bytes:
        """Request header + body, without the 4-byte size prefix."""
        self.request.check_version(version)
        w = Writer()
        header = {
            "request_api_key": self.api_key,
            "request_api_version": version,
            "correlation_id": correlation_id,
            "client_id": client_id,
        }
        self._request_header.encode_into(w, self.request_header_version(version), header)
        self.request.encode_into(w, version, body)
        return bytes(w.buf)

    def decode_request(self, version: int, frame) -> tuple[dict, dict]:
        """Parse a request frame (after the size prefix): ``(header, body)``."""
        self.request.check_version(version)
        r = Reader(frame)
        header = self._request_header.decode_from(r, self.request_header_version(version))
        if header["request_api_key"] != self.api_key or header["request_api_version"] != version:
            raise ProtocolDecodeError(
                f"expected {self.name} v{version} (key {self.api_key}), header says key "
                f"{header['request_api_key']} v{header['request_api_version']}"
            )
        return header, self.request.decode_from(r, version)

    def encode_response(self, version: int, body, *, correlation_id: int) -> bytes:
        """Response header + body, without the 4-byte size prefix."""
        self.response.check_version(version)
        w = Writer()
        self._response_header.encode_into(
            w, self.response_header_version(version), {"correlation_id": correlation_id}
        )
        self.response.encode_into(w, version, body)
        return bytes(w.buf)

    def decode_response(self, version: int, frame) -> tuple[int, dict]:
        """Parse a response frame (after the size prefix): ``(correlation_id, body)``.

        ``bytes``/``records`` fields of the body are zero-copy slices of ``frame``.
        """
        self.response.check_version(version)
        r = Reader(frame)
        header = self._response_header.decode_from(r, self.response_header_version(version))
        return header["correlation_id"], self.response.decode_from(r, version)

    def __repr__(self) -> str:
        return f"<Api {self.name} key={self.api_key} v{self.min_version}-{self.max_version}>"
