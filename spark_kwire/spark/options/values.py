"""The parsers of option values: each reads one option's raw value (as Spark passes it, a string) into a typed
value, or raises :class:`~spark_kwire.spark.errors.KwireOptionError` naming the option as the user spells it, the
value and what is accepted. The table (:mod:`.names`) gives every option its parser; rules that read several
options together (a subscription, where a read starts, the typed sides) build on these.

A parser is called as ``parser(name, raw)`` with the option's documented name; so are the factories' results.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from typing import Any, Callable

from spark_kwire.spark.errors import KwireOptionError

__all__ = ["Parser", "boolean", "positive_int", "non_negative_int", "duration_ms", "parse_duration_ms", "text",
           "non_empty", "names_of", "parse_names", "pattern", "parse_pattern", "json_object", "partition_map",
           "assignment", "timestamp_ms", "partition_timestamps", "offsets_spec", "choice", "payload_format_name",
           "schema_version", "subject_strategy", "schema_text", "read_mode", "evolution_mode", "schema_location",
           "delivery_guarantee", "token_mechanism", "metadata_table", "metadata_tables", "check_tasks", "CHECK_TABLE",
           "EARLIEST", "LATEST", "format_names", "typed_format_names", "FAILFAST", "PERMISSIVE", "EVOLUTION_MODES",
           "GUARANTEES", "AT_LEAST_ONCE", "EXACTLY_ONCE", "TOKEN_MECHANISMS"]

Parser = Callable[[str, Any], Any]

EARLIEST, LATEST = -2, -1  # the offsets that stand for the earliest and the latest, as in Spark's JSON offsets
FAILFAST, PERMISSIVE = "FAILFAST", "PERMISSIVE"
EVOLUTION_MODES = ("addNewColumns", "rescue", "failOnNewColumns", "none")  # Auto Loader's schemaEvolutionMode
AT_LEAST_ONCE, EXACTLY_ONCE = "at-least-once", "exactly-once"
GUARANTEES = (AT_LEAST_ONCE, EXACTLY_ONCE)
TOKEN_MECHANISMS = ("SCRAM-SHA-512", "SCRAM-SHA-256")


def _refuse(message: str) -> KwireOptionError:
    return KwireOptionError(message)


# -- scalars ----------------------------------------------------------------------------------------------------

def boolean(name: str, raw: Any) -> bool:
    value = str(raw).strip().lower()
    if value not in ("true", "false"):
        raise _refuse(f"Option '{name}' must be 'true' or 'false', got {raw!r}.")
    return value == "true"


def _whole_number(name: str, raw: Any, lowest: int, accepted: str) -> int:
    try:
        value = int(str(raw).strip())
    except ValueError:
        value = lowest - 1
    if value < lowest:
        raise _refuse(f"Option '{name}' must be {accepted}, got {raw!r}.")
    return value


def positive_int(name: str, raw: Any) -> int:
    return _whole_number(name, raw, 1, "a positive integer")


def non_negative_int(name: str, raw: Any) -> int:
    return _whole_number(name, raw, 0, "a whole number >= 0")


_DURATION = re.compile(r"^\s*(\d+)\s*(ms|s|m|h|d|milliseconds?|seconds?|minutes?|hours?|days?)?\s*$", re.I)
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


def parse_duration_ms(raw: Any, name: str) -> int:
    """'15m', '30s', '500ms', '1h' or a bare number of milliseconds."""
    match = _DURATION.match(str(raw))
    if not match:
        raise _refuse(f"Option '{name}' must be a duration like '500ms', '30s', '15m' or '1h', got {raw!r}.")
    number, unit = int(match.group(1)), (match.group(2) or "ms").lower()
    key = {"millisecond": "ms", "milliseconds": "ms", "second": "s", "seconds": "s", "minute": "m", "minutes": "m",
           "hour": "h", "hours": "h", "day": "d", "days": "d"}.get(unit, unit)
    return number * _UNIT_MS[key]


def duration_ms(name: str, raw: Any) -> int:
    return parse_duration_ms(raw, name)


def text(name: str, raw: Any) -> Any:
    """The value as given (read further where it is used, e.g. by the format layer or the registry client)."""
    return raw


def non_empty(accepted: str, *, strip: bool = True) -> Parser:
    """Text that must not be blank; ``accepted`` ends the refusal ("must name a consumer group")."""
    def parse(name: str, raw: Any) -> str:
        if not str(raw).strip():
            raise _refuse(f"Option '{name}' {accepted}.")
        return str(raw).strip() if strip else str(raw)
    return parse


def choice(values: tuple[str, ...], accepted: str, meaning: str = "") -> Parser:
    """One of ``values`` (given in any case, stripped); ``accepted`` says them in the refusal, and ``meaning``, when
    given, what each does."""
    def parse(name: str, raw: Any) -> str:
        value = str(raw).strip().lower()
        if value not in values:
            raise _refuse(f"Option '{name}' must be {accepted}, got {value!r}" + (f": {meaning}." if meaning else "."))
        return value
    return parse


STREAM_READ_MODES = ("auto", "tasks", "driver")  # streamReadMode (spark/reading/stream_mode.py decides what auto does)


# -- names, patterns, JSON ----------------------------------------------------------------------------------------

def parse_names(raw: Any, option: str, what: str) -> tuple[str, ...]:
    """Comma-separated names (each once, in order), at least one."""
    names = tuple(dict.fromkeys(n.strip() for n in str(raw).split(",") if n.strip()))
    if not names:
        raise _refuse(f"Option '{option}' must name at least one {what}, e.g. '{what}1,{what}2'.")
    return names


def names_of(what: str) -> Parser:
    """Comma-separated names of topics or groups (``what``)."""
    return lambda name, raw: parse_names(raw, name, what)


def parse_pattern(raw: Any, option: str) -> str:
    """A non-empty, valid regular expression."""
    if not str(raw).strip():
        raise _refuse(f"Option '{option}' must be a non-empty regular expression, e.g. 'events-.*'.")
    try:
        re.compile(raw)
    except re.error as e:
        raise _refuse(f"Option '{option}' is not a valid regular expression ({e}): {raw!r}.") from None
    return raw


def pattern(name: str, raw: Any) -> str:
    return parse_pattern(raw, name)


def json_object(name: str, raw: Any, example: str) -> dict:
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as e:
        raise _refuse(f"Option '{name}' is not valid JSON ({e.msg}); expected e.g. {example}, got {raw!r}.") from None
    if not isinstance(value, dict) or not value:
        raise _refuse(f"Option '{name}' must be a non-empty JSON object like {example}, got {raw!r}.")
    return value


def partition_map(name: str, raw: Any, example: str) -> dict[tuple[str, int], int]:
    """{"topic": {"0": 12, "1": -2}} as {(topic, 0): 12, ...}."""
    result = {}
    for topic, partitions in json_object(name, raw, example).items():
        if not isinstance(partitions, dict):
            raise _refuse(f"Option '{name}': the value for topic {topic!r} must be an object like {example}.")
        for partition, number in partitions.items():
            try:
                p = int(partition)
            except ValueError:
                raise _refuse(f"Option '{name}': partition {partition!r} of topic {topic!r} is not an "
                              f"integer.") from None
            if not isinstance(number, int) or isinstance(number, bool):
                raise _refuse(f"Option '{name}': the value for {topic}-{p} must be an integer, got {number!r}.")
            result[(topic, p)] = number
    return result


def assignment(name: str, raw: Any) -> tuple[tuple[str, int], ...]:
    """``assign``: {"topic": [0, 1]} as ((topic, 0), (topic, 1))."""
    example = '{"topicA":[0,1],"topicB":[2,4]}'
    pairs = []
    for topic, partitions in json_object(name, raw, example).items():
        if not isinstance(partitions, list) or not all(isinstance(p, int) and not isinstance(p, bool)
                                                       for p in partitions):
            raise _refuse(f"Option '{name}': topic {topic!r} must map to a list of partition numbers, like {example}.")
        pairs.extend((topic, p) for p in partitions)
    if not pairs:
        raise _refuse(f"Option '{name}' names no partitions; expected e.g. {example}.")
    return tuple(pairs)


# -- where a read starts and ends ----------------------------------------------------------------------------------

def timestamp_ms(name: str, raw: Any) -> int:
    """startingTimestamp / endingTimestamp: milliseconds since the epoch."""
    try:
        ts = int(str(raw).strip())
    except ValueError:
        ts = -1
    if ts < 0:
        raise _refuse(f"Option '{name}' must be a timestamp in milliseconds since the epoch (>= 0), got {raw!r}.")
    return ts


def partition_timestamps(name: str, raw: Any) -> dict[tuple[str, int], int]:
    """startingOffsetsByTimestamp / endingOffsetsByTimestamp: a timestamp per partition."""
    mapping = partition_map(name, raw, '{"topicA":{"0":1700000000000,"1":1700000000000}}')
    for (topic, p), ts in mapping.items():
        if ts < 0:
            raise _refuse(f"Option '{name}': the timestamp for {topic}-{p} must be >= 0, got {ts}.")
    return mapping


def offsets_spec(*, group: bool) -> Parser:
    """startingOffsets / endingOffsets: 'earliest', 'latest', ('group' for a start) or offsets per partition as
    JSON (-2 earliest, -1 latest): the word, or the {(topic, partition): offset} map."""
    def parse(name: str, raw: Any) -> str | dict:
        given = str(raw).strip()
        lowered = given.lower()
        if (group and lowered == "group") or lowered in ("earliest", "latest"):
            return lowered
        if not given.startswith("{"):
            raise _refuse(f"Option '{name}' must be 'earliest', 'latest' or JSON like "
                          f"'{{\"topicA\":{{\"0\":23,\"1\":-1}}}}', got {given!r}.")
        mapping = partition_map(name, raw, '{"topicA":{"0":23,"1":-1},"topicB":{"0":-2}}')
        for (topic, p), offset in mapping.items():
            if offset < EARLIEST:
                raise _refuse(f"Option '{name}': offset {offset} for {topic}-{p} is invalid; use an offset >= 0, "
                              "-2 for earliest or -1 for latest.")
        return mapping
    return parse


# -- typed keys and values ------------------------------------------------------------------------------------------

def typed_format_names() -> tuple[str, ...]:
    """The payload formats of the format registry (``formats.payload``; imported on first use, not by every task)."""
    from spark_kwire.formats.payload import FORMATS

    return FORMATS


def format_names() -> tuple[str, ...]:
    """What valueFormat / keyFormat accept: raw bytes or a format of the registry."""
    return ("binary", *typed_format_names())


def payload_format_name(name: str, raw: Any) -> str:
    value = str(raw).strip().lower().replace("_", "-")
    if value == "jsonschema":
        value = "json-schema"
    if value not in format_names():
        raise _refuse(f"Option '{name}' must be one of {', '.join(format_names())} (default binary; json is plain JSON "
                      f"text, json-schema Confluent's framed JSON Schema), got {raw!r}.")
    return value


def schema_version(name: str, raw: Any) -> int | None:
    """A registered version number, or None for 'latest'."""
    if str(raw).strip().lower() == "latest":
        return None
    try:
        version = int(str(raw).strip())
    except ValueError:
        version = 0
    if version < 1:
        raise _refuse(f"Option '{name}' must be a registered version number (1, 2, ...) or 'latest', got {raw!r}.")
    return version


def subject_strategy(name: str, raw: Any) -> str:
    """A subject name strategy by any name Confluent's clients use, as its short name."""
    from spark_kwire.client.registry.errors import RegistryConfigError
    from spark_kwire.client.registry.subject_names import STRATEGY_NAMES, subject_name_strategy

    try:
        chosen = subject_name_strategy(raw, key=name)
    except RegistryConfigError:
        raise _refuse(
            f"Option '{name}' must name a subject name strategy: {', '.join(STRATEGY_NAMES)} (short names, "
            f"Confluent's Java class names io.confluent.kafka.serializers.subject.* or confluent-kafka's function "
            f"names), got {raw!r}.") from None
    return next(n for n in STRATEGY_NAMES if subject_name_strategy(n) is chosen)


def schema_text(name: str, raw: Any) -> str:
    """A schema, record or message name given inline: not blank; names are stripped, schemas kept as given."""
    if not str(raw).strip():
        raise _refuse(f"Option '{name}' must not be empty.")
    return str(raw).strip() if name.endswith(("RecordName", "MessageName")) else str(raw)


def read_mode(name: str, raw: Any) -> str:
    mode = str(raw).strip().upper()
    if mode not in (FAILFAST, PERMISSIVE):
        extra = " (DROPMALFORMED is not offered: a Kafka read never drops records silently; use PERMISSIVE " \
                "and filter on the corrupt-record column)" if mode == "DROPMALFORMED" else ""
        raise _refuse(f"Option '{name}' must be FAILFAST or PERMISSIVE (the default is FAILFAST, as from_avro's, or "
                      f"PERMISSIVE when only plain JSON is read, as from_json's), got {raw!r}{extra}.")
    return mode


def evolution_mode(name: str, raw: Any) -> str:
    mode = {m.lower(): m for m in EVOLUTION_MODES}.get(str(raw).strip().lower())
    if mode is None:
        raise _refuse(f"Option '{name}' must be one of {', '.join(EVOLUTION_MODES)} (Auto Loader's values), "
                      f"got {raw!r}.")
    return mode


_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def schema_location(name: str, raw: Any) -> str:
    """An absolute directory kwire writes with plain file operations (``file:`` URIs taken as their path)."""
    given = str(raw).strip()
    if given.lower().startswith("file:"):
        given = re.sub(r"^file:(//)?", "", given, flags=re.I)
    elif _URI.match(given):
        raise _refuse(
            f"Option '{name}' must be a directory kwire can write with plain file operations: an absolute "
            f"local path or a mounted one (e.g. /dbfs/..., /Volumes/..., an NFS mount) seen at the same path by the "
            f"driver and the executors; {raw!r} is a URI kwire cannot write.")
    if not os.path.isabs(given):
        raise _refuse(f"Option '{name}' must be an absolute path (the executors record new schema versions there, "
                      f"from their own working directories), got {raw!r}.")
    return os.path.normpath(given)


# -- writes, security, metadata ---------------------------------------------------------------------------------------

def delivery_guarantee(name: str, raw: Any) -> str:
    """'at-least-once' or 'exactly-once'; Flink's AT_LEAST_ONCE / EXACTLY_ONCE spellings too."""
    value = str(raw).strip().lower().replace("_", "-")
    if value not in GUARANTEES:
        raise _refuse(f"Option '{name}' must be 'at-least-once' (the default) or 'exactly-once', got {raw!r}.")
    return value


def token_mechanism(name: str, raw: Any) -> str:
    mechanism = str(raw).strip().upper()
    if mechanism not in TOKEN_MECHANISMS:
        raise _refuse(f"Option '{name}' must be one of {', '.join(TOKEN_MECHANISMS)} (delegation tokens "
                      f"authenticate through SCRAM), got {mechanism!r}.")
    return mechanism


#: The connection check as a metadata table (spark/metadata/check_table.py): its rows come from the client's
#: check, not from the cluster's metadata.
CHECK_TABLE = "check"


def metadata_tables() -> tuple[str, ...]:
    """Every table option 'metadata' names: the cluster's tables, then the connection check."""
    from spark_kwire.client.admin.cluster_tables import TABLES

    return TABLES + (CHECK_TABLE,)


def metadata_table(name: str, raw: Any) -> str:
    """One of the metadata tables (case-insensitive), with the closest one to a misspelt name."""
    tables = metadata_tables()
    table = str(raw or "").strip().lower()
    if table not in tables:
        hint = difflib.get_close_matches(table, tables, n=1, cutoff=0.6)
        suggestion = f" Did you mean '{hint[0]}'?" if hint else ""
        raise _refuse(f"Unknown metadata table {raw!r} (option '{name}').{suggestion} "
                      f"Accepted tables: {', '.join(tables)}.")
    return table


def check_tasks(name: str, raw: Any) -> int:
    """The number of the connection check's tasks spread over the executors: 1 to 10000."""
    text = str(raw).strip()
    tasks = int(text) if text.isdigit() else 0
    if not 1 <= tasks <= 10_000:
        raise _refuse(f"Option '{name}' must be a whole number from 1 to 10000 (the check's tasks spread over the "
                      f"executors), got {raw!r}.")
    return tasks
