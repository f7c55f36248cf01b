"""Whether data written with one Protobuf message (the writer's) can be read as another (the reader's), by
field number, as protobuf's rules for updating a message type say: int32, uint32, int64, uint64, bool and
enums read one another (a varint, truncated as C++ casts); sint32 and sint64 one another; fixed32 and
sfixed32; fixed64 and sfixed64; string and bytes (valid UTF-8); a message and bytes; messages whose fields
match in turn; a singular field and a repeated one (the last value, or all); a map and its entry's
repeated message. Fields only one side has are fine (skipped, or absent). Anything else is a
:class:`ResolutionError` naming the field and both types (protobuf runtimes would silently drop it).
"""

from __future__ import annotations

from ..errors import ResolutionError
from .model import F, FieldInfo, MessageType

_GROUPS = {
    F.TYPE_INT32: "varint", F.TYPE_UINT32: "varint", F.TYPE_INT64: "varint", F.TYPE_UINT64: "varint",
    F.TYPE_BOOL: "varint", F.TYPE_ENUM: "varint", F.TYPE_SINT32: "zigzag", F.TYPE_SINT64: "zigzag",
    F.TYPE_FIXED32: "fixed32", F.TYPE_SFIXED32: "fixed32", F.TYPE_FIXED64: "fixed64", F.TYPE_SFIXED64: "fixed64",
    F.TYPE_FLOAT: "float", F.TYPE_DOUBLE: "double", F.TYPE_STRING: "bytes", F.TYPE_BYTES: "bytes",
    F.TYPE_MESSAGE: "message", F.TYPE_GROUP: "group",
}


def _fits(writer: FieldInfo, reader: FieldInfo) -> bool:
    w, r = _GROUPS.get(writer.type), _GROUPS.get(reader.type)
    if w == r:
        return True
    return {w, r} == {"bytes", "message"} and writer.type != F.TYPE_STRING and reader.type != F.TYPE_STRING


def check_compatible(writer: MessageType, reader: MessageType, path: str = "") -> None:
    """Raises :class:`ResolutionError` when a field both messages have cannot be read from the writer's bytes."""
    _check(writer, reader, path, set())


def _check(writer: MessageType, reader: MessageType, path: str, seen: set) -> None:
    key = (writer.full_name, reader.full_name)
    if key in seen:
        return
    seen.add(key)
    for r in reader.fields:
        w = writer.field_by_number(r.number)
        if w is None:
            continue
        where = f"{path}.{r.name}" if path else r.name
        if not _fits(w, r):
            raise ResolutionError(f"field number {r.number} was written as {w.type_label} ({w.name}) and cannot be "
                                  f"read as {r.type_label}", where)
        if w.message is not None and r.message is not None:
            _check(w.message, r.message, where, seen)
