"""Secrets in settings: :class:`Secret` holds a password, client secret, token, JAAS line or private key and shows it
only to the code that sends it; :func:`is_sensitive_key` names the options whose values are secrets."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["Secret", "reveal", "is_sensitive_key", "digest"]

_SENSITIVE = re.compile(r"(password|secret|jaas|token|credential|oauthbearer\.config|\.key$|\.key\.pem$|keystore\.key|private)",
                        re.IGNORECASE)
_MASK = b"spark-kwire/secret-mask"


def is_sensitive_key(key: str) -> bool:
    """True for option names whose values must never be shown (passwords, JAAS configs, private keys...)."""
    return bool(_SENSITIVE.search(key))


class Secret:
    """A secret string: ``repr``/``str`` show ``'***'``; ``reveal()`` returns the value.

    Pickles (Spark sends the settings to executors) carry the value XOR-masked, so it does not show as clear
    text in a pickle dump. That is obfuscation, not encryption: protect the pickles like the options.
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        if isinstance(value, Secret):
            value = value.reveal()
        object.__setattr__(self, "_value", str(value))

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "'***'"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return "***"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash((Secret, self._value))

    def __bool__(self) -> bool:
        return bool(self._value)

    def __setattr__(self, name, value):
        raise AttributeError("Secret is immutable")

    def __reduce__(self):
        return (_unmask_secret, (_mask(self._value.encode("utf-8")),))


def reveal(value: Any) -> str | None:
    """The clear text of a :class:`Secret`, ``str(value)`` of anything else, ``None`` for ``None``."""
    if value is None:
        return None
    if isinstance(value, Secret):
        return value.reveal()
    return str(value)


def digest(value: Any) -> str:
    """A SHA-256 hex digest standing for a value in cache keys (a secret's digest, never the secret)."""
    import hashlib

    return hashlib.sha256((reveal(value) or "").encode("utf-8")).hexdigest()


def _mask(data: bytes) -> bytes:
    return bytes(b ^ _MASK[i % len(_MASK)] for i, b in enumerate(data))


def _unmask_secret(masked: bytes) -> Secret:
    return Secret(_mask(masked).decode("utf-8"))
