"""Exceptions of the schema-registry client.

Each names what was asked (subject, version, schema id), the registry (its URL without user info) and the
registry's own error code and message; none carries a credential. All pickle with their message (Spark ships
exceptions from executors to the driver).
"""

from __future__ import annotations

from spark_kwire.client.errors import ClientError, ConfigError

__all__ = ["RegistryError", "RegistryConfigError", "RegistryUnreachableError", "RegistryAuthError",
           "RegistryNotFoundError", "SubjectNotFoundError", "VersionNotFoundError", "SchemaNotFoundError",
           "InvalidSchemaError", "IncompatibleSchemaError", "RegistryTlsError"]


class RegistryError(ClientError):
    """The schema registry answered with an error, or its answer was not what the API documents.

    ``status`` is the HTTP status, ``error_code`` the registry's code (e.g. 40401), ``url`` the registry's base
    URL that answered (no user info)."""

    def __init__(self, message: str, *, status: int | None = None, error_code: int | None = None,
                 url: str | None = None) -> None:
        self.status = status
        self.error_code = error_code
        self.url = url
        super().__init__(message)


class RegistryConfigError(ConfigError):
    """A ``schema.registry.*`` option is unknown, missing or has a value the client cannot use."""

    def __init__(self, key: str, value=None, accepted: str | None = None, reason: str | None = None, *,
                 show_value: bool = True) -> None:
        self.key = key
        self.value = value if show_value else None
        self.accepted = accepted
        text = (f"invalid value {value!r} for schema registry option {key!r}" if show_value
                else f"schema registry option {key!r}")
        if reason:
            text += f": {reason}"
        if accepted:
            text += f" (accepted: {accepted})"
        ClientError.__init__(self, text)


class RegistryUnreachableError(RegistryError, ConnectionError):
    """No URL of the registry gave an answer (connection refused or closed, timeouts, HTTP 5xx/429) within the
    retry and time budget. ``attempts`` lists (url, what happened) for every attempt. Retriable later."""

    retriable = True

    def __init__(self, message: str, *, attempts: list[tuple[str, str]] | None = None,
                 status: int | None = None, error_code: int | None = None) -> None:
        self.attempts = list(attempts or [])
        super().__init__(message, status=status, error_code=error_code)


class RegistryTlsError(RegistryError):
    """The TLS handshake with the registry failed (untrusted certificate, wrong host name...). Not retried."""


class RegistryAuthError(RegistryError):
    """HTTP 401 (the credentials were refused or missing) or 403 (the principal may not do this); or no token
    could be had from the identity provider. The message names the credentials source, never a secret."""


class RegistryNotFoundError(RegistryError, LookupError):
    """Something asked for does not exist in the registry (HTTP 404)."""


class SubjectNotFoundError(RegistryNotFoundError):
    """Error code 40401: no such subject (or all its versions are soft-deleted)."""

    def __init__(self, message: str, *, subject: str, **kwargs) -> None:
        self.subject = subject
        super().__init__(message, **kwargs)


class VersionNotFoundError(RegistryNotFoundError):
    """Error code 40402: the subject has no such version."""

    def __init__(self, message: str, *, subject: str, version, **kwargs) -> None:
        self.subject = subject
        self.version = version
        super().__init__(message, **kwargs)


class SchemaNotFoundError(RegistryNotFoundError):
    """Error code 40403: no schema with this id (or, for a lookup, not registered under the subject)."""

    def __init__(self, message: str, *, schema_id: int | None = None, subject: str | None = None, **kwargs) -> None:
        self.schema_id = schema_id
        self.subject = subject
        super().__init__(message, **kwargs)


class InvalidSchemaError(RegistryError, ValueError):
    """Error code 42201 (invalid schema or schema type) or 42202 (invalid version)."""


class IncompatibleSchemaError(RegistryError):
    """HTTP 409: the schema breaks the subject's compatibility rule."""
