"""Schemas as the registry API describes them: a schema (text, type, references), a reference to another
subject's version, and a registered schema (with its id, subject and version)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Schema", "SchemaReference", "RegisteredSchema", "SCHEMA_TYPES"]

SCHEMA_TYPES = ("AVRO", "PROTOBUF", "JSON")


@dataclass(frozen=True)
class SchemaReference:
    """``name``: how the schema refers to it (an Avro full name, a Protobuf import path, a JSON ``$ref``)."""

    name: str
    subject: str
    version: int

    def to_json(self) -> dict:
        return {"name": self.name, "subject": self.subject, "version": self.version}


@dataclass(frozen=True)
class Schema:
    """A schema's ``text`` and ``schema_type`` (AVRO, PROTOBUF or JSON) with its ``references``; ``metadata`` and
    ``rule_set`` are kept as the registry sent them (kwire does not run data-contract rules)."""

    text: str
    schema_type: str = "AVRO"
    references: tuple[SchemaReference, ...] = ()
    metadata: dict | None = field(default=None, compare=False, hash=False)
    rule_set: dict | None = field(default=None, compare=False, hash=False)

    def __post_init__(self) -> None:
        kind = str(self.schema_type or "AVRO").upper()
        if kind not in SCHEMA_TYPES:
            raise ValueError(f"unknown schema type {self.schema_type!r}; accepted: {', '.join(SCHEMA_TYPES)}")
        object.__setattr__(self, "schema_type", kind)
        object.__setattr__(self, "references", tuple(self.references))

    def to_json(self) -> dict:
        """The request body the registry's register and lookup calls take."""
        out: dict = {"schema": self.text}
        if self.schema_type != "AVRO":
            out["schemaType"] = self.schema_type
        if self.references:
            out["references"] = [r.to_json() for r in self.references]
        if self.metadata is not None:
            out["metadata"] = self.metadata
        if self.rule_set is not None:
            out["ruleSet"] = self.rule_set
        return out

    @classmethod
    def from_json(cls, answer: dict) -> "Schema":
        references = tuple(SchemaReference(str(r["name"]), str(r["subject"]), int(r["version"]))
                           for r in answer.get("references") or ())
        return cls(answer["schema"], answer.get("schemaType") or "AVRO", references, answer.get("metadata"),
                   answer.get("ruleSet"))


@dataclass(frozen=True)
class RegisteredSchema:
    """A schema with the ``schema_id`` the registry gave it; ``subject`` / ``version`` when it was asked for
    under a subject, ``guid`` when the registry has them."""

    schema_id: int
    schema: Schema
    subject: str | None = None
    version: int | None = None
    guid: str | None = None

    @property
    def text(self) -> str:
        return self.schema.text

    @property
    def schema_type(self) -> str:
        return self.schema.schema_type
