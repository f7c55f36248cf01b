"""Parsing Avro schemas (JSON text or the decoded JSON value) into the model of ``model.py``.

Follows the Avro specification: named types with namespaces (inherited from the enclosing named type,
overridden by a ``namespace`` attribute or a dotted name), references to names defined earlier, aliases,
field defaults (checked against their type, as Java's parser does), logical types kept only where valid.
A type that refers to itself (directly or through other types) is refused: Spark has no recursive types.
``references`` (schema texts) define named types that the schema may use, as a Confluent schema
registry's schema references do.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Iterable

from ..errors import SchemaError
from .defaults import encode_default
from .model import (NO_DEFAULT, PRIMITIVES, Array, Enum, Field, Fixed, Map, Named, Primitive, Record, Schema,
                    Union, branch_key)

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_LONG_LOGICAL = ("time-micros", "timestamp-millis", "timestamp-micros", "timestamp-nanos",
                 "local-timestamp-millis", "local-timestamp-micros", "local-timestamp-nanos")
_INT_LOGICAL = ("date", "time-millis")
MAX_SPARK_DECIMAL_PRECISION = 38


def parse_schema(schema: str | dict | list, references: Iterable[str | dict | list] = ()) -> Schema:
    """The schema, parsed; ``schema`` is JSON text or its decoded value. Raises :class:`SchemaError` naming
    the path of what is wrong."""
    names: dict[str, Named] = {}
    for i, ref in enumerate(references):
        _Parser(names, f"reference {i}").parse(_json(ref, f"reference {i}"), "", "")
    return _Parser(names, "").parse(_json(schema, "schema"), "", "")


def _json(schema, what: str):
    if isinstance(schema, (bytes, bytearray)):
        schema = schema.decode("utf-8")
    if isinstance(schema, str):
        try:
            return json.loads(schema)
        except json.JSONDecodeError as exc:
            # a bare type name is JSON too only when quoted; accept "string" and string alike
            if _NAME.match(schema.strip()) or "." in schema.strip():
                return schema.strip()
            raise SchemaError(f"{what} is not valid JSON ({exc})") from None
    if isinstance(schema, (dict, list)):
        return schema
    raise SchemaError(f"{what}: expected Avro schema JSON (a string, object or array), got {type(schema).__name__}")


def _check_name(name: Any, path: str, what: str = "name") -> str:
    if not isinstance(name, str) or not name:
        raise SchemaError(f"{what} must be a non-empty string, got {name!r}", path)
    for part in name.split("."):
        if not _NAME.match(part):
            raise SchemaError(f"invalid {what} {name!r}: each part must match [A-Za-z_][A-Za-z0-9_]*", path)
    return name


def _full_name(name: str, namespace: str) -> str:
    if "." in name:
        return name
    return f"{namespace}.{name}" if namespace else name


class _Parser:
    def __init__(self, names: dict[str, Named], origin: str) -> None:
        self.names = names
        self.defining: list[str] = []  # full names of the named types being defined, outermost first
        self.origin = origin

    def _path(self, path: str) -> str:
        return f"{self.origin}: {path}" if self.origin and path else (path or self.origin)

    def fail(self, reason: str, path: str):
        raise SchemaError(reason, self._path(path))

    def parse(self, obj: Any, namespace: str, path: str) -> Schema:
        if isinstance(obj, str):
            return self._reference(obj, namespace, path)
        if isinstance(obj, list):
            return self._union(obj, namespace, path)
        if not isinstance(obj, dict):
            self.fail(f"expected a type name, an object or a union array, got {obj!r}", path)
        kind = obj.get("type")
        if isinstance(kind, (dict, list)):  # {"type": {...}} wraps a type: what Java accepts too
            return self.parse(kind, namespace, path)
        if not isinstance(kind, str):
            self.fail(f"missing or invalid \"type\" attribute in {json.dumps(obj)[:200]}", path)
        if kind in PRIMITIVES:
            return self._primitive(kind, obj)
        if kind in ("record", "error"):
            return self._record(obj, namespace, path)
        if kind == "enum":
            return self._enum(obj, namespace, path)
        if kind == "fixed":
            return self._fixed(obj, namespace, path)
        if kind == "array":
            if "items" not in obj:
                self.fail("array without \"items\"", path)
            return Array(self.parse(obj["items"], namespace, f"{path}[]"))
        if kind == "map":
            if "values" not in obj:
                self.fail("map without \"values\"", path)
            return Map(self.parse(obj["values"], namespace, f"{path}{{}}"))
        return self._reference(kind, namespace, path)

    def _reference(self, name: str, namespace: str, path: str) -> Schema:
        if name in PRIMITIVES:
            return Primitive(name)
        candidates = [_full_name(name, namespace)] if "." in name or not namespace else [f"{namespace}.{name}", name]
        for full in candidates:
            if full in self.defining:
                self.fail(f"recursive type: {full} refers to itself; Spark (and so spark-kwire) cannot represent "
                          f"recursive Avro types", path)
            if full in self.names:
                return self.names[full]
        self.fail(f"unknown type {name!r} (named types must be defined before they are used"
                  f"{'; looked for ' + ' and '.join(candidates) if len(candidates) > 1 else ''})", path)

    def _primitive(self, kind: str, obj: dict) -> Primitive:
        logical = obj.get("logicalType")
        if not isinstance(logical, str):
            return Primitive(kind)
        if logical == "decimal" and kind == "bytes":
            precision, scale = _decimal_params(obj, None)
            if precision:
                return Primitive(kind, "decimal", precision, scale)
            return Primitive(kind)
        if (kind == "int" and logical in _INT_LOGICAL) or (kind == "long" and logical in _LONG_LOGICAL) or \
                (kind == "string" and logical == "uuid"):
            return Primitive(kind, logical)
        return Primitive(kind)  # unknown or misplaced logical types are ignored, as Avro does

    def _named(self, obj: dict, namespace: str, path: str) -> tuple[str, str, tuple[str, ...]]:
        name = _check_name(obj.get("name"), self._path(path), f"{obj.get('type')} name")
        explicit = obj.get("namespace")
        if explicit is not None and not isinstance(explicit, str):
            self.fail(f"namespace must be a string, got {explicit!r}", path)
        if explicit:
            _check_name(explicit, self._path(path), "namespace")
        own_namespace = explicit if explicit is not None else namespace
        full = _full_name(name, own_namespace)
        if full in PRIMITIVES:
            self.fail(f"a named type cannot be called {full!r}", path)
        if full in self.names or full in self.defining:
            self.fail(f"type {full} is defined twice", path)
        space = full.rsplit(".", 1)[0] if "." in full else ""
        aliases = obj.get("aliases") or []
        if not isinstance(aliases, list):
            self.fail(f"aliases of {full} must be an array of names", path)
        return full, space, tuple(_full_name(_check_name(a, self._path(path), "alias"), space) for a in aliases)

    def _record(self, obj: dict, namespace: str, path: str) -> Record:
        full, space, aliases = self._named(obj, namespace, path)
        record = Record(full, aliases)
        fields = obj.get("fields")
        if not isinstance(fields, list):
            self.fail(f"record {full} needs a \"fields\" array", path)
        self.defining.append(full)
        seen = set()
        for position, f in enumerate(fields):
            if not isinstance(f, dict):
                self.fail(f"field {position} of record {full} is not an object", path)
            fname = _check_name(f.get("name"), self._path(path), "field name")
            fpath = f"{path}.{fname}" if path else fname
            if fname in seen:
                self.fail(f"record {full} has two fields named {fname!r}", path)
            seen.add(fname)
            if "type" not in f:
                self.fail("field without \"type\"", fpath)
            fschema = self.parse(f["type"], space, fpath)
            faliases = f.get("aliases") or []
            if not isinstance(faliases, list) or not all(isinstance(a, str) for a in faliases):
                self.fail("field aliases must be an array of names", fpath)
            default = f["default"] if "default" in f else NO_DEFAULT
            if default is not NO_DEFAULT:
                try:
                    encode_default(fschema, default)
                except SchemaError as exc:
                    self.fail(f"invalid default {json.dumps(default)[:100]}: {exc.reason}", fpath)
            record.fields.append(Field(fname, fschema, default, tuple(faliases), position))
        self.defining.pop()
        self.names[full] = record
        return record

    def _enum(self, obj: dict, namespace: str, path: str) -> Enum:
        full, _, aliases = self._named(obj, namespace, path)
        symbols = obj.get("symbols")
        if not isinstance(symbols, list) or not all(isinstance(s, str) for s in symbols):
            self.fail(f"enum {full} needs a \"symbols\" array of strings", path)
        for s in symbols:
            _check_name(s, self._path(path), f"symbol of enum {full}")
        if len(set(symbols)) != len(symbols):
            self.fail(f"enum {full} lists a symbol twice", path)
        default = obj.get("default")
        if default is not None and default not in symbols:
            self.fail(f"the default {default!r} of enum {full} is not one of its symbols", path)
        enum = Enum(full, aliases, symbols=tuple(symbols), default=default)
        self.names[full] = enum
        return enum

    def _fixed(self, obj: dict, namespace: str, path: str) -> Fixed:
        full, _, aliases = self._named(obj, namespace, path)
        size = obj.get("size")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            self.fail(f"fixed {full} needs a non-negative integer \"size\", got {size!r}", path)
        fixed = Fixed(full, aliases, size=size)
        logical = obj.get("logicalType")
        if logical == "decimal":
            precision, scale = _decimal_params(obj, size)
            if precision:
                fixed.logical, fixed.precision, fixed.scale = "decimal", precision, scale
        elif logical == "uuid" and size == 16 or logical == "duration" and size == 12:
            fixed.logical = logical
        self.names[full] = fixed
        return fixed

    def _union(self, branches: list, namespace: str, path: str) -> Union:
        parsed = []
        seen = set()
        for i, b in enumerate(branches):
            schema = self.parse(b, namespace, f"{path}<{i}>")
            if isinstance(schema, Union):
                self.fail("a union cannot hold another union directly", path)
            key = branch_key(schema)
            if key in seen:
                self.fail(f"the union lists {key} twice", path)
            seen.add(key)
            parsed.append(schema)
        return Union(parsed)


def _decimal_params(obj: dict, fixed_size: int | None) -> tuple[int, int]:
    """(precision, scale) of a valid decimal, (0, 0) when the Avro library would ignore the logical type."""
    precision, scale = obj.get("precision", 0), obj.get("scale", 0)
    if not _is_int(precision) or not _is_int(scale) or precision <= 0 or scale < 0 or scale > precision:
        return 0, 0
    if fixed_size is not None and precision > max_decimal_precision(fixed_size):
        return 0, 0
    return precision, scale


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def max_decimal_precision(size: int) -> int:
    """The most decimal digits a ``fixed`` of ``size`` bytes holds (Avro's rule)."""
    if size <= 0:
        return 0
    return int(math.floor(math.log10(2) * (8 * size - 1)))
