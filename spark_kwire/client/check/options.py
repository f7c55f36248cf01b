"""The options of a check, read once into :class:`CheckSettings` (picklable; secrets stay masked).

The names are those of a kwire read: ``kafka.<setting>`` for Kafka's client settings (parsed by the client's
settings: unknown names are refused with the closest known one), the topics with Spark's names (``subscribe``,
``subscribePattern``, ``assign``; ``topic`` for the topic a write goes to), ``schema.registry.<key>`` for the schema
registry (the registry client's keys), and the check's own: ``checkThroughput`` (true/false), ``checkStepTimeoutMs``
(the longest any one step may wait, default 10000) and ``checkTimeoutMs`` (the whole run, default 120000). Names
other than the Kafka and registry ones are matched case-insensitively, as Spark passes options.

:func:`read_properties` reads a Java properties file (the format of ``conf/*.properties``: Kafka settings without the
``kafka.`` prefix) into such options.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import re
from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from spark_kwire.client.errors import ConfigError
from spark_kwire.client.registry.config import RegistryConfig
from spark_kwire.client.registry.errors import RegistryConfigError
from spark_kwire.client.settings.config import ClientConfig
from spark_kwire.client.settings.parse import parse_options
from spark_kwire.client.settings.secret import Secret
from spark_kwire.client.settings.tls import Given

__all__ = ["CheckSettings", "TopicSelection", "CheckOptionError", "parse_check_options", "read_properties",
           "properties_as_options", "CHECK_OPTIONS", "DEFAULT_STEP_TIMEOUT_MS", "DEFAULT_RUN_TIMEOUT_MS"]

KAFKA_PREFIX, REGISTRY_PREFIX = "kafka.", "schema.registry."
DEFAULT_STEP_TIMEOUT_MS = 10_000
DEFAULT_RUN_TIMEOUT_MS = 120_000
#: The check's options besides kafka.* and schema.registry.* (lower case -> as documented).
CHECK_OPTIONS = {name.lower(): name for name in (
    "subscribe", "subscribePattern", "assign", "topic", "checkThroughput", "checkStepTimeoutMs", "checkTimeoutMs")}
_ASSIGN_EXAMPLE = '{"orders":[0,1]}'


class CheckOptionError(ConfigError):
    """An option of a check is unknown or has a value the check cannot use; the message names it."""

    def __init__(self, message: str) -> None:
        ValueError.__init__(self, message)
        self.key, self.value, self.accepted = None, None, None
        self.args = (message,)


@dataclass(frozen=True)
class TopicSelection:
    """The topics a check looks at: read ones (``subscribe``, ``assign``, ``subscribePattern``) and written ones."""

    names: tuple[str, ...] = ()  # subscribe, and the topics of assign
    pattern: str | None = None  # subscribePattern
    assignment: tuple[tuple[str, int], ...] = ()  # assign
    written: tuple[str, ...] = ()  # topic

    def __bool__(self) -> bool:
        return bool(self.names or self.pattern or self.written)


@dataclass(frozen=True)
class CheckSettings:
    """What a run checks and how long it may take; build with :func:`parse_check_options`."""

    client: ClientConfig
    topics: TopicSelection = TopicSelection()
    registry: RegistryConfig | None = None
    throughput: bool = False
    step_timeout_ms: int = DEFAULT_STEP_TIMEOUT_MS
    run_timeout_ms: int = DEFAULT_RUN_TIMEOUT_MS
    ignored: tuple[tuple[str, str], ...] = ()  # Kafka settings given that have no effect: (name, why)

    def secret_texts(self) -> tuple[str, ...]:
        """Every secret's clear text (passwords, client secrets, tokens, keys; the password of user:password), for
        scrubbing what a run reports."""
        found: set[str] = set()
        for secret in _secrets(self):
            text = secret.reveal()
            found.add(text)
            user, sep, password = text.partition(":")
            if sep and user and password:
                found.add(password)
        return tuple(sorted((t for t in found if len(t) >= 4), key=len, reverse=True))


def _secrets(value: Any) -> Iterator[Secret]:
    if isinstance(value, Secret):
        yield value
    elif isinstance(value, Given):
        yield from _secrets(value.value)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from _secrets(getattr(value, f.name, None))
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _secrets(item)


def _truth(name: str, value: Any) -> bool:
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise CheckOptionError(f"Option '{name}' must be 'true' or 'false', got {value!r}.")
    return text == "true"


def _millis(name: str, value: Any) -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        number = 0
    if number < 1:
        raise CheckOptionError(f"Option '{name}' must be a whole number of milliseconds >= 1, got {value!r}.")
    return number


def _names(name: str, value: Any) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(t.strip() for t in str(value).split(",") if t.strip()))
    if not names:
        raise CheckOptionError(f"Option '{name}' names no topic; expected e.g. 'orders,payments'.")
    return names


def _pattern(value: Any) -> str:
    try:
        re.compile(str(value))
    except re.error as exc:
        raise CheckOptionError(f"Option 'subscribePattern' is not a regular expression ({exc}): {value!r}.") from None
    return str(value)


def _assignment(value: Any) -> tuple[tuple[str, int], ...]:
    try:
        parsed = json.loads(str(value))
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict) or not parsed:
        raise CheckOptionError(f"Option 'assign' must be a JSON object of topics and partitions, like "
                               f"{_ASSIGN_EXAMPLE}; got {value!r}.")
    out = []
    for topic, partitions in parsed.items():
        if not isinstance(partitions, list) or not all(isinstance(p, int) and not isinstance(p, bool) and p >= 0
                                                       for p in partitions):
            raise CheckOptionError(f"Option 'assign': topic {topic!r} must map to a list of partition numbers, like "
                                   f"{_ASSIGN_EXAMPLE}.")
        out.extend((str(topic), p) for p in partitions)
    return tuple(out)


def _unknown(key: str) -> CheckOptionError:
    known = list(CHECK_OPTIONS.values()) + ["kafka.<setting>", "schema.registry.<key>"]
    close = difflib.get_close_matches(key.lower(), list(CHECK_OPTIONS), n=1, cutoff=0.75)
    hint = f" Did you mean '{CHECK_OPTIONS[close[0]]}'?" if close else ""
    if not close and not key.lower().startswith(KAFKA_PREFIX):
        try:
            parse_options({key: ""})
            hint = f" Did you mean 'kafka.{key}'? (Kafka client settings take the prefix 'kafka.')"
        except ConfigError:
            pass
    return CheckOptionError(f"Unknown option '{key}' of a kwire check.{hint} A check takes: {', '.join(known)}.")


def parse_check_options(options: Mapping[str, Any]) -> CheckSettings:
    """Read a check's options (see the module docstring); raises :class:`CheckOptionError` or the settings'
    :class:`ConfigError` naming what was wrong and what is accepted."""
    kafka: dict[str, Any] = {}
    registry: dict[str, Any] = {}
    own: dict[str, Any] = {}
    for raw_key, value in dict(options or {}).items():
        key = str(raw_key).strip()
        lower = key.lower()
        if value is None:
            continue
        if lower.startswith(KAFKA_PREFIX):
            kafka[key[len(KAFKA_PREFIX):]] = value
        elif lower.startswith(REGISTRY_PREFIX):
            registry[key[len(REGISTRY_PREFIX):]] = value
        elif lower in CHECK_OPTIONS:
            own[lower] = value
        else:
            raise _unknown(key)
    values = parse_options(kafka, prefix=KAFKA_PREFIX)
    client = ClientConfig.from_values(values)
    if not client.bootstrap_servers:
        raise CheckOptionError("Option 'kafka.bootstrap.servers' is required: the brokers to check, as "
                               "host:port[,host:port...].")
    selection = TopicSelection(
        names=_names("subscribe", own["subscribe"]) if "subscribe" in own else (),
        pattern=_pattern(own["subscribepattern"]) if "subscribepattern" in own else None,
        assignment=_assignment(own["assign"]) if "assign" in own else (),
        written=_names("topic", own["topic"]) if "topic" in own else ())
    if selection.assignment:
        selection = dataclasses.replace(selection, names=tuple(dict.fromkeys(
            selection.names + tuple(t for t, _ in selection.assignment))))
    registry_config = None
    if registry:
        try:
            registry_config = RegistryConfig.from_options(registry)
        except RegistryConfigError as exc:
            raise CheckOptionError(f"{exc} (the option '{REGISTRY_PREFIX}{exc.key}').") from None
    step = _millis("checkStepTimeoutMs", own["checksteptimeoutms"]) if "checksteptimeoutms" in own \
        else DEFAULT_STEP_TIMEOUT_MS
    run = _millis("checkTimeoutMs", own["checktimeoutms"]) if "checktimeoutms" in own else DEFAULT_RUN_TIMEOUT_MS
    return CheckSettings(client=client, topics=selection, registry=registry_config,
                         throughput=_truth("checkThroughput", own["checkthroughput"]) if "checkthroughput" in own
                         else False, step_timeout_ms=step, run_timeout_ms=run,
                         ignored=tuple(values.ignored.items()))


# -- Java properties files ------------------------------------------------------------------------------------

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _logical_lines(text: str) -> Iterator[str]:
    """Lines joined where one ends in an odd number of backslashes (Java's continuation), comments dropped."""
    pending = ""
    for raw in text.splitlines():
        line = raw.lstrip() if pending else raw
        if not pending and (not line.strip() or line.lstrip()[:1] in ("#", "!")):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2:
            pending += line[:-1]
            continue
        yield pending + line
        pending = ""
    if pending:
        yield pending


def _unescape(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[i + 2:i + 6]):
                out.append(chr(int(text[i + 2:i + 6], 16)))
                i += 6
                continue
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _split(line: str) -> tuple[str, str]:
    line = line.lstrip()
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == "\\":
            i += 2
            continue
        if ch in "=: \t\f":
            break
        i += 1
    key, rest = line[:i], line[i:].lstrip(" \t\f")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t\f")
    return _unescape(key), _unescape(rest)


def read_properties(path: str) -> dict[str, str]:
    """The settings of a Java properties file, as ``java.util.Properties.load`` reads it (``key=value``,
    ``key: value`` or ``key value``; ``#`` and ``!`` comments; backslash continuations and escapes)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return dict(_split(line) for line in _logical_lines(text))


def properties_as_options(properties: Mapping[str, str]) -> dict[str, str]:
    """A properties file's settings as a check's options: Kafka settings get the ``kafka.`` prefix (as they are
    written for Java clients, without it); ``schema.registry.*``, ``kafka.*`` and the check's own options stay."""
    out = {}
    for key, value in properties.items():
        lower = key.lower()
        if lower.startswith((KAFKA_PREFIX, REGISTRY_PREFIX)) or lower in CHECK_OPTIONS:
            out[key] = value
        else:
            out[KAFKA_PREFIX + key] = value
    return out

