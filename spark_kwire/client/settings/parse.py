"""Reading the options, in two steps, as Kafka's ``ConfigDef.parse`` and ``AbstractConfig`` do.

1. :func:`parse_options` looks at every name once: an honoured setting's value is read by its kind
   (:mod:`.names`, :mod:`.values`), a setting with no effect is noted with its reason, a refused one or an
   unknown one raises (:class:`RefusedSettingError`, :class:`UnknownSettingError` with the closest name). The
   JAAS line is parsed here, once. Then the settings that only make sense together are checked together
   (:class:`ConflictingSettingsError`): SASL settings on a connection that does not use SASL, Kerberos settings
   under another mechanism. Kafka's Java client ignores those; kwire refuses them, so that a missing
   ``security.protocol`` shows when the options are read rather than as a broker closing the connection.
2. :meth:`.config.ClientConfig.from_values` builds the fields of the config from what step 1 read.

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

__all__ = ["OptionValues", "parse_options", "describe_ignored", "warn_ignored", "UnknownSettingError",
           "RefusedSettingError", "ConflictingSettingsError", "SASL_PROTOCOLS"]

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


class ConflictingSettingsError(ConfigError):
    """Settings that contradict each other (a SASL setting on a connection without SASL...); the message names
    both, as the user spells them, and what to change."""

    def __init__(self, key: str, message: str) -> None:
        ConfigError.__init__(self, key, None)
        self.args = (message,)


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
    read = OptionValues(values, frozenset(given), dict(sorted(ignored.items())), prefix)
    check_together(read)
    return read


SASL_PROTOCOLS = ("SASL_PLAINTEXT", "SASL_SSL")


def check_together(values: OptionValues) -> None:
    """Refuse settings the connection would not use: SASL settings when ``security.protocol`` is not a SASL one,
    Kerberos settings (``sasl.kerberos.*``) under another ``sasl.mechanism``."""
    p, protocol = values.prefix, values.security_protocol
    sasl = values.given_with("sasl.")
    if sasl and protocol not in SASL_PROTOCOLS:
        raise ConflictingSettingsError(
            sasl[0],
            f"Option '{p}{sasl[0]}' configures SASL authentication, but '{p}security.protocol' is {protocol}"
            f"{' (the default)' if 'security.protocol' not in values.given else ''}, which does not use SASL: set "
            f"{p}security.protocol to SASL_SSL (SASL over TLS) or SASL_PLAINTEXT, as the brokers' listener "
            f"expects, or remove the {p}sasl.* options.")
    kerberos = values.given_with("sasl.kerberos.")
    if kerberos and values.sasl_mechanism != "GSSAPI":
        raise ConflictingSettingsError(
            kerberos[0],
            f"Option '{p}{kerberos[0]}' applies to Kerberos ({p}sasl.mechanism=GSSAPI), but {p}sasl.mechanism is "
            f"{values.sasl_mechanism}: remove it, or set {p}sasl.mechanism=GSSAPI.")


def warn_ignored(values: OptionValues) -> None:
    """Log, once, the settings given that have no effect in kwire."""
    if values.ignored:
        log.warning("%s", describe_ignored(values))


def describe_ignored(values: OptionValues) -> str:
    """The warning naming the settings given that have no effect in kwire, each once with its reason."""
    items = "; ".join(f"'{values.prefix}{name}' ({reason})" for name, reason in values.ignored.items())
    return (f"kwire: these Kafka client settings have no effect in kwire and are ignored: {items}. "
            f"{_SETTINGS_PAGE} says what each setting does in kwire.")
