"""kwire's schema-registry client: schemas by id (cached per process), subjects and versions, register and look up,
references resolved; speaks Confluent's Schema Registry REST API with the standard library only.

    client = RegistryClient({"url": "https://registry:8081", "basic.auth.user.info": "user:password"})
    registered = client.schema_by_id(42)            # RegisteredSchema(schema_id=42, schema=Schema(text, "AVRO"))
    for name, referenced in client.references(registered.schema): ...

A client pickles as its configuration (Spark ships it to executors); what it fetched stays in the process that
fetched it, shared by every client of the same registry and credentials there (see :mod:`.cache`).
"""

from __future__ import annotations

import hashlib
import urllib.parse
from typing import Any, Mapping

from spark_kwire.client.settings.secret import Secret
from spark_kwire.client.registry.cache import process_cache
from spark_kwire.client.registry.config import RegistryConfig
from spark_kwire.client.registry.credentials import credentials_for
from spark_kwire.client.registry.errors import RegistryError
from spark_kwire.client.registry.model import RegisteredSchema, Schema
from spark_kwire.client.registry.transport import RegistryTransport

__all__ = ["RegistryClient"]

_MAX_REFERENCE_DEPTH = 64


def _segment(text: str) -> str:
    return urllib.parse.quote(str(text), safe="")


def _digest(*values) -> str:
    parts = [v.reveal() if isinstance(v, Secret) else "" if v is None else str(v) for v in values]
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()


def _check_version(version) -> str:
    if version == "latest" or version == -1:
        return "latest"
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ValueError(f"invalid schema version {version!r}: a version is an integer >= 1 or 'latest'")
    return str(version)


class RegistryClient:
    """See the module docstring. Thread-safe; build it from the options or from a :class:`RegistryConfig`."""

    def __init__(self, config: RegistryConfig | Mapping[str, Any]) -> None:
        self.config = config if isinstance(config, RegistryConfig) else RegistryConfig.from_options(config)
        self.credentials = credentials_for(self.config)
        self._transport = RegistryTransport(self.config, self.credentials)
        c = self.config
        scope = (c.urls, c.logical_cluster, c.identity_pool_id,
                 _digest(c.basic_source, c.basic_user_info, *c.url_user_infos, c.bearer_token, c.issuer_endpoint,
                         c.client_id, c.client_secret, c.scope))
        self._schemas = process_cache(scope + ("schemas", c.cache_capacity), c.cache_capacity)
        self._latest = process_cache(scope + ("latest", c.cache_capacity, c.cache_latest_ttl_s), c.cache_capacity,
                                     c.cache_latest_ttl_s or 0.0)
        self._wait_s = c.total_timeout_ms / 1000.0 + c.timeout_s

    def __reduce__(self):
        return (RegistryClient, (self.config,))

    def __repr__(self) -> str:
        return f"RegistryClient(urls={list(self.config.urls)!r}, credentials={self.credentials.describe()!r})"

    def _call(self, method: str, path: str, **kwargs) -> Any:
        return self._transport.call(method, path, **kwargs)

    def _registered(self, answer: Any, what: str, **known) -> RegisteredSchema:
        if not isinstance(answer, dict) or not isinstance(answer.get("schema"), str):
            raise RegistryError(f"the schema registry's answer to {what} is not a schema: {str(answer)[:200]!r}")
        try:
            schema = Schema.from_json(answer)
            schema_id = int(answer.get("id", known.get("schema_id")))
        except (KeyError, TypeError, ValueError) as exc:
            raise RegistryError(f"the schema registry's answer to {what} is malformed: {exc}") from None
        return RegisteredSchema(schema_id, schema, answer.get("subject", known.get("subject")),
                                answer.get("version"), answer.get("guid"))

    # -- schemas by id ------------------------------------------------------------------------------------
    def schema_by_id(self, schema_id: int, *, fmt: str | None = None) -> RegisteredSchema:
        """The schema registered with ``schema_id``; ``fmt="serialized"`` asks for a Protobuf schema as its
        base64 ``FileDescriptorProto``. One request per id (and format) per process; later calls are cached."""
        if isinstance(schema_id, bool) or not isinstance(schema_id, int) or schema_id < 0:
            raise ValueError(f"invalid schema id {schema_id!r}: a schema id is an integer >= 0")

        def load() -> RegisteredSchema:
            answer = self._call("GET", f"/schemas/ids/{schema_id}", query={"format": fmt} if fmt else None,
                                context={"schema_id": schema_id})
            return self._registered(answer, f"schema id {schema_id}", schema_id=schema_id)

        return self._schemas.get_or_load(("id", schema_id, fmt), load, wait_s=self._wait_s)

    def schema_type(self, schema_id: int) -> str:
        """AVRO, PROTOBUF or JSON."""
        return self.schema_by_id(schema_id).schema_type

    # -- subjects and versions ----------------------------------------------------------------------------
    def version(self, subject: str, version: int | str = "latest", *, fmt: str | None = None,
                deleted: bool = False) -> RegisteredSchema:
        """A version of ``subject`` (an integer, or ``"latest"``). Given versions are cached per process; the
        latest one only for ``cache.latest.ttl.sec``. ``deleted=True`` also finds soft-deleted versions."""
        shown = _check_version(version)
        query = {"deleted": "true"} if deleted else {}
        if fmt:
            query["format"] = fmt

        def load() -> RegisteredSchema:
            answer = self._call("GET", f"/subjects/{_segment(subject)}/versions/{shown}", query=query or None,
                                context={"subject": subject, "version": version})
            return self._registered(answer, f"subject {subject!r} version {version}", subject=subject)

        if shown == "latest":
            if not self.config.cache_latest_ttl_s:
                return load()
            return self._latest.get_or_load(("latest", subject, fmt, deleted), load, wait_s=self._wait_s)
        return self._schemas.get_or_load(("version", subject, int(shown), fmt, deleted), load, wait_s=self._wait_s)

    def latest_version(self, subject: str, *, fmt: str | None = None) -> RegisteredSchema:
        return self.version(subject, "latest", fmt=fmt)

    def versions(self, subject: str, *, deleted: bool = False) -> list[int]:
        """The version numbers of ``subject``."""
        answer = self._call("GET", f"/subjects/{_segment(subject)}/versions",
                            query={"deleted": "true"} if deleted else None, context={"subject": subject})
        if not isinstance(answer, list):
            raise RegistryError(f"the schema registry's answer to the versions of {subject!r} is not a list")
        return [int(v) for v in answer]

    def subjects(self, *, prefix: str | None = None, deleted: bool = False) -> list[str]:
        query = {}
        if prefix:
            query["subjectPrefix"] = prefix
        if deleted:
            query["deleted"] = "true"
        answer = self._call("GET", "/subjects", query=query or None)
        if not isinstance(answer, list):
            raise RegistryError("the schema registry's answer to the list of subjects is not a list")
        return [str(s) for s in answer]

    # -- writing and looking up ---------------------------------------------------------------------------
    def register(self, subject: str, schema: Schema, *, normalize: bool = False) -> int:
        """Register ``schema`` under ``subject`` (a new version unless the subject has it); returns its id."""
        answer = self._call("POST", f"/subjects/{_segment(subject)}/versions",
                            query={"normalize": "true" if normalize else "false"}, body=schema.to_json(),
                            context={"subject": subject})
        try:
            return int(answer["id"])
        except (KeyError, TypeError, ValueError):
            raise RegistryError(f"the schema registry's answer to registering under {subject!r} has no id: "
                                f"{str(answer)[:200]!r}") from None

    def lookup(self, subject: str, schema: Schema, *, normalize: bool = False,
               deleted: bool = False) -> RegisteredSchema:
        """Id and version of ``schema`` under ``subject``; :class:`SchemaNotFoundError` when it is not there."""
        query = {"normalize": "true" if normalize else "false", "deleted": "true" if deleted else "false"}
        answer = self._call("POST", f"/subjects/{_segment(subject)}", query=query, body=schema.to_json(),
                            context={"subject": subject})
        return self._registered(answer, f"looking up a schema under {subject!r}", subject=subject)

    # -- references ---------------------------------------------------------------------------------------
    def references(self, schema: Schema, *, fmt: str | None = None) -> list[tuple[str, RegisteredSchema]]:
        """Every schema ``schema`` references, directly or through others, as ``(reference name, schema)``,
        dependencies before their dependants and each once (what an Avro parser or a Protobuf pool needs)."""
        ordered: list[tuple[str, RegisteredSchema]] = []
        done: set[tuple[str, int]] = set()

        def visit(current: Schema, path: tuple[tuple[str, int], ...]) -> None:
            if len(path) > _MAX_REFERENCE_DEPTH:
                raise RegistryError(f"schema references nest deeper than {_MAX_REFERENCE_DEPTH} levels")
            for ref in current.references:
                key = (ref.subject, ref.version)
                if key in path:
                    cycle = " -> ".join(f"{s} v{v}" for s, v in (*path[path.index(key):], key))
                    raise RegistryError(f"schema references form a cycle: {cycle}")
                if key in done:
                    continue
                referenced = self.version(ref.subject, ref.version, fmt=fmt, deleted=True)
                visit(referenced.schema, path + (key,))
                done.add(key)
                ordered.append((ref.name, referenced))

        visit(schema, ())
        return ordered

    # -- registry facts -----------------------------------------------------------------------------------
    def schema_types(self) -> list[str]:
        return list(self._call("GET", "/schemas/types") or [])

    def compatibility(self, subject: str | None = None) -> str:
        """The compatibility level of ``subject`` (falling back to the global one), or the global one."""
        if subject is None:
            answer = self._call("GET", "/config")
        else:
            answer = self._call("GET", f"/config/{_segment(subject)}", query={"defaultToGlobal": "true"},
                                context={"subject": subject})
        level = answer.get("compatibilityLevel") or answer.get("compatibility") if isinstance(answer, dict) else None
        if not level:
            raise RegistryError(f"the schema registry's answer about compatibility has no level: {answer!r}")
        return str(level)
