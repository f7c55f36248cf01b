"""The options of typed reads and writes (issue #29): payload formats of the key and value, where their schemas
come from, the schema registry, and what a read does with a record that does not decode.

Names follow Confluent's clients where they have one (``schema.registry.<key>`` with the registry client's keys,
``value.subject.name.strategy``, ``auto.register.schemas``, ``use.latest.version``) and Spark's ``from_avro``
otherwise (``mode``, ``columnNameOfCorruptRecord``); each is a row of the table (:mod:`.names`). Plain JSON
(``json``) takes ``from_json`` / ``to_json``'s own options (kept raw in ``TypedOptions.json`` for the format layer)
and no registry; a read of JSON sides only is PERMISSIVE by default, as ``from_json`` is. Parsing here checks the
options alone; what needs the registry (a subject's schema, a record name, the fit of a DataFrame) is resolved by
``spark/typed/schemas.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

from spark_kwire.spark.errors import KwireOptionError
from spark_kwire.spark.options.inference import parse_evolution, parse_sampling, refuse_without_json
from spark_kwire.spark.options.names import JSON_SIDE, REGISTRY_PREFIX, TYPED_SIDE, Use, side_names
from spark_kwire.spark.options.rules import given, given_needing, needing, raw, value
from spark_kwire.spark.options.values import FAILFAST, PERMISSIVE, typed_format_names

if TYPE_CHECKING:
    from spark_kwire.client.registry.config import RegistryConfig
    from spark_kwire.formats.contract.codec import Codec

# (The registry client and the format registry are imported where they are used: every read and write task imports
# this module, and a binary one needs neither.)

__all__ = ["SideSpec", "TypedOptions", "parse_typed", "REGISTRY_PREFIX", "FAILFAST", "PERMISSIVE",
           "DEFAULT_CORRUPT_COLUMN", "SIDES"]

SIDES = ("key", "value")
DEFAULT_CORRUPT_COLUMN = "_corrupt_record"  # Spark's spark.sql.columnNameOfCorruptRecord default
_KAFKA_COLUMNS = ("key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers")
# from_json's options a read takes and to_json's a write takes, as the table says
_JSON_OF = {write: tuple(r.name for r in needing(JSON_SIDE) if r.applies_to(use))
            for write, use in ((False, Use.BATCH_READ), (True, Use.BATCH_WRITE))}


def _payload_format(name: str) -> "Codec":
    from spark_kwire.formats.payload import payload_format

    return payload_format(name)


@dataclass(frozen=True)
class SideSpec:
    """What the options ask for the key or the value: its format and where its schema comes from."""

    side: str  # "key" | "value"
    format: str  # avro | protobuf | json-schema | json
    schema: str | None = None  # given inline (valueSchema)
    version: int | None = None  # a registered version (valueSchemaVersion); None: the latest
    strategy: str = "TopicNameStrategy"
    record_name: str | None = None  # fully-qualified; for record strategies (valueRecordName)
    message_name: str | None = None  # Protobuf: which message of the file (valueMessageName)

    def option(self, what: str) -> str:
        """The documented name of this side's option ``what`` (format, schema, version, record, message...)."""
        return side_names(self.side)[what]

    @property
    def payload(self) -> "Codec":
        """The format's description (``formats.payload``): its decoder, encoder, framing and capabilities."""
        return _payload_format(self.format)


@dataclass(frozen=True)
class TypedOptions:
    """The typed sides of a read or write, the registry (None: schemas given inline, no registry), and the
    read's mode or the write's registration rules. ``resolved`` is filled by ``schemas.py``: per side, the
    schema decided at load() (reads) or writer creation (writes)."""

    sides: tuple[SideSpec, ...]
    registry: "RegistryConfig | None" = field(default=None, repr=False)
    mode: str = FAILFAST
    corrupt_column: str | None = None  # PERMISSIVE reads only
    auto_register: bool = False
    use_latest: bool = True
    resolved: tuple = ()  # of schemas.ResolvedSide, in the order of `sides`
    json: tuple = ()  # the JSON options given, (name, value) pairs as formats.json.JsonOptions.parse reads them
    sampling: tuple = ()  # (records per partition, time bound in ms) of a JSON side's inference (json_sampling.py)
    evolution: Any = None  # a stream's evolution.Evolution (schemaLocation, schemaEvolutionMode), or None

    def side(self, name: str) -> SideSpec | None:
        return next((s for s in self.sides if s.side == name), None)

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(s.side for s in self.sides)


def _registry(opts: Mapping[str, Any]) -> "RegistryConfig | None":
    from spark_kwire.client.registry.config import RegistryConfig
    from spark_kwire.client.registry.errors import RegistryConfigError

    settings = {k[len(REGISTRY_PREFIX):]: v for k, v in opts.items() if k.lower().startswith(REGISTRY_PREFIX)}
    if not settings:
        return None
    try:
        return RegistryConfig.from_options(settings)
    except RegistryConfigError as e:
        raise KwireOptionError(f"{e} (the option '{REGISTRY_PREFIX}{e.key}').") from None


def _side(opts: Mapping[str, Any], side: str, fmt: str, *, write: bool) -> SideSpec:
    names = side_names(side)
    payload = _payload_format(fmt)
    if not payload.uses_registry:
        return _unregistered_side(opts, side, fmt, write=write)
    schema = value(opts, names["schema"])
    version = value(opts, names["version"])
    if schema is not None and given(opts, names["version"]):
        raise KwireOptionError(f"Give at most one of '{names['schema']}' (a schema given inline) and "
                               f"'{names['version']}' (a version registered under the subject).")
    message = value(opts, names["message"])
    if message is not None and not payload.takes_message_name:
        raise KwireOptionError(f"Option '{names['message']}' names a Protobuf message; {names['format']} is "
                               f"'{fmt}', whose schemas hold one type.")
    strategy, record = value(opts, names["strategy"]), value(opts, names["record"])
    if message is None and payload.takes_message_name and record and strategy != "TopicNameStrategy":
        message = record  # a record strategy's record is the Protobuf message's full name (Confluent's rule)
    return SideSpec(side, fmt, schema=schema, version=version, strategy=strategy, record_name=record,
                    message_name=message)


def _unregistered_side(opts: Mapping[str, Any], side: str, fmt: str, *, write: bool) -> SideSpec:
    """A side of a format with no registry (plain JSON): its schema (reads: DDL or StructType JSON, or none)."""
    names = side_names(side)
    for what in ("version", "record", "message", "strategy"):
        if given(opts, names[what]):
            raise KwireOptionError(f"Option '{names[what]}' chooses a schema-registry subject or schema; "
                                   f"{names['format']}={fmt} is plain JSON text, read with '{names['schema']}' (a "
                                   f"Spark DDL string or a StructType as JSON) and written as to_json writes.")
    schema = value(opts, names["schema"])
    if write and schema is not None:
        raise KwireOptionError(f"Option '{names['schema']}' is not used by a write of {names['format']}={fmt}: "
                               f"to_json writes the '{side}' column's own fields. Drop it.")
    return SideSpec(side, fmt, schema=schema)


def _json_options(opts: Mapping[str, Any], typed_formats: dict[str, str], *, write: bool) -> tuple:
    """The JSON options given, checked to have a side whose format takes them (plain JSON's)."""
    options = tuple((name, raw(opts, name)) for name in _JSON_OF[write] if given(opts, name))
    payloads = [_payload_format(fmt) for fmt in typed_formats.values()]
    for name, _value in options:
        if not any(_takes_option(payload, name, write=write) for payload in payloads):
            raise KwireOptionError(f"Option '{name}' applies to plain JSON: set 'valueFormat' (or 'keyFormat') to "
                                   f"json.")
    return options


def _takes_option(payload: "Codec", name: str, *, write: bool) -> bool:
    """Whether a format's reads (its decoder or its schema inference) or writes take the Spark option ``name``."""
    capabilities = payload.capabilities
    return name in (capabilities.write_options if write else
                    (*capabilities.read_options, *capabilities.inference_options))


def parse_typed(opts: Mapping[str, Any], *, write: bool) -> TypedOptions | None:
    """The typed part of a read's (``write=False``) or write's options, lower-case keys; None when both key and
    value are binary (then every typed option is refused, saying what it needs)."""
    formats = {side: value(opts, side_names(side)["format"]) for side in SIDES}
    typed = [side for side in SIDES if formats[side] != "binary"]
    for side in SIDES:
        if formats[side] == "binary":
            names = side_names(side)
            for what, name in names.items():
                if what != "format" and given(opts, name):
                    raise KwireOptionError(
                        f"Option '{name}' applies only when '{names['format']}' is one of "
                        f"{', '.join(typed_format_names())} ({names['format']} is 'binary', the default).")
    if not typed:
        _json_options(opts, {}, write=write)
        if not write:
            refuse_without_json(opts)
        for key, option in given_needing(opts, TYPED_SIDE):
            shown = key if option.prefix else option.name
            raise KwireOptionError(
                f"Option '{shown}' applies only to typed keys or values: set 'valueFormat' (or 'keyFormat') "
                f"to one of {', '.join(typed_format_names())}.")
        return None
    sides = tuple(_side(opts, side, formats[side], write=write) for side in ("value", "key") if side in typed)
    registry = _registry(opts)
    result = TypedOptions(sides, registry, json=_json_options(opts, {s: formats[s] for s in typed}, write=write))
    for spec in sides:
        if not spec.payload.uses_registry:
            continue
        if registry is None and (write or spec.schema is None):
            why = ("a write frames every value with its schema's registry id" if write else
                   f"the reader schema comes from the registry unless '{spec.option('schema')}' gives it inline")
            raise KwireOptionError(f"{spec.option('format')}={spec.format} needs 'schema.registry.url' ({why}).")
    return _write_rules(opts, result) if write else _read_rules(opts, result)


def _read_rules(opts: Mapping[str, Any], typed: TypedOptions) -> TypedOptions:
    # PERMISSIVE by default only when every side's format reads so by default (from_json's), else FAILFAST
    permissive = all(spec.payload.capabilities.default_mode == PERMISSIVE for spec in typed.sides)
    mode = value(opts, "mode") or (PERMISSIVE if permissive else FAILFAST)
    corrupt = value(opts, "columnNameOfCorruptRecord")
    if corrupt is not None and mode != PERMISSIVE:
        raise KwireOptionError("Option 'columnNameOfCorruptRecord' names the column of records that do not "
                               "decode, which only mode=PERMISSIVE keeps.")
    for spec in typed.sides:
        if not spec.payload.uses_registry:
            continue
        if spec.schema is not None:  # the reader schema given inline: no subject is looked up
            for what in ("strategy", "record"):
                if given(opts, spec.option(what)):
                    raise KwireOptionError(
                        f"Option '{spec.option(what)}' chooses the subject the reader schema comes from, but "
                        f"'{spec.option('schema')}' gives the reader schema inline (each record's writer schema "
                        f"comes by its id). Drop one of them.")
        elif spec.record_name is not None and spec.strategy == "TopicNameStrategy":
            raise KwireOptionError(
                f"Option '{spec.option('record')}' names the subject under RecordNameStrategy or "
                f"TopicRecordNameStrategy; {spec.option('strategy')} is TopicNameStrategy (the default).")
    if mode == PERMISSIVE:
        corrupt = DEFAULT_CORRUPT_COLUMN if corrupt is None else str(corrupt).strip()
        if not corrupt or corrupt.lower() in {c.lower() for c in _KAFKA_COLUMNS}:
            raise KwireOptionError(f"Option 'columnNameOfCorruptRecord' must name a new column (not one of "
                                   f"{', '.join(_KAFKA_COLUMNS)}), got {corrupt!r}.")
    sampling = parse_sampling(opts, typed.sides)
    evolution, json_given = parse_evolution(opts, typed.sides, typed.json)
    return TypedOptions(typed.sides, typed.registry, mode=mode, corrupt_column=corrupt, json=json_given,
                        sampling=sampling, evolution=evolution)


def _write_rules(opts: Mapping[str, Any], typed: TypedOptions) -> TypedOptions:
    auto = value(opts, "auto.register.schemas")
    latest = value(opts, "use.latest.version")
    for spec in typed.sides:
        if not spec.payload.uses_registry:
            continue
        derived = spec.schema is None and spec.version is None and (auto or not latest)
        if spec.record_name is not None and spec.strategy == "TopicNameStrategy" and not derived:
            which = "given inline" if spec.schema else "the subject's"
            raise KwireOptionError(
                f"Option '{spec.option('record')}' names the subject under a record strategy, or the record of a "
                f"schema derived from the DataFrame; here neither applies ({spec.option('strategy')} is "
                f"TopicNameStrategy and the schema is {which}).")
        if given(opts, "use.latest.version") and (spec.version is not None or spec.schema is not None) and not auto:
            raise KwireOptionError(
                f"use.latest.version chooses between the subject's latest version and a schema derived from the "
                f"DataFrame; '{spec.option('version' if spec.version is not None else 'schema')}' already names "
                f"the schema. Drop one of them.")
        if auto and spec.version is not None:
            raise KwireOptionError(f"'{spec.option('version')}' names a version that is registered already; it "
                                   f"cannot be combined with auto.register.schemas=true.")
        if auto and given(opts, "use.latest.version") and latest:
            raise KwireOptionError("use.latest.version=true writes with the subject's latest schema, which "
                                   "auto.register.schemas=true would replace by the DataFrame's; keep one.")
    return TypedOptions(typed.sides, typed.registry, auto_register=auto, use_latest=latest and not auto,
                        json=typed.json)
