"""Reading the options, in two steps, as Kafka's ``ConfigDef.parse`` and ``AbstractConfig`` do.

1. :func:`parse_options` looks at every name once: an honoured setting's value is read by its kind
   (:mod:`.names`, :mod:`.values`), a setting with no effect is noted with its reason, a refused one or an
   unknown one raises (:class:`RefusedSettingError`, :class:`UnknownSettingError` with the closest name). The
   JAAS line is parsed here, once.
2. :func:`config_fields` gives the fields of the :class:`~.config.ClientConfig`: the scalar ones (:data:`FIELDS`),
   the TLS part (:mod:`.tls_options`) and, for SASL protocols, the mechanism's login (:mod:`.sasl_options`).

Callers that check options of their own between the two steps (the Spark layer) call ``parse_options`` and
``ClientConfig.from_values``; everyone else calls ``ClientConfig.from_kafka_options``, which also logs the settings
that have no effect (:func:`warn_ignored`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Mapping

from spark_kwire.client.errors import ConfigError
from spark_kwire.client.settings.names import HONOURED, NO_EFFECT, REFUSED, family, suggest
from spark_kwire.client.settings.sasl_options import sasl_login
from spark_kwire.client.settings.tls_options import tls_settings

__all__ = ["OptionValues", "parse_options", "config_fields", "describe_ignored", "warn_ignored", "FIELDS",
           "UnknownSettingError", "RefusedSettingError"]

log = logging.getLogger(__name__)

_SETTINGS_PAGE = "docs/kafka-client-settings.md"


class UnknownSettingError(ConfigError):
    """A setting no Kafka client knows (a typo, most likely); the message names the closest known one."""

    def __init__(self, key: str, prefix: str = "") -> None:
        ConfigError.__init__(self, key, None)
        kind = family(key)
        close = suggest(key)
        text = f"Unknown Kafka option '{prefix}{key}'" + (f" (unknown {kind} option)" if kind else "") + "."
        if close:
            text += f" Did you mean '{prefix}{close}'?"
        text += (f" kwire takes the settings of Kafka's Java clients (and librdkafka's names of the TLS and SASL "
                 f"ones, and its own kwire.* settings); {_SETTINGS_PAGE} lists them.")
        self.suggestion = close
        self.args = (text,)


class RefusedSettingError(ConfigError):
    """A Kafka client setting whose effect kwire cannot give; the message says why and what to do instead."""

    def __init__(self, key: str, reason: str, prefix: str = "") -> None:
        ConfigError.__init__(self, key, None, reason=reason)
        self.args = (f"Kafka option '{prefix}{key}' is not supported: {reason}.",)


@dataclass(frozen=True)
class OptionValues:
    """What :func:`parse_options` read: typed values of the honoured settings given, and the names given."""
    values: Mapping[str, Any]  # setting -> typed value (settings given empty are left out)
    given: frozenset  # every name given, as written
    ignored: Mapping[str, str] = field(default_factory=dict)  # given settings with no effect -> why
    prefix: str = ""  # how the user spells the names' prefix (Spark: "kafka."), for messages

    def get(self, key: str, default: Any = None) -> Any:
        value = self.values.get(key)
        return default if value is None else value

    def given_with(self, *prefixes: str) -> list[str]:
        """The names given that start with one of ``prefixes``, sorted."""
        return sorted(name for name in self.given if name.startswith(prefixes))

    @property
    def security_protocol(self) -> str:
        return self.get("security.protocol", "PLAINTEXT")

    @property
    def sasl_mechanism(self) -> str:
        return self.get("sasl.mechanism", "GSSAPI")  # Kafka's default


def parse_options(opts: Mapping[str, Any], *, prefix: str = "") -> OptionValues:
    """Step 1: every name classified, every honoured value read by its kind (see the module docstring)."""
    values: dict[str, Any] = {}
    given: set[str] = set()
    ignored: dict[str, str] = {}
    for raw_key, value in dict(opts).items():
        key = str(raw_key).strip()
        if value is None:
            continue
        kind = HONOURED.get(key)
        if kind is not None:
            given.add(key)
            values[key] = kind.parse(key, value)
        elif key in NO_EFFECT:
            given.add(key)
            ignored[key] = NO_EFFECT[key]
        elif key in REFUSED:
            raise RefusedSettingError(key, REFUSED[key], prefix)
        else:
            raise UnknownSettingError(key, prefix)
    return OptionValues(values, frozenset(given), dict(sorted(ignored.items())), prefix)


# The settings that are one field of the ClientConfig each (the others make its TLS part and SASL login).
FIELDS = {
    **{name: name.replace(".", "_") for name in (
        "bootstrap.servers", "client.id", "client.rack", "security.protocol", "sasl.mechanism",
        "socket.connection.setup.timeout.ms", "connections.max.idle.ms", "receive.buffer.bytes", "send.buffer.bytes",
        "metadata.max.age.ms", "request.timeout.ms", "default.api.timeout.ms", "retry.backoff.ms",
        "retry.backoff.max.ms", "retries", "delivery.timeout.ms", "transaction.timeout.ms", "fetch.max.bytes",
        "max.partition.fetch.bytes", "fetch.max.wait.ms", "fetch.min.bytes", "isolation.level", "group.id", "acks",
        "compression.type", "batch.size", "linger.ms", "enable.idempotence", "max.in.flight.requests.per.connection",
        "max.request.size", "buffer.memory")},
    "kwire.max.decompressed.bytes": "max_decompressed_bytes",
}


def config_fields(values: OptionValues) -> dict[str, Any]:
    """Step 2: the fields of the :class:`~.config.ClientConfig` of what step 1 read."""
    fields = {FIELDS[name]: value for name, value in values.values.items() if name in FIELDS}
    tls = tls_settings(values)
    login = None
    if values.security_protocol.startswith("SASL_"):
        login = sasl_login(values, tls, request_timeout_ms=fields.get("request_timeout_ms", 30_000),
                           hosts=tuple(host for host, _ in fields.get("bootstrap_servers", ())))
    return {**fields, "tls": tls, "sasl": login, "ignored": tuple(values.ignored)}


def warn_ignored(values: OptionValues) -> None:
    """Log, once, the settings given that have no effect in kwire."""
    if values.ignored:
        log.warning("%s", describe_ignored(values))


def describe_ignored(values: OptionValues) -> str:
    """The warning naming the settings given that have no effect in kwire, each once with its reason."""
    items = "; ".join(f"'{values.prefix}{name}' ({reason})" for name, reason in values.ignored.items())
    return (f"kwire: these Kafka client settings have no effect in kwire and are ignored: {items}. "
            f"{_SETTINGS_PAGE} says what each setting does in kwire.")
