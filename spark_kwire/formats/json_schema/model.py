"""JSON Schemas reduced to the types kwire reads and writes: a small tree of :class:`JType` nodes.

``$ref`` is followed (``#``, ``#/definitions/X``, ``#/$defs/X``, any JSON pointer into the same document,
``$id``/``$anchor`` names, and other schemas given as references by name, e.g. a registry's
``{"$ref": "customer.json"}``); a schema that refers to itself (recursion) is refused, as Spark types cannot
be recursive. The reduction (see ``spark_types.py`` for the Spark types):

* ``type`` object with ``properties`` -> OBJECT (``allOf`` of objects merges their properties); object with an
  ``additionalProperties`` schema and no properties -> MAP; array with an ``items`` schema -> ARRAY;
  string (``format`` date, date-time; ``contentEncoding`` base64) -> STRING, DATE, TIMESTAMP, BINARY;
  integer -> INTEGER; number -> NUMBER; boolean; null.
* nullable: ``"type": ["T", "null"]``, ``oneOf``/``anyOf`` of ``{"type": "null"}`` and one other schema,
  ``enum``/``const`` holding null; ``integer`` with ``number`` is NUMBER.
* ``enum``/``const``: the type of their values (strings, integers, numbers, booleans); mixed -> JSON.
* anything else (``{}``/``true``, several types, other ``oneOf``/``anyOf``/``allOf``, tuples, objects without
  properties) -> JSON: the value's JSON text, kept as a string. Validation keywords are ignored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote

from ..errors import MissingReferenceError, SchemaError

OBJECT = "object"
MAP = "map"
ARRAY = "array"
STRING = "string"
DATE = "date"
TIMESTAMP = "timestamp"
BINARY = "binary"
INTEGER = "integer"
NUMBER = "number"
BOOLEAN = "boolean"
NULL = "null"
JSON = "json"
_SCALARS = {"string": STRING, "integer": INTEGER, "number": NUMBER, "boolean": BOOLEAN, "null": NULL}


@dataclass(eq=False)
class JType:
    kind: str
    nullable: bool = False
    properties: list[tuple[str, "JType"]] = field(default_factory=list)  # OBJECT, in order
    required: set[str] = field(default_factory=set)  # OBJECT
    items: "JType | None" = None  # ARRAY items, MAP values
    title: str = ""

    def describe(self) -> str:
        text = {OBJECT: "object", MAP: "object (map)", ARRAY: "array", JSON: "any JSON"}.get(self.kind, self.kind)
        return text + (" or null" if self.nullable and self.kind != NULL else "")


def _loads(schema) -> object:
    if isinstance(schema, (bytes, bytearray)):
        schema = bytes(schema).decode("utf-8")
    if isinstance(schema, str):
        try:
            return json.loads(schema)
        except json.JSONDecodeError as exc:
            raise SchemaError(f"JSON Schema is not valid JSON: {exc}") from None
    for attribute in ("schema", "text"):  # a registry client's RegisteredSchema / Schema
        inner = getattr(schema, attribute, None)
        if inner is not None and not callable(inner):
            return _loads(inner)
    return schema


def _pointer(document, pointer: str, where: str):
    target = document
    for part in [p for p in pointer.split("/") if p != ""]:
        part = unquote(part).replace("~1", "/").replace("~0", "~")
        if isinstance(target, list) and part.isdigit() and int(part) < len(target):
            target = target[int(part)]
        elif isinstance(target, Mapping) and part in target:
            target = target[part]
        else:
            raise SchemaError(f"$ref {where!r} points at nothing")
    return target


class _Reader:
    def __init__(self, root, references: dict[str, object]) -> None:
        self.root = root
        self.documents = dict(references)
        self.anchors: dict[str, tuple[object, object]] = {}
        for doc in [root, *self.documents.values()]:
            self._index(doc, doc)
        self.active: list[int] = []

    def _index(self, node, document) -> None:
        if isinstance(node, Mapping):
            for key in ("$id", "$anchor", "id"):
                value = node.get(key)
                if isinstance(value, str):
                    self.anchors.setdefault(value.lstrip("#"), (node, document))
            for value in node.values():
                self._index(value, document)
        elif isinstance(node, list):
            for value in node:
                self._index(value, document)

    def resolve(self, ref: str, document) -> tuple[object, object]:
        base, _, fragment = ref.partition("#")
        if base:
            target = self.documents.get(base)
            if target is None and base in self.anchors:
                target = self.anchors[base][0]
            if target is None:
                name = base.rsplit("/", 1)[-1]
                target = self.documents.get(name)
            if target is None:
                raise MissingReferenceError(f"$ref {ref!r} names a schema that was not given: pass it among the "
                                            f"references (name -> schema)")
            document = target
        if not fragment:
            return document, document
        if fragment.startswith("/"):
            return _pointer(document, fragment, ref), document
        if fragment in self.anchors:
            return self.anchors[fragment]
        raise SchemaError(f"$ref {ref!r} points at nothing")

    def read(self, node, document, path: str) -> JType:
        if node is True or node == {}:
            return JType(JSON, nullable=True)
        if node is False:
            raise SchemaError("the schema false accepts no value", path)
        if not isinstance(node, Mapping):
            raise SchemaError(f"a schema is an object or a boolean, not {node!r}", path)
        if "$ref" in node:
            target, target_doc = self.resolve(str(node["$ref"]), document)
            if any(t is target for t in self.active):
                raise SchemaError(f"recursive schema through $ref {node['$ref']!r}: Spark types cannot be recursive",
                                  path)
            self.active.append(target)
            try:
                found = self.read(target, target_doc, path)
            finally:
                self.active.pop()
            return found
        return self._plain(node, document, path)

    def _plain(self, node: Mapping, document, path: str) -> JType:
        for keyword in ("oneOf", "anyOf"):
            options = node.get(keyword)
            if isinstance(options, list):
                others = [o for o in options
                          if not (isinstance(o, Mapping) and o.get("type") == "null" and len(o) == 1)]
                if len(others) == 1 and len(others) < len(options):
                    inner = self.read(others[0], document, path)
                    inner.nullable = True
                    return inner
                if len(options) == 1:
                    return self.read(options[0], document, path)
                return JType(JSON, nullable=len(others) < len(options) or any(_allows_null(o) for o in others))
        if isinstance(node.get("allOf"), list):
            return self._all_of(node, document, path)
        if "const" in node or isinstance(node.get("enum"), list):
            return _enum_type(node["enum"] if "enum" in node else [node["const"]])
        kinds = node.get("type")
        if kinds is None:
            if "properties" in node or "additionalProperties" in node:
                kinds = "object"
            elif "items" in node:
                kinds = "array"
            else:
                return JType(JSON, nullable=True)
        names = [kinds] if isinstance(kinds, str) else list(kinds)
        nullable = "null" in names
        names = [n for n in names if n != "null"]
        if not names:
            return JType(NULL, nullable=True)
        if sorted(names) == ["integer", "number"]:
            names = ["number"]
        if len(names) > 1:
            return JType(JSON, nullable=nullable)
        kind = names[0]
        if kind == "object":
            t = self._object(node, document, path)
        elif kind == "array":
            items = node.get("items")
            if isinstance(items, (Mapping, bool)) and "prefixItems" not in node:
                t = JType(ARRAY, items=self.read(items, document, f"{path}[]"))
            else:
                t = JType(JSON)
        elif kind == "string":
            fmt, encoding = node.get("format"), node.get("contentEncoding")
            t = JType(DATE if fmt == "date" else TIMESTAMP if fmt == "date-time" else
                      BINARY if encoding == "base64" else STRING)
        elif kind in _SCALARS:
            t = JType(_SCALARS[kind])
        else:
            raise SchemaError(f"unknown JSON Schema type {kind!r} (accepted: object, array, string, integer, number, "
                              f"boolean, null)", path)
        t.nullable = nullable
        t.title = str(node.get("title", ""))
        return t

    def _object(self, node: Mapping, document, path: str) -> JType:
        properties = node.get("properties")
        extra = node.get("additionalProperties")
        if isinstance(properties, Mapping) and properties:
            required = node.get("required") if isinstance(node.get("required"), list) else []
            t = JType(OBJECT, required={str(r) for r in required})
            for name, sub in properties.items():
                t.properties.append((name, self.read(sub, document, f"{path}.{name}" if path else name)))
            return t
        if isinstance(extra, Mapping) and extra:
            return JType(MAP, items=self.read(extra, document, f"{path}{{}}"))
        return JType(JSON)

    def _all_of(self, node: Mapping, document, path: str) -> JType:
        parts = [self.read(p, document, path) for p in node["allOf"]]
        rest = {k: v for k, v in node.items() if k != "allOf"}
        if rest.get("properties") or rest.get("type"):
            parts.append(self._plain(rest, document, path))
        objects = [p for p in parts if p.kind == OBJECT]
        if len(parts) == 1:
            return parts[0]
        if len(objects) != len(parts):
            return JType(JSON, nullable=all(p.nullable for p in parts))
        merged = JType(OBJECT, nullable=all(p.nullable for p in parts))
        seen: dict[str, int] = {}
        for p in objects:
            merged.required |= p.required
            for name, sub in p.properties:
                if name in seen:
                    merged.properties[seen[name]] = (name, sub)
                else:
                    seen[name] = len(merged.properties)
                    merged.properties.append((name, sub))
        return merged


def _allows_null(node) -> bool:
    if node is True or node == {}:
        return True
    if not isinstance(node, Mapping):
        return False
    kinds = node.get("type")
    return kinds == "null" or (isinstance(kinds, list) and "null" in kinds) or (
        isinstance(node.get("enum"), list) and None in node["enum"])


def _enum_type(values: list) -> JType:
    nullable = any(v is None for v in values)
    values = [v for v in values if v is not None]
    if not values:
        return JType(NULL, nullable=True)
    if all(isinstance(v, str) for v in values):
        return JType(STRING, nullable=nullable)
    if all(isinstance(v, bool) for v in values):
        return JType(BOOLEAN, nullable=nullable)
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return JType(INTEGER, nullable=nullable)
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return JType(NUMBER, nullable=nullable)
    return JType(JSON, nullable=nullable)


def _reference_map(references) -> dict[str, object]:
    if not references:
        return {}
    pairs = references.items() if isinstance(references, Mapping) else references
    out = {}
    for item in pairs:
        if isinstance(item, tuple) and len(item) == 2:
            name, value = item
        elif hasattr(item, "name"):
            name, value = item.name, item
        else:
            raise SchemaError(f"a reference is (name, schema) or a mapping of them; got {item!r}")
        doc = _loads(value)
        out[str(name)] = doc
        if isinstance(doc, Mapping) and isinstance(doc.get("$id"), str):
            out.setdefault(doc["$id"], doc)
    return out


def schema_title(schema) -> str | None:
    """The ``title`` of a schema's root (what Confluent's RecordNameStrategy names a JSON Schema's subject after),
    None without one."""
    document = _loads(schema)
    title = document.get("title") if isinstance(document, Mapping) else None
    return str(title) if title else None


def parse_json_schema(schema, references=()) -> JType:
    """The type tree of ``schema`` (JSON text, a parsed value, or a registry schema) with ``references``
    (name -> schema: the registry's references, what other schemas' ``$ref`` name)."""
    document = _loads(schema)
    reader = _Reader(document, _reference_map(references))
    t = reader.read(document, document, "")
    t.nullable = True  # a whole value can be null (a tombstone)
    return t
