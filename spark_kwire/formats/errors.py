"""The exceptions of the format layer: a schema that cannot be used, a value that cannot be decoded or encoded."""

from __future__ import annotations

from ..protocol.errors import KwireError


class FormatError(KwireError):
    """Base of the format layer's errors."""


class SchemaError(FormatError, ValueError):
    """A schema is malformed, or uses something Spark cannot represent (a recursive type, a decimal wider than
    38 digits). ``path`` names where, e.g. ``order.lines[].price``."""

    def __init__(self, reason: str, path: str = "") -> None:
        self.reason = reason
        self.path = path
        super().__init__(f"{path}: {reason}" if path else reason)


class MissingReferenceError(SchemaError):
    """A schema uses another one (a Protobuf import, a JSON Schema ``$ref`` to another document) that was not
    given among its references."""


class ResolutionError(SchemaError):
    """Data written with one schema (the writer's) cannot be read as another (the reader's): ``path`` names the
    field, in the reader's terms when it exists there."""


class TypeMismatchError(SchemaError):
    """An Arrow (Spark) type does not fit an Avro schema for writing: ``path`` names the field, the message
    both types."""


class DecodeError(FormatError):
    """A record could not be decoded (FAILFAST). ``row`` is its index in the batch, ``schema_id`` the writer
    schema id its framing named (-1 when the framing itself was wrong), ``reason`` what was wrong, ``path``
    the field being read."""

    def __init__(self, row: int, schema_id: int, reason: str, path: str = "", errors: int = 1) -> None:
        self.row = row
        self.schema_id = schema_id
        self.reason = reason
        self.path = path
        self.errors = errors
        where = f" in field {path}" if path else ""
        sid = f" (schema id {schema_id})" if schema_id >= 0 else ""
        more = f"; {errors - 1} more record(s) of the batch failed too" if errors > 1 else ""
        super().__init__(f"record {row}{sid}: {reason}{where}{more}")


class EncodeError(FormatError, ValueError):
    """A row could not be encoded (a null where the Avro schema has no null, a string that is not an enum
    symbol, bytes of the wrong size for a fixed): ``row`` and ``path`` say where."""

    def __init__(self, row: int, reason: str, path: str = "", errors: int = 1) -> None:
        self.row = row
        self.reason = reason
        self.path = path
        self.errors = errors
        where = f" in field {path}" if path else ""
        more = f"; {errors - 1} more row(s) of the batch failed too" if errors > 1 else ""
        super().__init__(f"row {row}: {reason}{where}{more}")
