"""The options of typed reads and writes (issue #29): payload formats of the key and value, where their schemas
come from, the schema registry, and what a read does with a record that does not decode.

Names follow Confluent's clients where they have one (``schema.registry.<key>`` with the registry client's keys,
``value.subject.name.strategy``, ``auto.register.schemas``, ``use.latest.version``) and Spark's ``from_avro``
otherwise (``mode``, ``columnNameOfCorruptRecord``). Plain JSON (``json``) takes ``from_json`` / ``to_json``'s own
options (``JSON_READ_OPTIONS``, ``JSON_WRITE_OPTIONS``, kept raw in ``TypedOptions.json`` for the format layer) and
no registry; a read of JSON sides only is PERMISSIVE by default, as ``from_json`` is. Parsing here checks the
options alone; what needs the registry (a subject's schema, a record name, the fit of a DataFrame) is resolved by
``schemas.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from typing import TYPE_CHECKING

from spark_kwire.spark.errors import KwireOptionError

if TYPE_CHECKING:
    from spark_kwire.client.registry.config import RegistryConfig
    from spark_kwire.formats.contract.codec import Codec

# (The registry client and the format registry are imported where they are used: every read and write task imports
# this module, and a binary one needs neither.)

__all__ = ["SideSpec", "TypedOptions", "parse_typed", "TYPED_READ_OPTIONS", "TYPED_WRITE_OPTIONS", "JSON_READ_OPTIONS",
           "JSON_WRITE_OPTIONS",
           "REGISTRY_PREFIX", "TYPED_NOT_FOR_READS", "TYPED_NOT_FOR_WRITES", "FAILFAST", "PERMISSIVE",
           "JSON_SAMPLING_OPTIONS", "JSON_STREAM_OPTIONS", "TYPED_NOT_FOR_BATCH_READS"]

SIDES = ("key", "value")
REGISTRY_PREFIX = "schema.registry."
FAILFAST, PERMISSIVE = "FAILFAST", "PERMISSIVE"
DEFAULT_CORRUPT_COLUMN = "_corrupt_record"  # Spark's spark.sql.columnNameOfCorruptRecord default
_KAFKA_COLUMNS = ("key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers")


def _names(side: str) -> dict[str, str]:
    return {"format": f"{side}Format", "schema": f"{side}Schema", "version": f"{side}SchemaVersion",
            "record": f"{side}RecordName", "message": f"{side}MessageName",
            "strategy": f"{side}.subject.name.strategy"}


# from_json's options (formats/json/options.py reads them), and to_json's
JSON_READ_OPTIONS = ["allowComments", "allowUnquotedFieldNames", "allowSingleQuotes", "allowNumericLeadingZeros",
                     "allowNonNumericNumbers", "timestampFormat", "dateFormat", "timeZone", "rescuedDataColumn",
                     "primitivesAsString", "prefersDecimal", "dropFieldIfAllNull", "inferTimestamp"]
JSON_WRITE_OPTIONS = ["timestampFormat", "dateFormat", "timeZone", "ignoreNullFields"]
# a JSON side read with no schema: how its records are sampled at load() (reading/sampling.py), and, in streams only,
# where its inferred schema's versions are kept and what a stream does with new fields (evolution.py)
JSON_SAMPLING_OPTIONS = ["samplingRecords", "samplingTimeoutMs"]
JSON_STREAM_OPTIONS = ["schemaLocation", "schemaEvolutionMode"]
# (schema.registry.url stands for every schema.registry.* option: named here, a misspelt one gets a "did you mean")
_BOTH = [name for side in ("value", "key") for name in _names(side).values()] + ["schema.registry.url"]
TYPED_READ_OPTIONS = _BOTH + ["mode", "columnNameOfCorruptRecord"] + JSON_READ_OPTIONS + JSON_SAMPLING_OPTIONS
TYPED_WRITE_OPTIONS = _BOTH + ["auto.register.schemas", "use.latest.version"] + JSON_WRITE_OPTIONS
TYPED_NOT_FOR_WRITES = {
    "mode": "it says what a read does with a record that does not decode; a write fails on a row that does not "
            "fit its schema, naming the row and field",
    "columnnameofcorruptrecord": "it names the column where a PERMISSIVE read keeps records that do not decode",
    **{name.lower(): "it says how from_json reads JSON text; to_json writes a value's fields as they are"
       for name in JSON_READ_OPTIONS if name not in JSON_WRITE_OPTIONS},
    **{name.lower(): "it says how a read infers the schema of JSON text; a write takes its column's own type"
       for name in JSON_SAMPLING_OPTIONS + JSON_STREAM_OPTIONS},
}
TYPED_NOT_FOR_BATCH_READS = {name.lower(): "it applies to streaming reads (readStream) of valueFormat=json with no "
                                           "valueSchema only: a batch read infers its schema once, at load()"
                             for name in JSON_STREAM_OPTIONS}
TYPED_NOT_FOR_READS = {
    "auto.register.schemas": "it registers the schema a write encodes with; a read decodes with the subject's "
                             "schema (or valueSchema) and each record's writer schema by id",
    "use.latest.version": "it chooses the schema a write encodes with; a read uses the subject's latest version "
                          "unless valueSchemaVersion names one",
    "ignorenullfields": "it says whether to_json writes null fields; a read takes what the JSON text holds",
}


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
        return _names(self.side)[what]

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
    sampling: tuple = ()  # (records per partition, time bound in ms) of a JSON side's inference (reading/sampling.py)
    evolution: Any = None  # a stream's evolution.Evolution (schemaLocation, schemaEvolutionMode), or None

    def side(self, name: str) -> SideSpec | None:
        return next((s for s in self.sides if s.side == name), None)

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(s.side for s in self.sides)


def _payload_format(name: str) -> "Codec":
    from spark_kwire.formats.payload import payload_format

    return payload_format(name)


def _typed_format_names() -> tuple[str, ...]:
    from spark_kwire.formats.payload import FORMATS

    return FORMATS


def _format_names() -> tuple[str, ...]:
    return ("binary", *_typed_format_names())


def _bool(opts: Mapping[str, Any], name: str, default: bool) -> bool:
    raw = opts.get(name.lower())
    if raw is None:
        return default
    value = str(raw).strip().lower()
    if value not in ("true", "false"):
        raise KwireOptionError(f"Option '{name}' must be 'true' or 'false', got {raw!r}.")
    return value == "true"


def _format(opts: Mapping[str, Any], side: str) -> str:
    name = _names(side)["format"]
    raw = opts.get(name.lower())
    if raw is None:
        return "binary"
    value = str(raw).strip().lower().replace("_", "-")
    if value == "jsonschema":
        value = "json-schema"
    if value not in _format_names():
        raise KwireOptionError(f"Option '{name}' must be one of {', '.join(_format_names())} (default binary; json is "
                               f"plain JSON text, json-schema Confluent's framed JSON Schema), got {raw!r}.")
    return value


def _version(opts: Mapping[str, Any], name: str) -> int | None:
    raw = opts.get(name.lower())
    if raw is None or str(raw).strip().lower() == "latest":
        return None
    try:
        version = int(str(raw).strip())
    except ValueError:
        version = 0
    if version < 1:
        raise KwireOptionError(f"Option '{name}' must be a registered version number (1, 2, ...) or 'latest', "
                               f"got {raw!r}.")
    return version


def _strategy(opts: Mapping[str, Any], name: str) -> str:
    from spark_kwire.client.registry.errors import RegistryConfigError
    from spark_kwire.client.registry.subject_names import STRATEGY_NAMES, subject_name_strategy

    raw = opts.get(name.lower())
    if raw is None:
        return "TopicNameStrategy"
    try:
        chosen = subject_name_strategy(raw, key=name)
    except RegistryConfigError:
        raise KwireOptionError(
            f"Option '{name}' must name a subject name strategy: {', '.join(STRATEGY_NAMES)} (short names, "
            f"Confluent's Java class names io.confluent.kafka.serializers.subject.* or confluent-kafka's function "
            f"names), got {raw!r}.") from None
    return next(n for n in STRATEGY_NAMES if subject_name_strategy(n) is chosen)


def _text(opts: Mapping[str, Any], name: str) -> str | None:
    raw = opts.get(name.lower())
    if raw is None:
        return None
    if not str(raw).strip():
        raise KwireOptionError(f"Option '{name}' must not be empty.")
    return str(raw).strip() if name.endswith(("RecordName", "MessageName")) else str(raw)


def _registry(opts: Mapping[str, Any]) -> "RegistryConfig | None":
    from spark_kwire.client.registry.config import RegistryConfig
    from spark_kwire.client.registry.errors import RegistryConfigError

    given = {k[len(REGISTRY_PREFIX):]: v for k, v in opts.items() if k.lower().startswith(REGISTRY_PREFIX)}
    if not given:
        return None
    try:
        return RegistryConfig.from_options(given)
    except RegistryConfigError as e:
        raise KwireOptionError(f"{e} (the option '{REGISTRY_PREFIX}{e.key}').") from None


def _side(opts: Mapping[str, Any], side: str, fmt: str, *, write: bool) -> SideSpec:
    names = _names(side)
    payload = _payload_format(fmt)
    if not payload.uses_registry:
        return _unregistered_side(opts, side, fmt, write=write)
    schema = _text(opts, names["schema"])
    version = _version(opts, names["version"])
    if schema is not None and names["version"].lower() in opts:
        raise KwireOptionError(f"Give at most one of '{names['schema']}' (a schema given inline) and "
                               f"'{names['version']}' (a version registered under the subject).")
    message = _text(opts, names["message"])
    if message is not None and not payload.takes_message_name:
        raise KwireOptionError(f"Option '{names['message']}' names a Protobuf message; {names['format']} is "
                               f"'{fmt}', whose schemas hold one type.")
    strategy, record = _strategy(opts, names["strategy"]), _text(opts, names["record"])
    if message is None and payload.takes_message_name and record and strategy != "TopicNameStrategy":
        message = record  # a record strategy's record is the Protobuf message's full name (Confluent's rule)
    return SideSpec(side, fmt, schema=schema, version=version, strategy=strategy, record_name=record,
                    message_name=message)


def _unregistered_side(opts: Mapping[str, Any], side: str, fmt: str, *, write: bool) -> SideSpec:
    """A side of a format with no registry (plain JSON): its schema (reads: DDL or StructType JSON, or none)."""
    names = _names(side)
    for what in ("version", "record", "message", "strategy"):
        if names[what].lower() in opts:
            raise KwireOptionError(f"Option '{names[what]}' chooses a schema-registry subject or schema; "
                                   f"{names['format']}={fmt} is plain JSON text, read with '{names['schema']}' (a "
                                   f"Spark DDL string or a StructType as JSON) and written as to_json writes.")
    schema = _text(opts, names["schema"])
    if write and schema is not None:
        raise KwireOptionError(f"Option '{names['schema']}' is not used by a write of {names['format']}={fmt}: "
                               f"to_json writes the '{side}' column's own fields. Drop it.")
    return SideSpec(side, fmt, schema=schema)


def _json_options(opts: Mapping[str, Any], typed_formats: dict[str, str], *, write: bool) -> tuple:
    """The JSON options given, checked to have a side whose format takes them (plain JSON's)."""
    accepted = JSON_WRITE_OPTIONS if write else JSON_READ_OPTIONS
    given = tuple((name, opts[name.lower()]) for name in accepted if name.lower() in opts)
    payloads = [_payload_format(fmt) for fmt in typed_formats.values()]
    for name, _value in given:
        if not any(_takes_option(payload, name, write=write) for payload in payloads):
            raise KwireOptionError(f"Option '{name}' applies to plain JSON: set 'valueFormat' (or 'keyFormat') to "
                                   f"json.")
    return given


def _takes_option(payload: "Codec", name: str, *, write: bool) -> bool:
    """Whether a format's reads (its decoder or its schema inference) or writes take the Spark option ``name``."""
    capabilities = payload.capabilities
    return name in (capabilities.write_options if write else
                    (*capabilities.read_options, *capabilities.inference_options))


def parse_typed(opts: Mapping[str, Any], *, write: bool) -> TypedOptions | None:
    """The typed part of a read's (``write=False``) or write's options, lower-case keys; None when both key and
    value are binary (then every typed option is refused, saying what it needs)."""
    formats = {side: _format(opts, side) for side in SIDES}
    typed = [side for side in SIDES if formats[side] != "binary"]
    for side in SIDES:
        if formats[side] == "binary":
            for what, name in _names(side).items():
                if what != "format" and name.lower() in opts:
                    raise KwireOptionError(
                        f"Option '{name}' applies only when '{_names(side)['format']}' is one of "
                        f"{', '.join(_typed_format_names())} ({_names(side)['format']} is 'binary', the default).")
    if not typed:
        _json_options(opts, {}, write=write)
        if not write:
            from spark_kwire.spark.typed.plain_json.evolution import refuse_without_json

            refuse_without_json(opts)
        for key in opts:
            if key.startswith(REGISTRY_PREFIX) or key in ("mode", "columnnameofcorruptrecord",
                                                          "auto.register.schemas", "use.latest.version"):
                shown = key if key.startswith(REGISTRY_PREFIX) else {"columnnameofcorruptrecord":
                                                                     "columnNameOfCorruptRecord"}.get(key, key)
                raise KwireOptionError(
                    f"Option '{shown}' applies only to typed keys or values: set 'valueFormat' (or 'keyFormat') "
                    f"to one of {', '.join(_typed_format_names())}.")
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
    raw = opts.get("mode")
    # PERMISSIVE by default only when every side's format reads so by default (from_json's), else FAILFAST
    permissive = all(spec.payload.capabilities.default_mode == PERMISSIVE for spec in typed.sides)
    mode = (PERMISSIVE if permissive else FAILFAST) if raw is None else str(raw).strip().upper()
    if mode not in (FAILFAST, PERMISSIVE):
        extra = " (DROPMALFORMED is not offered: a Kafka read never drops records silently; use PERMISSIVE " \
                "and filter on the corrupt-record column)" if mode == "DROPMALFORMED" else ""
        raise KwireOptionError(f"Option 'mode' must be FAILFAST or PERMISSIVE (the default is FAILFAST, as "
                               f"from_avro's, or PERMISSIVE when only plain JSON is read, as from_json's), got "
                               f"{raw!r}{extra}.")
    corrupt = opts.get("columnnameofcorruptrecord")
    if corrupt is not None and mode != PERMISSIVE:
        raise KwireOptionError("Option 'columnNameOfCorruptRecord' names the column of records that do not "
                               "decode, which only mode=PERMISSIVE keeps.")
    for spec in typed.sides:
        if not spec.payload.uses_registry:
            continue
        if spec.schema is not None:  # the reader schema given inline: no subject is looked up
            for what in ("strategy", "record"):
                if spec.option(what).lower() in opts:
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
    from spark_kwire.spark.typed.plain_json.evolution import parse_evolution, parse_sampling

    sampling = parse_sampling(opts, typed.sides)
    evolution, json_given = parse_evolution(opts, typed.sides, typed.json)
    return TypedOptions(typed.sides, typed.registry, mode=mode, corrupt_column=corrupt, json=json_given,
                        sampling=sampling, evolution=evolution)


def _write_rules(opts: Mapping[str, Any], typed: TypedOptions) -> TypedOptions:
    auto = _bool(opts, "auto.register.schemas", False)
    latest = _bool(opts, "use.latest.version", True)
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
        if "use.latest.version" in opts and (spec.version is not None or spec.schema is not None) and not auto:
            raise KwireOptionError(
                f"use.latest.version chooses between the subject's latest version and a schema derived from the "
                f"DataFrame; '{spec.option('version' if spec.version is not None else 'schema')}' already names "
                f"the schema. Drop one of them.")
        if auto and spec.version is not None:
            raise KwireOptionError(f"'{spec.option('version')}' names a version that is registered already; it "
                                   f"cannot be combined with auto.register.schemas=true.")
        if auto and "use.latest.version" in opts and latest:
            raise KwireOptionError("use.latest.version=true writes with the subject's latest schema, which "
                                   "auto.register.schemas=true would replace by the DataFrame's; keep one.")
    return TypedOptions(typed.sides, typed.registry, auto_register=auto, use_latest=latest and not auto,
                        json=typed.json)
