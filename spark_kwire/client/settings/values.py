"""Kinds of setting values, each turning what a user gave (a string, as Spark passes options, or a Python value)
into a typed value, or raising :class:`~spark_kwire.client.errors.ConfigError` that names the option, the value and
what is accepted. :mod:`.names` gives every honoured setting its kind, as Kafka's ``ConfigDef`` gives each a type and
a validator; the accepted values of the choices are here too."""

from __future__ import annotations

from typing import Any

from spark_kwire.client.errors import ConfigError
from spark_kwire.client.settings.jaas import JaasConfig, parse_jaas_config
from spark_kwire.client.settings.secret import Secret

__all__ = ["Kind", "Text", "SecretText", "Int", "Float", "Bool", "Choice", "Acks", "Servers", "Jaas", "as_text", "ACKS",
           "ISOLATION_LEVELS", "COMPRESSION_TYPES", "SECURITY_PROTOCOLS", "SASL_MECHANISMS"]

ACKS = {"all": -1, "-1": -1, "0": 0, "1": 1}
ISOLATION_LEVELS = ("read_uncommitted", "read_committed")
COMPRESSION_TYPES = ("none", "gzip", "snappy", "lz4", "zstd")
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER", "AWS_MSK_IAM", "GSSAPI")


def as_text(value: Any) -> str:
    """The stripped text of a value (a :class:`Secret`'s clear text)."""
    if isinstance(value, Secret):
        return value.reveal().strip()
    return str(value).strip()


class Kind:
    """How one setting's value is read; :meth:`parse` returns the typed value (None: treat as not given)."""

    def parse(self, key: str, value: Any) -> Any:
        raise NotImplementedError


class Text(Kind):
    """A string; empty means not given unless ``empty_ok`` (then it is a value), or refused with ``required``."""

    def __init__(self, *, empty_ok: bool = False, required: bool = False) -> None:
        self.empty_ok, self.required = empty_ok, required

    def parse(self, key: str, value: Any) -> str | None:
        text = as_text(value)
        if not text and self.required:
            raise ConfigError(key, text, reason="it must not be empty")
        return text if text or self.empty_ok else None


class SecretText(Kind):
    """A secret string (password, client secret...): a :class:`Secret`, empty means not given."""

    def parse(self, key: str, value: Any) -> Secret | None:
        text = as_text(value)
        return Secret(text) if text else None


class Int(Kind):
    """An integer within bounds; ``unit`` (milliseconds, bytes...) is said when a value is refused."""

    def __init__(self, minimum: int | None = None, maximum: int | None = None, *, unit: str | None = None,
                 accepted: str | None = None) -> None:
        self.minimum, self.maximum, self.unit, self.accepted = minimum, maximum, unit, accepted

    def _error(self, key: str, value: Any) -> ConfigError:
        if self.accepted:
            return ConfigError(key, value, self.accepted)
        accepted = "an integer"
        if self.minimum is not None:
            accepted += f" >= {self.minimum}"
        if self.maximum is not None:
            accepted += f" <= {self.maximum}" if self.minimum is None else f" and <= {self.maximum}"
        reason = None
        if self.unit:
            what = "a positive number" if self.minimum == 1 else "a number"
            reason = f"it must be {what} of {self.unit}"
        return ConfigError(key, value, accepted, reason=reason)

    def parse(self, key: str, value: Any) -> int:
        if isinstance(value, bool):
            raise self._error(key, value)
        if isinstance(value, int):
            result = value
        else:
            try:
                result = int(as_text(value))
            except ValueError:
                raise self._error(key, value) from None
        if (self.minimum is not None and result < self.minimum) or (self.maximum is not None and result > self.maximum):
            raise self._error(key, value)
        return result


class Float(Kind):
    """A number between ``low`` and ``high`` (``integer``: a whole one)."""

    def __init__(self, low: float, high: float, *, integer: bool = False) -> None:
        self.low, self.high, self.integer = low, high, integer

    def parse(self, key: str, value: Any) -> float | int:
        text = as_text(value)
        try:
            result = int(text) if self.integer else float(text)
        except ValueError:
            raise ConfigError(key, text, f"a number between {self.low} and {self.high}") from None
        if not self.low <= result <= self.high:
            raise ConfigError(key, text, f"a number between {self.low} and {self.high}")
        return result


class Bool(Kind):
    def parse(self, key: str, value: Any) -> bool:
        if isinstance(value, bool):
            return value
        text = as_text(value).lower()
        if text in ("true", "1", "yes"):
            return True
        if text in ("false", "0", "no"):
            return False
        raise ConfigError(key, value, "true, false")


class Choice(Kind):
    """One of ``accepted`` (compared lower-case, or upper-case with ``upper``)."""

    def __init__(self, *accepted: str, upper: bool = False) -> None:
        self.accepted, self.upper = accepted, upper

    def parse(self, key: str, value: Any) -> str:
        text = as_text(value)
        norm = text.upper() if self.upper else text.lower()
        if norm not in self.accepted:
            raise ConfigError(key, value, ", ".join(self.accepted))
        return norm


class Acks(Kind):
    def parse(self, key: str, value: Any) -> int:
        text = as_text(value).lower()
        if text not in ACKS:
            raise ConfigError(key, value, "all, -1, 0, 1")
        return ACKS[text]


class Servers(Kind):
    """``host:port,host:port`` (also ``PLAINTEXT://host:port`` and ``[ipv6]:port``) or a list of them."""

    def parse(self, key: str, value: Any) -> tuple[tuple[str, int], ...]:
        items = [str(v) for v in value] if isinstance(value, (list, tuple)) else as_text(value).split(",")
        servers = []
        for item in items:
            item = item.strip()
            if not item:
                continue
            if "://" in item:  # tolerate PLAINTEXT://host:port
                item = item.split("://", 1)[1]
            if item.startswith("["):  # [ipv6]:port
                host, _, rest = item[1:].partition("]")
                port_text = rest.lstrip(":")
            else:
                host, sep, port_text = item.rpartition(":")
                if not sep:
                    raise ConfigError(key, value, "a comma-separated list of host:port")
            try:
                port = int(port_text)
            except ValueError:
                raise ConfigError(key, value, "a comma-separated list of host:port") from None
            if not host or not (0 < port < 65536):
                raise ConfigError(key, value, "a comma-separated list of host:port")
            servers.append((host, port))
        return tuple(servers)


class Jaas(Kind):
    """Kafka's ``sasl.jaas.config`` line, parsed (:mod:`.jaas`); an empty one means not given."""

    def parse(self, key: str, value: Any) -> JaasConfig | None:
        return parse_jaas_config(value) if as_text(value) else None
