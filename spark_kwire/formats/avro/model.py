"""The Avro schema model: one small class per kind of type, built by ``parser.py``.

Named types (records, enums, fixed) are shared objects: a later reference to a name points at the same
object. Logical types are kept only where the Avro library (and so spark-avro) accepts them: a logical type
on the wrong base type, or a decimal whose precision does not fit, is ignored as Java's Avro ignores it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PRIMITIVES = ("null", "boolean", "int", "long", "float", "double", "bytes", "string")


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()
"""A field without a default value (distinct from a default of ``null``)."""


class Schema:
    """Base of every Avro type. ``type`` is the Avro type name ('int', 'record', 'union'...)."""

    type: str = ""
    logical: str | None = None

    @property
    def is_named(self) -> bool:
        return False

    def describe(self) -> str:
        """A short human description, e.g. ``long (timestamp-millis)`` or ``record com.acme.Order``."""
        return self.type


@dataclass(eq=False)
class Primitive(Schema):
    type: str
    logical: str | None = None
    precision: int = 0  # decimal only
    scale: int = 0  # decimal only

    def describe(self) -> str:
        if self.logical == "decimal":
            return f"{self.type} (decimal({self.precision},{self.scale}))"
        return f"{self.type} ({self.logical})" if self.logical else self.type


@dataclass(eq=False)
class Named(Schema):
    fullname: str
    aliases: tuple[str, ...] = ()  # full names

    @property
    def is_named(self) -> bool:
        return True

    @property
    def name(self) -> str:
        """The unqualified name."""
        return self.fullname.rsplit(".", 1)[-1]

    @property
    def namespace(self) -> str:
        return self.fullname.rsplit(".", 1)[0] if "." in self.fullname else ""

    def describe(self) -> str:
        return f"{self.type} {self.fullname}"


@dataclass(eq=False)
class Field:
    name: str
    schema: Schema
    default: Any = NO_DEFAULT  # the JSON value, as written in the schema
    aliases: tuple[str, ...] = ()
    position: int = 0

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT


@dataclass(eq=False)
class Record(Named):
    type: str = "record"
    fields: list[Field] = field(default_factory=list)

    def field_named(self, name: str) -> Field | None:
        for f in self.fields:
            if f.name == name:
                return f
        return None


@dataclass(eq=False)
class Enum(Named):
    type: str = "enum"
    symbols: tuple[str, ...] = ()
    default: str | None = None  # the reader's symbol for writer symbols it does not know


@dataclass(eq=False)
class Fixed(Named):
    type: str = "fixed"
    size: int = 0
    logical: str | None = None
    precision: int = 0
    scale: int = 0

    def describe(self) -> str:
        base = f"fixed {self.fullname} (size {self.size})"
        if self.logical == "decimal":
            return f"{base} decimal({self.precision},{self.scale})"
        return f"{base} {self.logical}" if self.logical else base


@dataclass(eq=False)
class Array(Schema):
    items: Schema
    type: str = "array"

    def describe(self) -> str:
        return f"array<{self.items.describe()}>"


@dataclass(eq=False)
class Map(Schema):
    values: Schema
    type: str = "map"

    def describe(self) -> str:
        return f"map<{self.values.describe()}>"


@dataclass(eq=False)
class Union(Schema):
    branches: list[Schema]
    type: str = "union"

    def describe(self) -> str:
        return "[" + ", ".join(b.describe() for b in self.branches) + "]"

    @property
    def non_null(self) -> list[Schema]:
        """The branches other than ``null``, in order (spark-avro's view of the union)."""
        return [b for b in self.branches if b.type != "null"]

    @property
    def has_null(self) -> bool:
        return any(b.type == "null" for b in self.branches)

    def index_of_null(self) -> int:
        for i, b in enumerate(self.branches):
            if b.type == "null":
                return i
        return -1


def branch_key(schema: Schema) -> str:
    """What makes union branches distinct: the full name of a named type, the type name otherwise."""
    return schema.fullname if isinstance(schema, Named) else schema.type
