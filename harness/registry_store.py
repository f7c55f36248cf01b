"""The state of the test schema registry: schemas by global id, subjects and their versions, soft and hard
deletes, compatibility and mode settings, with the registry's documented error codes.

Rules as Confluent's API reference describes them: ids are global (the same schema under any subject gets the same
id), versions count per subject from 1, registering a schema a subject already has returns its id without a new
version, a soft-deleted version is hidden unless ``deleted=true`` is asked and must be soft-deleted before it can
be deleted permanently, and a version other schemas reference cannot be deleted.
"""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import dataclass, field

from harness.registry_schemas import SCHEMA_TYPES, InvalidSchema, ParsedSchema, incompatibilities, parse_schema

__all__ = ["RegistryHttpError", "RegistryStore", "StoredSchema", "SubjectVersion", "COMPATIBILITY_LEVELS", "MODES"]

COMPATIBILITY_LEVELS = ("NONE", "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL",
                        "FULL_TRANSITIVE")
MODES = ("READWRITE", "READONLY", "READONLY_OVERRIDE", "IMPORT")


class RegistryHttpError(Exception):
    """An error answer: HTTP ``status`` with body ``{"error_code": error_code, "message": message}``."""

    def __init__(self, status: int, error_code: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.error_code = error_code
        self.message = message


def subject_not_found(subject: str) -> RegistryHttpError:
    return RegistryHttpError(404, 40401, f"Subject '{subject}' not found.")


def version_not_found(version) -> RegistryHttpError:
    return RegistryHttpError(404, 40402, f"Version {version} not found.")


def schema_not_found(schema_id=None) -> RegistryHttpError:
    return RegistryHttpError(404, 40403, "Schema not found" if schema_id is None else f"Schema {schema_id} not found")


def invalid_schema(message: str) -> RegistryHttpError:
    return RegistryHttpError(422, 42201, message)


@dataclass
class StoredSchema:
    schema_id: int
    guid: str
    parsed: ParsedSchema
    references: list[dict]  # [{"name", "subject", "version"}]
    extra: dict = field(default_factory=dict)  # metadata / ruleSet as registered

    @property
    def schema_type(self) -> str:
        return self.parsed.schema_type

    def body(self, fmt: str | None = None) -> dict:
        """The schema's fields as the API returns them (``schemaType`` only when not AVRO)."""
        out: dict = {}
        if self.schema_type != "AVRO":
            out["schemaType"] = self.schema_type
        if self.references:
            out["references"] = [dict(r) for r in self.references]
        out.update(self.extra)
        text = self.parsed.text
        if fmt == "serialized" and self.parsed.serialized is not None:
            text = self.parsed.serialized
        out["schema"] = text
        return out


@dataclass
class SubjectVersion:
    subject: str
    version: int
    schema_id: int
    deleted: bool = False


def _parse_version(raw) -> int | None:
    """A version from a path or a reference: an int >= 1, or None for "latest" (and -1)."""
    text = str(raw).strip()
    if text == "latest" or text == "-1":
        return None
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= 2**31 - 1:
        raise RegistryHttpError(422, 42202, f"The specified version '{raw}' is not a valid version id. Allowed values "
                                            f"are between [1, 2^31-1] and the string \"latest\"")
    return value


class RegistryStore:
    """Thread-safe; every public method raises :class:`RegistryHttpError` for what the API answers with an error."""

    def __init__(self, compatibility: str = "BACKWARD") -> None:
        self.lock = threading.RLock()
        self.schemas: dict[int, StoredSchema] = {}
        self._ids_by_key: dict[tuple, int] = {}
        self.subjects: dict[str, list[SubjectVersion]] = {}
        self.compatibility = compatibility
        self.subject_compatibility: dict[str, str] = {}
        self.mode = "READWRITE"
        self.subject_mode: dict[str, str] = {}
        self._next_id = 1

    # -- looking things up --------------------------------------------------------------------------------
    def schema(self, schema_id) -> StoredSchema:
        try:
            number = int(schema_id)
        except (TypeError, ValueError):
            raise schema_not_found(schema_id) from None
        with self.lock:
            stored = self.schemas.get(number)
        if stored is None:
            raise schema_not_found(number)
        return stored

    def schema_by_guid(self, guid: str) -> StoredSchema:
        with self.lock:
            for stored in self.schemas.values():
                if stored.guid == guid:
                    return stored
        raise schema_not_found()

    def versions(self, subject: str, *, deleted: bool = False) -> list[SubjectVersion]:
        with self.lock:
            entries = [v for v in self.subjects.get(subject, []) if deleted or not v.deleted]
        if not entries:
            raise subject_not_found(subject)
        return entries

    def version(self, subject: str, raw_version, *, deleted: bool = False) -> SubjectVersion:
        number = _parse_version(raw_version)
        entries = self.versions(subject, deleted=deleted)
        if number is None:
            return entries[-1]
        for entry in entries:
            if entry.version == number:
                return entry
        raise version_not_found(number)

    def subject_names(self, prefix: str = "", *, deleted: bool = False, deleted_only: bool = False) -> list[str]:
        with self.lock:
            out = []
            for name, entries in sorted(self.subjects.items()):
                if not name.startswith(prefix):
                    continue
                live = any(not e.deleted for e in entries)
                if (deleted_only and not live and entries) or (not deleted_only and (live or (deleted and entries))):
                    out.append(name)
            return out

    def usages(self, schema_id: int, *, deleted: bool = False) -> list[SubjectVersion]:
        with self.lock:
            return [e for entries in self.subjects.values() for e in entries
                    if e.schema_id == schema_id and (deleted or not e.deleted)]

    def referenced_by(self, subject: str, raw_version) -> list[int]:
        entry = self.version(subject, raw_version)
        with self.lock:
            return sorted(s.schema_id for s in self.schemas.values()
                          if any(r["subject"] == subject and r["version"] == entry.version for r in s.references)
                          and self.usages(s.schema_id))

    # -- schemas in requests ------------------------------------------------------------------------------
    def _references(self, raw) -> list[dict]:
        if raw is None:
            return []
        if not isinstance(raw, list):
            raise invalid_schema("Invalid schema: 'references' must be a list")
        out = []
        for item in raw:
            if not isinstance(item, dict) or not all(k in item for k in ("name", "subject", "version")):
                raise invalid_schema("Invalid schema: each reference needs name, subject and version")
            try:
                target = self.version(str(item["subject"]), item["version"], deleted=True)
            except RegistryHttpError as exc:
                raise invalid_schema(f"Invalid schema: reference {item['name']!r} to subject {item['subject']!r} "
                                     f"version {item['version']}: {exc.message}") from None
            out.append({"name": str(item["name"]), "subject": target.subject, "version": target.version})
        return out

    def _dependencies(self, references: list[dict]) -> list[tuple[str, ParsedSchema]]:
        """Every schema reachable from ``references``, dependencies first, each once."""
        ordered: list[tuple[str, ParsedSchema]] = []
        seen: set[tuple[str, int]] = set()

        def visit(ref: dict, depth: int) -> None:
            key = (ref["subject"], ref["version"])
            if key in seen:
                return
            if depth > 64:
                raise invalid_schema("Invalid schema: references nest deeper than 64 levels")
            seen.add(key)
            stored = self.schemas[self.version(ref["subject"], ref["version"], deleted=True).schema_id]
            for inner in stored.references:
                visit(inner, depth + 1)
            ordered.append((ref["name"], stored.parsed))

        for ref in references:
            visit(ref, 0)
        return ordered

    def parse_request(self, body) -> tuple[ParsedSchema, list[dict], dict]:
        """(parsed schema, references, metadata/ruleSet) of a register or lookup request body."""
        if not isinstance(body, dict):
            raise RegistryHttpError(400, 400, "the request body must be a JSON object")
        schema_type = str(body.get("schemaType") or "AVRO").upper()
        if schema_type not in SCHEMA_TYPES:
            raise invalid_schema(f"Invalid schema type {schema_type}: accepted are {', '.join(SCHEMA_TYPES)}")
        references = self._references(body.get("references"))
        try:
            parsed = parse_schema(schema_type, body.get("schema"), self._dependencies(references))
        except InvalidSchema as exc:
            raise invalid_schema(str(exc)) from None
        extra = {k: body[k] for k in ("metadata", "ruleSet") if body.get(k) is not None}
        return parsed, references, extra

    @staticmethod
    def _key(parsed: ParsedSchema, references: list[dict], extra: dict) -> tuple:
        refs = tuple((r["name"], r["subject"], r["version"]) for r in references)
        return parsed.schema_type, parsed.identity, refs, json.dumps(extra, sort_keys=True)

    # -- registering --------------------------------------------------------------------------------------
    def effective_compatibility(self, subject: str) -> str:
        with self.lock:
            return self.subject_compatibility.get(subject, self.compatibility)

    def effective_mode(self, subject: str) -> str:
        with self.lock:
            return self.subject_mode.get(subject, self.mode)

    def register(self, subject: str, body) -> StoredSchema:
        """Register the schema of a POST /subjects/{subject}/versions body; returns the stored schema."""
        if not subject or any(ord(c) < 32 for c in subject):
            raise RegistryHttpError(422, 42208, f"The specified subject '{subject}' is not valid.")
        parsed, references, extra = self.parse_request(body)
        key = self._key(parsed, references, extra)
        with self.lock:
            if self.effective_mode(subject) in ("READONLY", "READONLY_OVERRIDE"):
                raise RegistryHttpError(422, 42205, f"Subject {subject} is in read-only mode")
            entries = self.subjects.setdefault(subject, [])
            known = self._ids_by_key.get(key)
            for entry in entries:
                if entry.schema_id == known and not entry.deleted:
                    return self.schemas[known]
            live = [self.schemas[e.schema_id].parsed for e in entries if not e.deleted]
            problems = incompatibilities(self.effective_compatibility(subject), parsed, live)
            if problems:
                if not entries:
                    del self.subjects[subject]
                raise RegistryHttpError(409, 409, f"Schema being registered is incompatible with an earlier schema "
                                                  f"for subject \"{subject}\", details: {problems}")
            if known is None:
                known = self._next_id
                self._next_id += 1
                self.schemas[known] = StoredSchema(known, str(uuid.uuid4()), parsed, references, extra)
                self._ids_by_key[key] = known
            version = max((e.version for e in entries), default=0) + 1
            entries.append(SubjectVersion(subject, version, known))
            return self.schemas[known]

    def lookup(self, subject: str, body, *, deleted: bool = False) -> SubjectVersion:
        """The version of ``subject`` holding the schema of a POST /subjects/{subject} body."""
        parsed, references, extra = self.parse_request(body)
        entries = self.versions(subject, deleted=deleted)
        with self.lock:
            known = self._ids_by_key.get(self._key(parsed, references, extra))
        matches = [e for e in entries if e.schema_id == known]
        if not matches:
            raise schema_not_found()
        return matches[-1]

    # -- deleting -----------------------------------------------------------------------------------------
    def _check_not_referenced(self, entries: list[SubjectVersion]) -> None:
        for entry in entries:
            users = self.referenced_by(entry.subject, entry.version) if not entry.deleted else []
            if users:
                raise RegistryHttpError(422, 42206, f"One or more references exist to the schema "
                                                    f"{{subject={entry.subject},version={entry.version}}}.")

    def delete_subject(self, subject: str, *, permanent: bool = False) -> list[int]:
        with self.lock:
            entries = self.subjects.get(subject)
            if not entries:
                raise subject_not_found(subject)
            live = [e for e in entries if not e.deleted]
            if permanent:
                if live:
                    raise RegistryHttpError(404, 40405, f"Subject '{subject}' was not deleted first before being "
                                                        f"permanently deleted")
                del self.subjects[subject]
                self.subject_compatibility.pop(subject, None)
                self.subject_mode.pop(subject, None)
                self._forget_unused()
                return [e.version for e in entries]
            if not live:
                raise RegistryHttpError(404, 40404, f"Subject '{subject}' was soft deleted.Set permanent=true to "
                                                    f"delete permanently")
            self._check_not_referenced(live)
            for entry in live:
                entry.deleted = True
            return [e.version for e in live]

    def delete_version(self, subject: str, raw_version, *, permanent: bool = False) -> int:
        with self.lock:
            entry = self.version(subject, raw_version, deleted=permanent)
            if permanent:
                if not entry.deleted:
                    raise RegistryHttpError(404, 40407, f"Subject '{subject}' Version {entry.version} was not "
                                                        f"deleted first before being permanently deleted")
                self.subjects[subject].remove(entry)
                if not self.subjects[subject]:
                    del self.subjects[subject]
                self._forget_unused()
                return entry.version
            self._check_not_referenced([entry])
            entry.deleted = True
            return entry.version

    def _forget_unused(self) -> None:
        used = {e.schema_id for entries in self.subjects.values() for e in entries}
        for schema_id in [i for i in self.schemas if i not in used]:
            stored = self.schemas.pop(schema_id)
            self._ids_by_key = {k: v for k, v in self._ids_by_key.items() if v != stored.schema_id}

    # -- settings -----------------------------------------------------------------------------------------
    def set_compatibility(self, subject: str | None, body) -> str:
        level = str((body or {}).get("compatibility") or (body or {}).get("compatibilityLevel") or "").upper()
        if level not in COMPATIBILITY_LEVELS:
            raise RegistryHttpError(422, 42203, "Invalid compatibility level. Valid values are none, backward, "
                                                "forward, full, backward_transitive, forward_transitive, and "
                                                "full_transitive")
        with self.lock:
            if subject is None:
                self.compatibility = level
            else:
                self.subject_compatibility[subject] = level
        return level

    def set_mode(self, subject: str | None, body) -> str:
        mode = str((body or {}).get("mode") or "").upper()
        if mode not in MODES:
            raise RegistryHttpError(422, 42204, "Invalid mode. Valid values are READWRITE, READONLY, "
                                                "READONLY_OVERRIDE, and IMPORT")
        with self.lock:
            if subject is None:
                self.mode = mode
            else:
                self.subject_mode[subject] = mode
        return mode
