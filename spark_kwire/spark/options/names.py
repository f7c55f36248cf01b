"""Every option of kwire's own (every key a kwire read or write can be handed that is not a ``kafka.*`` client
setting), once: the one table, as :mod:`spark_kwire.client.settings.names` is for the ``kafka.*`` settings.

A row (:class:`Option`) says the option's documented spelling; the uses it applies to (:class:`Use`: a batch or
streaming read or write, a view's or ``load()``'s definition before Spark says which use follows, a metadata
table); its parser and default (:mod:`.values`); why it is refused in each other use (a use with no reason knows
it as an unknown option, with a "did you mean"); what it needs among the other options (a typed or plain JSON key
or value); whether it names what a read or a write is of; and its row of ``docs/options.md`` (:mod:`.page`).
Everything per use is derived from it by :mod:`.rules`: the names a use accepts, the refusals, the view's rules,
the options of each metadata table.

:data:`KAFKA_REFUSED` holds the ``kafka.*`` settings Spark's ``kafka`` source refuses (and kwire with it), by use.

Adding an option: one row here (the parse that uses it reads it with :func:`.rules.value`). An option of a
metadata table is one :func:`metadata_option` row naming its tables. The connection check is a metadata table
(``option("metadata", "check")``); its own options are :func:`metadata_option` rows of that table alone, and it
also takes the topics and ``schema.registry.*``, whose rows name it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from spark_kwire.client.admin.cluster_tables import TABLES
from spark_kwire.spark.options import page, values as v

__all__ = ["Use", "Option", "OPTIONS", "BY_KEY", "KAFKA_REFUSED", "READS", "WRITES", "REGISTRY_PREFIX",
           "METADATA_TABLES", "JSON_OPTIONS", "TYPED_SIDE", "JSON_SIDE", "INFERRED_JSON_SIDE", "READ_TARGET",
           "WRITE_TARGET", "side_names", "metadata_option"]


class Use(enum.Enum):
    """What a set of options is for; the value is how messages name it ("does not apply to a kwire ...")."""

    BATCH_READ = "batch read"
    STREAM_READ = "streaming read"
    BATCH_WRITE = "write"
    STREAM_WRITE = "streaming write"
    VIEW = "read or write"  # a view's (or load()'s) options, judged before Spark says which use follows
    METADATA = "metadata read"  # option("metadata", <table>): a table of the cluster's metadata, batch only


READS = frozenset({Use.BATCH_READ, Use.STREAM_READ})
WRITES = frozenset({Use.BATCH_WRITE, Use.STREAM_WRITE})

# What an option needs among the others (Option.needs): a key or value typed by keyFormat / valueFormat, one of
# plain JSON, or one of plain JSON read with no schema (its schema inferred).
TYPED_SIDE, JSON_SIDE, INFERRED_JSON_SIDE = "typed side", "plain JSON side", "inferred plain JSON side"
# What an option names (Option.target): the topics a read reads (exactly one such option is given), the topic a
# write writes. Options naming both define a view that is read and written (spark/sql/definition.py).
READ_TARGET, WRITE_TARGET = "read", "write"


@dataclass(frozen=True)
class Option:
    """One option: see the module docstring."""

    name: str  # documented spelling (keys are compared lower-cased, as Spark hands them)
    uses: frozenset  # of Use
    parse: v.Parser = v.text  # parse(name, raw) -> value
    default: Any = None  # the value when the option is not given (None: the use decides, or nothing)
    refused: Mapping = field(default_factory=dict)  # Use -> why the option does not apply there
    doc: page.PageRow | None = None  # its row of docs/options.md
    tables: tuple[str, ...] = ()  # Use.METADATA: the metadata tables it applies to (empty: every table)
    prefix: bool = False  # the row stands for every key starting with its name's prefix (schema.registry.*)
    ignored_in: frozenset = frozenset()  # uses that accept it and ignore it with a warning, as Spark's source does
    added_by_spark: str | None = None  # Spark itself puts it into the options: "streaming write", "catalog table"
    needs: str | None = None  # TYPED_SIDE, JSON_SIDE, INFERRED_JSON_SIDE: refused without such a key or value
    target: str | None = None  # READ_TARGET, WRITE_TARGET: it names what a read or a write is of

    @property
    def key(self) -> str:
        return self.name.lower()

    @property
    def key_prefix(self) -> str:
        """For a prefix row, the prefix its keys share (``schema.registry.``)."""
        return self.key.rsplit(".", 1)[0] + "." if self.prefix else self.key

    @property
    def shown(self) -> str:
        """How the docs show it (a prefix row as ``schema.registry.*``)."""
        return self.key_prefix + "*" if self.prefix else self.name

    def applies_to(self, use: Use) -> bool:
        return use in self.uses


def _by_use(reasons: Mapping) -> dict:
    """``{Use or set of Uses: reason}`` spread to one reason per use."""
    spread: dict = {}
    for uses, reason in reasons.items():
        for use in (uses if isinstance(uses, (frozenset, set)) else (uses,)):
            spread[use] = reason
    return spread


def option(name: str, uses: Iterable, parse: v.Parser = v.text, default: Any = None, *, refused: Mapping = {},
           doc: page.PageRow | None, **more) -> Option:
    return Option(name, frozenset(uses), parse, default, _by_use(refused), doc, **more)


# -- reasons shared by many rows ------------------------------------------------------------------------------------
_READ_OPTION = "it is a read option; a write names its topic with the 'topic' option or a 'topic' column"
_STREAM_ONLY = "it applies to streaming reads (readStream) only"
_NO_END = "a stream has no end"
_ON_WRITE_STREAM = "it belongs on writeStream, where Spark keeps the query's offsets"
_JSON_READ = "it says how from_json reads JSON text; to_json writes a value's fields as they are"
_INFERENCE = "it says how a read infers the schema of JSON text; a write takes its column's own type"
_EVOLUTION = ("it applies to streaming reads (readStream) of valueFormat=json with no valueSchema only: a batch read "
              "infers its schema once, at load()")
_PATH_READ = "kwire reads take no path: name the topics with 'subscribe', 'subscribePattern' or 'assign'"
_PATH_WRITE = "kwire writes take no path: set the 'topic' option or give the rows a 'topic' column"
_CATALOG_KEY = ("Spark adds it to the options of a catalog table (CREATE TABLE ... USING kwire), which kwire cannot "
                "back: use a temporary view")

_ANY_READ = READS | {Use.VIEW}
_ANY_WRITE = WRITES | {Use.VIEW}
_EVERY = READS | WRITES | {Use.VIEW}


def _read(name: str, parse: v.Parser = v.text, default: Any = None, *, doc: page.PageRow, uses=_ANY_READ,
          refused: Mapping = {}, **more) -> Option:
    """An option of reads: a write refuses it as a read option unless ``refused`` says otherwise."""
    return option(name, uses, parse, default, refused={WRITES: _READ_OPTION, **refused}, doc=doc, **more)


def metadata_option(name: str, tables: tuple[str, ...], parse: v.Parser = v.text, default: Any = None, *,
                    purpose: str = "", doc: page.PageRow, note: str = "", reason: str = "") -> Option:
    """An option of the metadata tables ``tables`` only (``option("metadata", <table>)``): refused by ordinary reads,
    views and writes, saying which tables it is for. ``purpose`` starts the reason ("it selects consumer groups
    for"), ``note`` may end it; or ``reason`` is the whole reason, for writes too (a write otherwise refuses it as a
    read option)."""
    if reason:
        return option(name, {Use.METADATA}, parse, default, refused={_EVERY: reason}, doc=doc, tables=tables)
    quoted = [f"'{t}'" for t in tables]
    which = f"the metadata table {quoted[0]}" if len(quoted) == 1 else \
        f"the metadata tables {', '.join(quoted[:-1])} and {quoted[-1]}"
    why = f"{purpose} {which} (option 'metadata')" + (f"; {note}" if note else "")
    return option(name, {Use.METADATA}, parse, default, refused={_ANY_READ: why, WRITES: _READ_OPTION}, doc=doc,
                  tables=tables)


#: Every table option 'metadata' names: the cluster's tables, then the connection check.
METADATA_TABLES = TABLES + (v.CHECK_TABLE,)
_CHECK = (v.CHECK_TABLE,)
_CHECK_ONLY = 'it applies only to the connection check, option("metadata", "check")'


# -- typed keys and values ------------------------------------------------------------------------------------------
REGISTRY_PREFIX = "schema.registry."


def side_names(side: str) -> dict[str, str]:
    """The documented names of a side's options ("key" or "value"), by what they say."""
    return {"format": f"{side}Format", "schema": f"{side}Schema", "version": f"{side}SchemaVersion",
            "record": f"{side}RecordName", "message": f"{side}MessageName", "strategy": f"{side}.subject.name.strategy"}


_SIDE_PARSERS = {"format": (v.payload_format_name, "binary"), "schema": (v.schema_text, None),
                 "version": (v.schema_version, None), "record": (v.schema_text, None),
                 "message": (v.schema_text, None), "strategy": (v.subject_strategy, "TopicNameStrategy")}


def _side_rows(side: str) -> list[Option]:
    return [option(name, _EVERY, *_SIDE_PARSERS[what], doc=page.TYPED) for what, name in side_names(side).items()]


#: from_json's options and to_json's, in from_json's order (formats/json/options.py reads them; kept raw here)
JSON_OPTIONS = ("allowComments", "allowUnquotedFieldNames", "allowSingleQuotes", "allowNumericLeadingZeros",
                "allowNonNumericNumbers", "timestampFormat", "dateFormat", "timeZone", "rescuedDataColumn",
                "primitivesAsString", "prefersDecimal", "dropFieldIfAllNull", "inferTimestamp", "ignoreNullFields")
_TO_JSON = ("timestampFormat", "dateFormat", "timeZone", "ignoreNullFields")


def _json(name: str) -> Option:
    if name not in _TO_JSON:
        return _read(name, doc=page.JSON_OPTIONS, needs=JSON_SIDE, refused={WRITES: _JSON_READ})
    if name == "ignoreNullFields":
        return option(name, _ANY_WRITE, doc=page.JSON_OPTIONS, needs=JSON_SIDE, refused={
            READS: "it says whether to_json writes null fields; a read takes what the JSON text holds"})
    return option(name, _EVERY, doc=page.JSON_OPTIONS, needs=JSON_SIDE)


# -- the table -------------------------------------------------------------------------------------------------------
OPTIONS: tuple[Option, ...] = (
    # what a read reads
    _read("subscribe", v.names_of("topic"), doc=page.SUBSCRIPTION, uses=_ANY_READ | {Use.METADATA},
          tables=("topics", "partitions", "group_offsets") + _CHECK, target=READ_TARGET),
    _read("subscribePattern", v.pattern, doc=page.SUBSCRIPTION, uses=_ANY_READ | {Use.METADATA},
          tables=("topics", "partitions", "group_offsets") + _CHECK, target=READ_TARGET),
    _read("assign", v.assignment, doc=page.SUBSCRIPTION, uses=_ANY_READ | {Use.METADATA}, tables=_CHECK,
          target=READ_TARGET),
    # where it starts and ends
    _read("startingOffsets", v.offsets_spec(group=True), doc=page.OFFSETS),
    _read("endingOffsets", v.offsets_spec(group=False), doc=page.OFFSETS, uses={Use.BATCH_READ, Use.VIEW},
          refused={Use.STREAM_READ: _NO_END}),
    _read("startingTimestamp", v.timestamp_ms, doc=page.TIMESTAMPS),
    _read("endingTimestamp", v.timestamp_ms, doc=page.TIMESTAMPS, uses={Use.BATCH_READ, Use.VIEW},
          refused={Use.STREAM_READ: _NO_END}),
    _read("startingOffsetsByTimestamp", v.partition_timestamps, doc=page.TIMESTAMPS),
    _read("endingOffsetsByTimestamp", v.partition_timestamps, doc=page.TIMESTAMPS, uses={Use.BATCH_READ, Use.VIEW},
          refused={Use.STREAM_READ: _NO_END}),
    _read("startingOffsetsByTimestampStrategy", v.choice(("error", "latest"), "'error' or 'latest'"), "error",
          doc=page.TIMESTAMPS),
    _read("failOnDataLoss", v.boolean, True, doc=page.DATA_LOSS),
    # how it is cut into Spark partitions
    _read("minPartitions", v.positive_int, doc=page.SPARK_CUTS),
    _read("maxRecordsPerPartition", v.positive_int, doc=page.SPARK_CUTS),
    _read("packPartitions", v.boolean, True, doc=page.PACKING),
    _read("targetRecordsPerPartition", v.positive_int, 200_000, doc=page.PACKING),
    _read("includeHeaders", v.boolean, False, doc=page.HEADERS, refused={
        WRITES: "it applies to reads; a write sends the headers of its 'headers' column whenever it has one"}),
    # streams
    *(_read(name, parse, default, doc=page.TRIGGER_LIMITS, ignored_in=frozenset({Use.BATCH_READ}))
      for name, parse, default in (("maxOffsetsPerTrigger", v.positive_int, None),
                                   ("minOffsetsPerTrigger", v.positive_int, None),
                                   ("maxTriggerDelay", v.duration_ms, 15 * 60 * 1000))),
    _read("commitOffsetsToGroup", v.non_empty("must name a consumer group"), doc=page.COMMIT_OFFSETS,
          uses={Use.STREAM_READ, Use.VIEW}, refused={Use.BATCH_READ: _STREAM_ONLY}),
    _read("startingOffsetsGroup", doc=page.START_AT_GROUP, uses={Use.STREAM_READ, Use.VIEW},
          refused={Use.BATCH_READ: _STREAM_ONLY}),
    _read("streamReadMode", v.choice(v.STREAM_READ_MODES, "'auto', 'tasks' or 'driver'",
                                     "'tasks' reads each micro-batch in Spark tasks, 'driver' in the driver's source "
                                     "process (small micro-batches), 'auto' chooses when the query starts"),
          "auto", doc=page.STREAM_READ_MODE, uses={Use.STREAM_READ, Use.VIEW}, refused={
        Use.BATCH_READ: "it chooses where a stream's micro-batches are read (tasks, driver or auto) and applies to "
                        "streaming reads (readStream) only; a batch read is always read by tasks"}),
    # Spark's consumer settings, checked as Spark checks them
    _read("kafkaConsumer.pollTimeoutMs", v.positive_int, doc=page.POLL_TIMEOUT),
    _read("fetchOffset.numRetries", v.non_negative_int, doc=page.OFFSET_RETRIES),
    _read("fetchOffset.retryIntervalMs", v.non_negative_int, doc=page.OFFSET_RETRIES),
    _read("groupIdPrefix", doc=page.GROUP_ID),
    _read("maxDecompressedBytes", v.positive_int, doc=page.DECOMPRESSED),
    # writes
    option("topic", _ANY_WRITE | {Use.METADATA}, v.non_empty("must name a topic when given"), doc=page.TOPIC,
           target=WRITE_TARGET, tables=_CHECK, refused={
        READS: "it names the topic of a write; a read names its topics with 'subscribe', 'subscribePattern' or "
               "'assign'"}),
    option("deliveryGuarantee", _ANY_WRITE, v.delivery_guarantee, v.AT_LEAST_ONCE, doc=page.DELIVERY, refused={
        READS: "it chooses how a write delivers (at-least-once or exactly-once); a read of transactional data "
               "chooses what it sees with kafka.isolation.level"}),
    option("transactionalIdPrefix", _ANY_WRITE, v.non_empty("must not be empty"), doc=page.DELIVERY,
           refused={READS: "it names the transactions of an exactly-once write"}),
    # delegation tokens (security.py)
    option("delegationToken", _EVERY, v.boolean, False, doc=page.DELEGATION_TOKENS),
    option("delegationToken.mechanism", _EVERY, v.token_mechanism, v.TOKEN_MECHANISMS[0],
           doc=page.DELEGATION_TOKENS),
    # typed keys and values (payloads.py)
    *_side_rows("value"), *_side_rows("key"),
    # (named schema.registry.url, for the "did you mean" of a misspelt one; the registry client reads them all)
    option("schema.registry.url", _EVERY | {Use.METADATA}, prefix=True, doc=page.TYPED, needs=TYPED_SIDE,
           tables=_CHECK),
    _read("mode", v.read_mode, doc=page.TYPED, needs=TYPED_SIDE, refused={
        WRITES: "it says what a read does with a record that does not decode; a write fails on a row that does not "
                "fit its schema, naming the row and field"}),
    _read("columnNameOfCorruptRecord", doc=page.TYPED, needs=TYPED_SIDE, refused={
        WRITES: "it names the column where a PERMISSIVE read keeps records that do not decode"}),
    option("auto.register.schemas", _ANY_WRITE, v.boolean, False, doc=page.TYPED, needs=TYPED_SIDE, refused={
        READS: "it registers the schema a write encodes with; a read decodes with the subject's schema (or "
               "valueSchema) and each record's writer schema by id"}),
    option("use.latest.version", _ANY_WRITE, v.boolean, True, doc=page.TYPED, needs=TYPED_SIDE, refused={
        READS: "it chooses the schema a write encodes with; a read uses the subject's latest version unless "
               "valueSchemaVersion names one"}),
    # plain JSON: from_json's and to_json's options, and a schema inferred and evolving (inference.py)
    *(_json(name) for name in JSON_OPTIONS),
    _read("samplingRecords", v.positive_int, 1_000, doc=page.JSON_INFERENCE, refused={WRITES: _INFERENCE},
          needs=INFERRED_JSON_SIDE),
    _read("samplingTimeoutMs", v.positive_int, 30_000, doc=page.JSON_INFERENCE, refused={WRITES: _INFERENCE},
          needs=INFERRED_JSON_SIDE),
    _read("schemaLocation", v.schema_location, doc=page.JSON_INFERENCE, uses={Use.STREAM_READ, Use.VIEW},
          refused={Use.BATCH_READ: _EVOLUTION, WRITES: _INFERENCE}, needs=INFERRED_JSON_SIDE),
    _read("schemaEvolutionMode", v.evolution_mode, doc=page.JSON_INFERENCE, uses={Use.STREAM_READ, Use.VIEW},
          refused={Use.BATCH_READ: _EVOLUTION, WRITES: _INFERENCE}, needs=INFERRED_JSON_SIDE),
    # the metadata tables (spark/metadata/)
    option("metadata", {Use.METADATA, Use.VIEW}, v.metadata_table, doc=page.METADATA, refused={
        Use.STREAM_READ: f"the metadata tables ({', '.join(METADATA_TABLES)}) are batch-only snapshots of the "
                         f"cluster: read them with spark.read, e.g. inside foreachBatch or on a schedule",
        Use.BATCH_READ: "it reads a metadata table, which takes no other read options",
        WRITES: _READ_OPTION}),
    *(metadata_option(name, ("groups", "group_offsets"), parse, doc=page.METADATA, purpose="it selects consumer "
                      "groups for", note="an ordinary read does not use consumer groups")
      for name, parse in (("groups", v.names_of("group")), ("groupPattern", v.pattern))),
    # the connection check's own options (its values are read by the client's check: client/check/options.py)
    *(metadata_option(name, _CHECK, parse, doc=page.CHECK, reason=_CHECK_ONLY)
      for name, parse in (("checkThroughput", v.boolean), ("checkStepTimeoutMs", v.positive_int),
                          ("checkTimeoutMs", v.positive_int), ("checkTasks", v.check_tasks))),
    # keys Spark puts into the options itself, and the path of load(path) / save(path)
    *(option(name, {Use.STREAM_WRITE}, doc=page.MISPLACED, added_by_spark="streaming write", refused={
        (READS | {Use.VIEW}): _ON_WRITE_STREAM if name == "checkpointLocation" else "it belongs on writeStream",
        Use.BATCH_WRITE: "it applies to writeStream only" + (
            "; a batch write keeps no checkpoint" if name == "checkpointLocation" else "")})
      for name in ("checkpointLocation", "queryName")),
    option("path", (), doc=page.MISPLACED, refused={
        READS: _PATH_READ, WRITES: _PATH_WRITE,
        Use.VIEW: "kwire takes no path: name the topics with 'subscribe', 'subscribePattern' or 'assign' to read, "
                  "with 'topic' (or a 'topic' column) to write"}),
    option("paths", (), doc=page.MISPLACED, refused={READS: _PATH_READ, WRITES: _PATH_WRITE,
                                                      Use.VIEW: "kwire takes no path"}),
    *(option(name, (), added_by_spark="catalog table", refused={_EVERY: _CATALOG_KEY}, doc=None)
      for name in ("provider", "owner")),
)

BY_KEY: dict[str, Option] = {row.key: row for row in OPTIONS}
assert len(BY_KEY) == len(OPTIONS), "an option has two rows"

_CONSUMER_CLASSES = "Java consumer interceptors do not exist in kwire, which speaks the protocol itself"
_METADATA_AND_READS = READS | {Use.METADATA}

#: ``kafka.*`` settings a use refuses, as Spark's ``kafka`` source does, with the reason: setting -> {Use: reason}.
KAFKA_REFUSED: dict[str, dict] = {name: _by_use(reasons) for name, reasons in {
    "auto.offset.reset": {_METADATA_AND_READS: "set the source option 'startingOffsets' to 'earliest' or 'latest' "
                                               "instead"},
    "key.deserializer": {_METADATA_AND_READS: "keys are read as bytes unless the option keyFormat types them (avro, "
                                              "protobuf, json-schema, json); use keyFormat or DataFrame operations "
                                              "(e.g. CAST(key AS STRING)) to deserialize them"},
    "value.deserializer": {_METADATA_AND_READS: "values are read as bytes unless the option valueFormat types them "
                                                "(avro, protobuf, json-schema, json); use valueFormat or DataFrame "
                                                "operations (e.g. from_json) to deserialize them"},
    "enable.auto.commit": {_METADATA_AND_READS: "kwire does not commit offsets through a consumer; use "
                                                "'commitOffsetsToGroup' on a stream"},
    "interceptor.classes": {_METADATA_AND_READS: _CONSUMER_CLASSES,
                            WRITES: "Java producer interceptors do not exist in kwire, which speaks "
                                                     "the protocol itself"},
    "key.serializer": {WRITES: "keys are written as bytes; give a binary or string 'key' column"},
    "value.serializer": {WRITES: "values are written as bytes; give a binary or string 'value' column"},
    "transactional.id": {WRITES: "kwire names each task's transactional id itself: set deliveryGuarantee=exactly-once "
                                 "and, optionally, transactionalIdPrefix (tasks use <prefix>-<partition id>)"},
    "partitioner.class": {WRITES: "kwire partitions as the Java client's default partitioner does (murmur2 of the "
                                  "key, rows without a key spread over the partitions); give the rows a 'partition' "
                                  "column to choose"},
}.items()}
