"""Kafka wire-protocol primitive types: a bounds-checked :class:`Reader` and a :class:`Writer`.

Conventions
-----------
* Integers are big-endian two's complement; ``uint16``/``uint32`` are unsigned.
* Varints follow protobuf: ``uvarint`` is unsigned LEB128 (at most 5 bytes, 32 bits),
  ``varint``/``varlong`` are zigzag encoded 32/64-bit signed values.
* Classic strings/bytes carry an int16/int32 length, ``-1`` meaning null.
  Compact (flexible-version) strings/bytes/arrays carry ``uvarint(length + 1)``,
  ``0`` meaning null.
* ``uuid`` fields decode to :class:`uuid.UUID`; encoders accept a ``UUID`` or
  any 16-byte buffer (``None`` encodes the all-zero UUID).
* ``bytes`` fields decode to zero-copy :class:`memoryview` slices of the input.

Every ``Reader`` method checks bounds: truncated input, negative or oversized
lengths and malformed varints raise :class:`ProtocolDecodeError` (never
``IndexError``/``struct.error``), and a length is validated against the bytes
remaining *before* anything is allocated.
"""

from __future__ import annotations

import struct
import uuid as _uuid

from .errors import ProtocolDecodeError

__all__ = ["Reader", "Writer", "ZERO_UUID", "zigzag_encode", "zigzag_decode"]

ZERO_UUID = _uuid.UUID(int=0)
"""The all-zero UUID Kafka uses as "no topic id"."""

_INT8 = struct.Struct(">b")
_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")
_UINT16 = struct.Struct(">H")
_UINT32 = struct.Struct(">I")
_FLOAT64 = struct.Struct(">d")
_UUID_PARTS = struct.Struct(">QQ")

_unpack_int8 = _INT8.unpack_from
_unpack_int16 = _INT16.unpack_from
_unpack_int32 = _INT32.unpack_from
_unpack_int64 = _INT64.unpack_from
_unpack_uint16 = _UINT16.unpack_from
_unpack_uint32 = _UINT32.unpack_from
_unpack_float64 = _FLOAT64.unpack_from

_MAX_UVARINT_BYTES = 5
_MAX_UVARLONG_BYTES = 10
_STRING_MAX_LENGTH = 0x7FFF  # Kafka limits strings to Short.MAX_VALUE bytes.


def zigzag_encode(value: int, bits: int = 64) -> int:
    """Map a signed integer to its zigzag (unsigned) form."""
    return ((value << 1) ^ (value >> (bits - 1))) & ((1 << bits) - 1)


def zigzag_decode(value: int) -> int:
    """Map a zigzag encoded unsigned integer back to a signed integer."""
    return (value >> 1) ^ -(value & 1)


class Reader:
    """Sequential reader over a byte buffer, starting at ``pos``.

    ``data`` may be ``bytes``, ``bytearray`` or a ``memoryview``; it is wrapped in
    a byte memoryview without copying.  ``pos`` is public: the offset of the
    next unread byte.
    """

    __slots__ = ("buf", "pos")

    def __init__(self, data, pos: int = 0) -> None:
        buf = data if isinstance(data, memoryview) else memoryview(data)
        if buf.format != "B" or buf.ndim != 1:
            buf = buf.cast("B")
        self.buf = buf
        self.pos = pos

    # -- helpers -----------------------------------------------------------

    def remaining(self) -> int:
        """Number of unread bytes."""
        return len(self.buf) - self.pos

    def _truncated(self, what: str, needed: int) -> ProtocolDecodeError:
        return ProtocolDecodeError(
            f"truncated input reading {what} at offset {self.pos}: "
            f"need {needed} bytes, {len(self.buf) - self.pos} left"
        )

    def _fixed(self, unpack, size: int, what: str):
        pos = self.pos
        try:
            value = unpack(self.buf, pos)[0]
        except struct.error:
            raise self._truncated(what, size) from None
        self.pos = pos + size
        return value

    def _take(self, length: int, what: str) -> memoryview:
        """Return the next ``length`` bytes as a zero-copy slice."""
        if length < 0:
            raise ProtocolDecodeError(f"negative length {length} for {what} at offset {self.pos}")
        pos = self.pos
        end = pos + length
        if end > len(self.buf):
            raise self._truncated(what, length)
        self.pos = end
        return self.buf[pos:end]

    def skip(self, length: int) -> None:
        """Skip ``length`` bytes."""
        self._take(length, "skipped bytes")

    def read_raw(self, length: int) -> memoryview:
        """Return the next ``length`` bytes as a zero-copy memoryview slice."""
        return self._take(length, "raw bytes")

    def sub_reader(self, length: int) -> "Reader":
        """A reader over the next ``length`` bytes (consumed from this reader)."""
        return Reader(self._take(length, "nested section"))

    # -- fixed width ---------------------------------------------------------

    def int8(self) -> int:
        """Read a signed 8-bit integer."""
        return self._fixed(_unpack_int8, 1, "int8")

    def int16(self) -> int:
        """Read a signed big-endian 16-bit integer."""
        return self._fixed(_unpack_int16, 2, "int16")

    def int32(self) -> int:
        """Read a signed big-endian 32-bit integer."""
        return self._fixed(_unpack_int32, 4, "int32")

    def int64(self) -> int:
        """Read a signed big-endian 64-bit integer."""
        return self._fixed(_unpack_int64, 8, "int64")

    def uint16(self) -> int:
        """Read an unsigned big-endian 16-bit integer."""
        return self._fixed(_unpack_uint16, 2, "uint16")

    def uint32(self) -> int:
        """Read an unsigned big-endian 32-bit integer."""
        return self._fixed(_unpack_uint32, 4, "uint32")

    def float64(self) -> float:
        """Read a big-endian IEEE 754 double."""
        return self._fixed(_unpack_float64, 8, "float64")

    def bool(self) -> bool:
        """Read a boolean (one byte, non-zero is true)."""
        return self._fixed(_unpack_int8, 1, "bool") != 0

    def uuid(self) -> _uuid.UUID:
        """Read a 16-byte UUID as :class:`uuid.UUID`."""
        pos = self.pos
        try:
            high, low = _UUID_PARTS.unpack_from(self.buf, pos)
        except struct.error:
            raise self._truncated("uuid", 16) from None
        self.pos = pos + 16
        return _uuid.UUID(int=(high << 64) | low)

    # -- varints -------------------------------------------------------------

    def _unsigned_leb128(self, max_bytes: int, what: str) -> int:
        buf = self.buf
        pos = self.pos
        end = len(buf)
        result = 0
        shift = 0
        for i in range(max_bytes):
            if pos + i >= end:
                raise self._truncated(what, i + 1)
            byte = buf[pos + i]
            result |= (byte & 0x7F) << shift
            if byte < 0x80:
                self.pos = pos + i + 1
                return result
            shift += 7
        raise ProtocolDecodeError(f"{what} at offset {pos} is longer than {max_bytes} bytes")

    def uvarint(self) -> int:
        """Read an unsigned varint (at most 5 bytes, value < 2**32)."""
        buf = self.buf
        pos = self.pos
        if pos < len(buf):
            byte = buf[pos]
            if byte < 0x80:  # one-byte fast path: lengths and counts are usually small
                self.pos = pos + 1
                return byte
        value = self._unsigned_leb128(_MAX_UVARINT_BYTES, "unsigned varint")
        if value > 0xFFFFFFFF:
            raise ProtocolDecodeError(f"unsigned varint at offset {pos} exceeds 32 bits")
        return value

    def varint(self) -> int:
        """Read a zigzag encoded signed 32-bit varint."""
        pos = self.pos
        value = self._unsigned_leb128(_MAX_UVARINT_BYTES, "varint")
        if value > 0xFFFFFFFF:
            raise ProtocolDecodeError(f"varint at offset {pos} exceeds 32 bits")
        return (value >> 1) ^ -(value & 1)

    def varlong(self) -> int:
        """Read a zigzag encoded signed 64-bit varint."""
        pos = self.pos
        value = self._unsigned_leb128(_MAX_UVARLONG_BYTES, "varlong")
        if value > 0xFFFFFFFFFFFFFFFF:
            raise ProtocolDecodeError(f"varlong at offset {pos} exceeds 64 bits")
        return (value >> 1) ^ -(value & 1)

    # -- lengths ---------------------------------------------------------------

    def compact_length(self) -> int:
        """Read a compact length: ``uvarint(n + 1)``; returns ``-1`` for null."""
        return self.uvarint() - 1

    # -- strings ---------------------------------------------------------------

    def _utf8(self, length: int, what: str) -> str:
        raw = self._take(length, what)
        try:
            return str(raw, "utf-8")
        except UnicodeDecodeError as exc:
            raise ProtocolDecodeError(f"{what} is not valid UTF-8: {exc}") from None

    def string(self) -> str:
        """Read a non-null string with an int16 length."""
        length = self.int16()
        if length < 0:
            raise ProtocolDecodeError(f"non-nullable string has length {length} at offset {self.pos - 2}")
        return self._utf8(length, "string")

    def nullable_string(self) -> str | None:
        """Read a string with an int16 length; ``-1`` is null."""
        length = self.int16()
        if length == -1:
            return None
        return self._utf8(length, "nullable string")

    def compact_string(self) -> str:
        """Read a non-null compact string."""
        length = self.uvarint() - 1
        if length < 0:
            raise ProtocolDecodeError(f"non-nullable compact string is null at offset {self.pos - 1}")
        return self._utf8(length, "compact string")

    def compact_nullable_string(self) -> str | None:
        """Read a compact string; length 0 on the wire is null."""
        length = self.uvarint() - 1
        if length < 0:
            return None
        return self._utf8(length, "compact nullable string")

    # -- bytes (zero copy) -----------------------------------------------------

    def bytes(self) -> memoryview:
        """Read non-null bytes with an int32 length, as a memoryview slice."""
        length = self.int32()
        if length < 0:
            raise ProtocolDecodeError(f"non-nullable bytes have length {length} at offset {self.pos - 4}")
        return self._take(length, "bytes")

    def nullable_bytes(self) -> memoryview | None:
        """Read bytes with an int32 length (``-1`` is null), as a memoryview slice."""
        length = self.int32()
        if length == -1:
            return None
        return self._take(length, "nullable bytes")

    def compact_bytes(self) -> memoryview:
        """Read non-null compact bytes as a memoryview slice."""
        length = self.uvarint() - 1
        if length < 0:
            raise ProtocolDecodeError(f"non-nullable compact bytes are null at offset {self.pos - 1}")
        return self._take(length, "compact bytes")

    def compact_nullable_bytes(self) -> memoryview | None:
        """Read compact bytes (length 0 on the wire is null) as a memoryview slice."""
        length = self.uvarint() - 1
        if length < 0:
            return None
        return self._take(length, "compact nullable bytes")

    # -- arrays ----------------------------------------------------------------

    def array_length(self, min_element_size: int = 1) -> int:
        """Read a classic int32 array length; returns ``-1`` for null.

        The length is checked against the remaining bytes assuming each element
        takes at least ``min_element_size`` bytes (1 is assumed when 0 is given).
        """
        length = self.int32()
        if length < -1:
            raise ProtocolDecodeError(f"negative array length {length} at offset {self.pos - 4}")
        if length > 0:
            self._check_count(length, min_element_size)
        return length

    def compact_array_length(self, min_element_size: int = 1) -> int:
        """Read a compact array length ``uvarint(n + 1)``; returns ``-1`` for null."""
        length = self.uvarint() - 1
        if length > 0:
            self._check_count(length, min_element_size)
        return length

    def _check_count(self, count: int, min_element_size: int) -> None:
        needed = count * (min_element_size if min_element_size > 0 else 1)
        if needed > len(self.buf) - self.pos:
            raise ProtocolDecodeError(
                f"array of {count} elements needs at least {needed} bytes at offset {self.pos}, "
                f"only {len(self.buf) - self.pos} left"
            )

    def int32_array_body(self, count: int) -> list[int]:
        """Read ``count`` int32 values in one step (the length was already read)."""
        pos = self.pos
        size = 4 * count
        if pos + size > len(self.buf):
            raise self._truncated("int32 array", size)
        values = list(struct.unpack_from(f">{count}i", self.buf, pos))
        self.pos = pos + size
        return values

    # -- tagged fields -----------------------------------------------------------

    def tagged_fields(self) -> dict[int, memoryview]:
        """Read a tagged-field section, returning ``{tag: raw value bytes}``."""
        count = self.uvarint()
        fields: dict[int, memoryview] = {}
        for _ in range(count):
            tag = self.uvarint()
            size = self.uvarint()
            fields[tag] = self._take(size, f"tagged field {tag}")
        return fields

    def skip_tagged_fields(self) -> None:
        """Read and discard a tagged-field section."""
        count = self.uvarint()
        for _ in range(count):
            self.uvarint()
            self._take(self.uvarint(), "tagged field")


def _uuid_bytes(value) -> bytes:
    if value is None:
        return bytes(16)
    if isinstance(value, _uuid.UUID):
        return value.bytes
    if isinstance(value, (bytes, bytearray, memoryview)) and len(value) == 16:
        return bytes(value)
    raise ValueError(f"a uuid must be uuid.UUID or 16 bytes, got {value!r}")


def _encode_leb128(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


# Small values dominate (lengths, counts, tags): precompute their encodings.
_SMALL_UVARINTS = tuple(bytes((i,)) for i in range(128))


class Writer:
    """Appends Kafka primitives to a growing ``bytearray`` (``writer.buf``)."""

    __slots__ = ("buf",)

    def __init__(self) -> None:
        self.buf = bytearray()

    def getvalue(self) -> bytes:
        """The bytes written so far."""
        return bytes(self.buf)

    def __len__(self) -> int:
        return len(self.buf)

    # -- fixed width ------------------------------------------------------------

    def int8(self, value: int) -> None:
        """Write a signed 8-bit integer."""
        self.buf += _INT8.pack(value)

    def int16(self, value: int) -> None:
        """Write a signed big-endian 16-bit integer."""
        self.buf += _INT16.pack(value)

    def int32(self, value: int) -> None:
        """Write a signed big-endian 32-bit integer."""
        self.buf += _INT32.pack(value)

    def int64(self, value: int) -> None:
        """Write a signed big-endian 64-bit integer."""
        self.buf += _INT64.pack(value)

    def uint16(self, value: int) -> None:
        """Write an unsigned big-endian 16-bit integer."""
        self.buf += _UINT16.pack(value)

    def uint32(self, value: int) -> None:
        """Write an unsigned big-endian 32-bit integer."""
        self.buf += _UINT32.pack(value)

    def float64(self, value: float) -> None:
        """Write a big-endian IEEE 754 double."""
        self.buf += _FLOAT64.pack(value)

    def bool(self, value: bool) -> None:
        """Write a boolean as one byte (0 or 1)."""
        self.buf.append(1 if value else 0)

    def uuid(self, value) -> None:
        """Write a UUID (``uuid.UUID``, 16 bytes, or ``None`` for the zero UUID)."""
        self.buf += _uuid_bytes(value)

    # -- varints ------------------------------------------------------------------

    def uvarint(self, value: int) -> None:
        """Write an unsigned varint (0 <= value < 2**32)."""
        if 0 <= value < 128:
            self.buf += _SMALL_UVARINTS[value]
            return
        if not 0 <= value <= 0xFFFFFFFF:
            raise ValueError(f"unsigned varint out of range: {value}")
        self.buf += _encode_leb128(value)

    def varint(self, value: int) -> None:
        """Write a zigzag encoded signed 32-bit varint."""
        if not -(1 << 31) <= value < (1 << 31):
            raise ValueError(f"varint out of int32 range: {value}")
        self.buf += _encode_leb128(zigzag_encode(value, 32))

    def varlong(self, value: int) -> None:
        """Write a zigzag encoded signed 64-bit varint."""
        if not -(1 << 63) <= value < (1 << 63):
            raise ValueError(f"varlong out of int64 range: {value}")
        self.buf += _encode_leb128(zigzag_encode(value, 64))

    def compact_length(self, length: int) -> None:
        """Write a compact length (``-1`` for null)."""
        self.uvarint(length + 1)

    # -- strings --------------------------------------------------------------------

    @staticmethod
    def _utf8(value: str) -> bytes:
        if not isinstance(value, str):
            raise ValueError(f"expected a string, got {type(value).__name__}")
        raw = value.encode("utf-8")
        if len(raw) > _STRING_MAX_LENGTH:
            raise ValueError(f"string of {len(raw)} bytes exceeds Kafka's limit of {_STRING_MAX_LENGTH}")
        return raw

    def string(self, value: str) -> None:
        """Write a non-null string with an int16 length."""
        if value is None:
            raise ValueError("null written to a non-nullable string")
        raw = self._utf8(value)
        self.buf += _INT16.pack(len(raw))
        self.buf += raw

    def nullable_string(self, value: str | None) -> None:
        """Write a string with an int16 length (``None`` as -1)."""
        if value is None:
            self.buf += b"\xff\xff"
            return
        self.string(value)

    def compact_string(self, value: str) -> None:
        """Write a non-null compact string."""
        if value is None:
            raise ValueError("null written to a non-nullable compact string")
        raw = self._utf8(value)
        self.uvarint(len(raw) + 1)
        self.buf += raw

    def compact_nullable_string(self, value: str | None) -> None:
        """Write a compact string (``None`` as length 0)."""
        if value is None:
            self.buf.append(0)
            return
        self.compact_string(value)

    # -- bytes -----------------------------------------------------------------------

    def bytes(self, value) -> None:
        """Write non-null bytes (any buffer) with an int32 length."""
        if value is None:
            raise ValueError("null written to non-nullable bytes")
        view = memoryview(value)
        self.buf += _INT32.pack(view.nbytes)
        self.buf += view

    def nullable_bytes(self, value) -> None:
        """Write bytes with an int32 length (``None`` as -1)."""
        if value is None:
            self.buf += b"\xff\xff\xff\xff"
            return
        self.bytes(value)

    def compact_bytes(self, value) -> None:
        """Write non-null compact bytes."""
        if value is None:
            raise ValueError("null written to non-nullable compact bytes")
        view = memoryview(value)
        self.uvarint(view.nbytes + 1)
        self.buf += view

    def compact_nullable_bytes(self, value) -> None:
        """Write compact bytes (``None`` as length 0)."""
        if value is None:
            self.buf.append(0)
            return
        self.compact_bytes(value)

    def raw(self, value) -> None:
        """Append a buffer as is."""
        self.buf += value

    # -- arrays and tagged fields ---------------------------------------------------------

    def array_length(self, length: int) -> None:
        """Write a classic int32 array length (``-1`` for null)."""
        self.buf += _INT32.pack(length)

    def compact_array_length(self, length: int) -> None:
        """Write a compact array length (``-1`` for null)."""
        self.uvarint(length + 1)

    def tagged_fields(self, fields: dict[int, bytes] | None = None) -> None:
        """Write a tagged-field section from ``{tag: raw value bytes}`` (sorted by tag)."""
        if not fields:
            self.buf.append(0)
            return
        self.uvarint(len(fields))
        for tag in sorted(fields):
            raw = fields[tag]
            self.uvarint(tag)
            self.uvarint(len(raw))
            self.buf += raw
