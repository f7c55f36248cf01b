"""Options of the kwire source and sink, named and interpreted as Spark's built-in `kafka` source does.

Spark hands a data source its options in a case-insensitive dict whose keys are lower-cased, so every
lookup here uses lower-case keys and every error message uses the documented spelling.
"""

from __future__ import annotations

import difflib
import json
import logging
import re
from dataclasses import dataclass, field
from typing import Mapping

from spark_kwire.client.admin.cluster_tables import NameFilter
from spark_kwire.client.errors import ConfigError
from spark_kwire.client.settings.config import ClientConfig
from spark_kwire.client.settings.parse import OptionValues, RefusedSettingError, UnknownSettingError, \
    describe_ignored, parse_options
from spark_kwire.client.settings.secret import Secret, is_sensitive_key
from spark_kwire.spark.errors import KwireOptionError
from spark_kwire.spark.options.values import parse_non_negative_int, parse_positive_int
from spark_kwire.spark.options.security import DELEGATION_TOKEN_OPTIONS, check_security_options, parse_delegation_token
from spark_kwire.spark.typed import options as typed_options

EARLIEST = -2
LATEST = -1

log = logging.getLogger("spark_kwire")


# Documented spelling of every non-`kafka.` option, by use.
_READ_COMMON = [
    "subscribe", "subscribePattern", "assign", "failOnDataLoss", "includeHeaders", "minPartitions",
    "startingOffsets", "startingOffsetsByTimestamp", "startingTimestamp", "startingOffsetsByTimestampStrategy",
    "maxRecordsPerPartition", "fetchOffset.numRetries", "fetchOffset.retryIntervalMs", "kafkaConsumer.pollTimeoutMs",
    "groupIdPrefix", "maxDecompressedBytes", "packPartitions", "targetRecordsPerPartition", *DELEGATION_TOKEN_OPTIONS,
    *typed_options.TYPED_READ_OPTIONS,
]
# Accepted by batch reads and ignored with a warning, as Spark's source does (a stream's options can be reused).
_STREAM_ONLY_IGNORED_IN_BATCH = ["maxOffsetsPerTrigger", "minOffsetsPerTrigger", "maxTriggerDelay"]
BATCH_READ_OPTIONS = _READ_COMMON + ["endingOffsets", "endingOffsetsByTimestamp", "endingTimestamp"] + \
    _STREAM_ONLY_IGNORED_IN_BATCH
STREAM_READ_OPTIONS = _READ_COMMON + _STREAM_ONLY_IGNORED_IN_BATCH + ["commitOffsetsToGroup", "startingOffsetsGroup",
                                                                       "streamReadMode",
                                                                       *typed_options.JSON_STREAM_OPTIONS]
WRITE_OPTIONS = ["topic", "deliveryGuarantee", "transactionalIdPrefix", *DELEGATION_TOKEN_OPTIONS,
                 *typed_options.TYPED_WRITE_OPTIONS]
# What Spark itself puts into a stream writer's options (a reader's and a batch writer's get none).
_SPARK_INJECTED_STREAM_WRITE = {"checkpointlocation", "queryname"}

# Options given where they have no effect: refused, saying where they belong. (Spark's source ignores most of
# these silently; kwire refuses options it would not use, so that none is accepted and ignored.)
_NOT_FOR_READS = {
    "topic": "it names the topic of a write; a read names its topics with 'subscribe', 'subscribePattern' or 'assign'",
    "groups": "it selects consumer groups for the metadata tables 'groups' and 'group_offsets' (option 'metadata'); "
              "an ordinary read does not use consumer groups",
    "grouppattern": "it selects consumer groups for the metadata tables 'groups' and 'group_offsets' (option "
                    "'metadata'); an ordinary read does not use consumer groups",
    "path": "kwire reads take no path: name the topics with 'subscribe', 'subscribePattern' or 'assign'",
    "paths": "kwire reads take no path: name the topics with 'subscribe', 'subscribePattern' or 'assign'",
    "checkpointlocation": "it belongs on writeStream, where Spark keeps the query's offsets",
    "queryname": "it belongs on writeStream",
    "deliveryguarantee": "it chooses how a write delivers (at-least-once or exactly-once); a read of "
                         "transactional data chooses what it sees with kafka.isolation.level",
    "transactionalidprefix": "it names the transactions of an exactly-once write", **typed_options.TYPED_NOT_FOR_READS,
}
_NOT_FOR_BATCH_READS = {
    "commitoffsetstogroup": "it applies to streaming reads (readStream) only",
    "startingoffsetsgroup": "it applies to streaming reads (readStream) only",
    "streamreadmode": "it chooses where a stream's micro-batches are read (tasks, driver or auto) and applies to "
                      "streaming reads (readStream) only; a batch read is always read by tasks",
    **typed_options.TYPED_NOT_FOR_BATCH_READS,
}
_NOT_FOR_STREAM_READS = {
    "metadata": "the metadata tables (topics, partitions, groups, group_offsets) are batch-only snapshots of the "
                "cluster: read them with spark.read, e.g. inside foreachBatch or on a schedule",
    "endingoffsets": "a stream has no end",
    "endingoffsetsbytimestamp": "a stream has no end",
    "endingtimestamp": "a stream has no end",
}
_NOT_FOR_WRITES = {
    "includeheaders": "it applies to reads; a write sends the headers of its 'headers' column whenever it has one",
    "path": "kwire writes take no path: set the 'topic' option or give the rows a 'topic' column",
    "paths": "kwire writes take no path: set the 'topic' option or give the rows a 'topic' column",
    **{name.lower(): "it is a read option; a write names its topic with the 'topic' option or a 'topic' column"
       for name in set(BATCH_READ_OPTIONS + STREAM_READ_OPTIONS + ["metadata", "groups", "groupPattern"])
       if name.lower() not in ("includeheaders",)}, **typed_options.TYPED_NOT_FOR_WRITES,
}
_DOCUMENTED = {k.lower(): k for k in BATCH_READ_OPTIONS + STREAM_READ_OPTIONS + WRITE_OPTIONS + [
    "metadata", "groups", "groupPattern", "path", "paths", "checkpointLocation", "queryName"]}
_NOT_FOR_BATCH_WRITES = {
    "checkpointlocation": "it applies to writeStream only; a batch write keeps no checkpoint",
    "queryname": "it applies to writeStream only",
}

# kafka.* settings that make no sense for Spark, with the reason given to the user (as Spark's source says).
_UNSUPPORTED_KAFKA_READ = {
    "auto.offset.reset": "set the source option 'startingOffsets' to 'earliest' or 'latest' instead",
    "key.deserializer": "keys are read as bytes unless the option keyFormat types them (avro, protobuf, json-schema, "
                        "json); use keyFormat or DataFrame operations (e.g. CAST(key AS STRING)) to deserialize them",
    "value.deserializer": "values are read as bytes unless the option valueFormat types them (avro, protobuf, "
                          "json-schema, json); use valueFormat or DataFrame operations (e.g. from_json) to deserialize "
                          "them",
    "enable.auto.commit": "kwire does not commit offsets through a consumer; use 'commitOffsetsToGroup' on a stream",
    "interceptor.classes": "Java consumer interceptors do not exist in kwire, which speaks the protocol itself",
}
_UNSUPPORTED_KAFKA_WRITE = {
    "key.serializer": "keys are written as bytes; give a binary or string 'key' column",
    "value.serializer": "values are written as bytes; give a binary or string 'value' column",
    "interceptor.classes": "Java producer interceptors do not exist in kwire, which speaks the protocol itself",
    "transactional.id": "kwire names each task's transactional id itself: set deliveryGuarantee=exactly-once and, "
                        "optionally, transactionalIdPrefix (tasks use <prefix>-<partition id>)",
    "partitioner.class": "kwire partitions as the Java client's default partitioner does (murmur2 of the key, rows "
                         "without a key spread over the partitions); give the rows a 'partition' column to choose",
}


def _spelling(keys: list[str]) -> dict[str, str]:
    return {k.lower(): k for k in keys}


def _reject_unknown(options: Mapping[str, str], known: list[str], what: str,
                    misplaced: Mapping[str, str] = {}, tolerated: set[str] = frozenset()) -> None:
    """Refuse options that `what` does not use: a misplaced one with where it belongs, others with a
    "did you mean" suggestion and the accepted names."""
    spelled = _spelling(known)
    for key in options:
        k = key.lower()
        if k.startswith(("kafka.", typed_options.REGISTRY_PREFIX)) or k in spelled or k in tolerated:
            continue
        if k in misplaced:
            raise KwireOptionError(f"Option '{_DOCUMENTED.get(k, key)}' does not apply to {what}: {misplaced[k]}.")
        hint = difflib.get_close_matches(k, list(spelled), n=1, cutoff=0.75)
        suggestion = f" Did you mean '{spelled[hint[0]]}'?" if hint else ""
        raise KwireOptionError(
            f"Unknown option '{key}' for {what}.{suggestion} Accepted options: "
            f"{', '.join(sorted(known, key=str.lower))}, and Kafka client settings prefixed with 'kafka.'."
        )


# Options no use of kwire takes: refused when the options are judged before Spark says which use follows.
_NOT_FOR_ANY_USE = {**{k: _NOT_FOR_READS[k] for k in ("groups", "grouppattern", "checkpointlocation", "queryname")},
                    "path": "kwire takes no path: name the topics with 'subscribe', 'subscribePattern' or 'assign' "
                            "to read, with 'topic' (or a 'topic' column) to write",
                    "paths": "kwire takes no path"}


def reject_unknown_for_any_use(options: Mapping[str, str]) -> None:
    """Refuse options that no use of kwire accepts. This is the level a temporary view's options (and load()'s)
    are judged at, before Spark says whether a read or a write follows; read-only and write-only options are
    judged when one happens."""
    known = sorted(set(BATCH_READ_OPTIONS + STREAM_READ_OPTIONS + WRITE_OPTIONS + ["metadata"]), key=str.lower)
    _reject_unknown({k.lower(): v for k, v in options.items()}, known, "a kwire read or write", _NOT_FOR_ANY_USE)


def kafka_params(options: Mapping[str, str], *, for_write: bool = False) -> dict[str, str]:
    """The `kafka.*` options with the prefix removed, after refusing those Spark's kafka source refuses; values of
    sensitive settings are wrapped in :class:`~spark_kwire.client.settings.secret.Secret`."""
    unsupported = _UNSUPPORTED_KAFKA_WRITE if for_write else _UNSUPPORTED_KAFKA_READ
    params = {}
    for key, value in options.items():
        k = key.lower()
        if not k.startswith("kafka."):
            continue
        name = k[len("kafka."):]
        if name in unsupported:
            raise KwireOptionError(f"Kafka option 'kafka.{name}' is not supported: {unsupported[name]}.")
        params[name] = Secret(value) if is_sensitive_key(name) and not isinstance(value, Secret) else value
    if not str(params.get("bootstrap.servers", "")).strip():
        raise KwireOptionError(
            "Option 'kafka.bootstrap.servers' is required: a comma-separated list of host:port, "
            "e.g. 'broker1:9092,broker2:9092'."
        )
    return params


def kafka_settings(params: Mapping[str, object]) -> tuple[OptionValues, ClientConfig]:
    """The Kafka client settings of a query, parsed once: every name checked (an unknown one refused with the
    closest known one), the security options checked together, then the settings built. A mistake raises
    :class:`KwireOptionError` naming the option as the user spells it (``kafka.``)."""
    try:
        values = parse_options(params, prefix="kafka.")
        check_security_options(values)
        return values, ClientConfig.from_values(values)
    except (UnknownSettingError, RefusedSettingError) as exc:
        raise KwireOptionError(str(exc)) from None
    except ConfigError as exc:
        raise KwireOptionError(f"Option 'kafka.{exc.key}' is not valid: {exc}") from None


_warned_streams: set[str] = set()


def warn_ignored(values: OptionValues, *, stream: str | None = None) -> None:
    """Name the settings that have no effect in kwire in one warning; once per query: a stream's writer, which Spark
    makes for every micro-batch, warns once per checkpoint location (``stream``) in a process."""
    if not values.ignored or (stream is not None and stream in _warned_streams):
        return
    if stream is not None:
        _warned_streams.add(stream)
    log.warning("%s", describe_ignored(values))


def parse_bool(options: Mapping[str, str], name: str, default: bool) -> bool:
    raw = options.get(name.lower())
    if raw is None:
        return default
    value = str(raw).strip().lower()
    if value in ("true", "false"):
        return value == "true"
    raise KwireOptionError(f"Option '{name}' must be 'true' or 'false', got {raw!r}.")


def _parse_json_object(options: Mapping[str, str], name: str, example: str) -> dict:
    raw = options[name.lower()]
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as e:
        raise KwireOptionError(f"Option '{name}' is not valid JSON ({e.msg}); expected e.g. {example}, got {raw!r}.") from None
    if not isinstance(value, dict) or not value:
        raise KwireOptionError(f"Option '{name}' must be a non-empty JSON object like {example}, got {raw!r}.")
    return value


def _parse_partition_map(options: Mapping[str, str], name: str, example: str) -> dict[tuple[str, int], int]:
    """Parse {"topic": {"0": 12, "1": -2}} into {(topic, 0): 12, ...}."""
    result = {}
    for topic, partitions in _parse_json_object(options, name, example).items():
        if not isinstance(partitions, dict):
            raise KwireOptionError(f"Option '{name}': the value for topic {topic!r} must be an object like {example}.")
        for partition, number in partitions.items():
            try:
                p = int(partition)
            except ValueError:
                raise KwireOptionError(f"Option '{name}': partition {partition!r} of topic {topic!r} is not an integer.") from None
            if not isinstance(number, int) or isinstance(number, bool):
                raise KwireOptionError(
                    f"Option '{name}': the value for {topic}-{p} must be an integer, got {number!r}."
                )
            result[(topic, p)] = number
    return result


def parse_names(raw: str, option: str, what: str) -> tuple[str, ...]:
    """Comma-separated names (each once, in order), at least one."""
    names = tuple(dict.fromkeys(n.strip() for n in str(raw).split(",") if n.strip()))
    if not names:
        raise KwireOptionError(f"Option '{option}' must name at least one {what}, e.g. '{what}1,{what}2'.")
    return names


def parse_pattern(raw: str, option: str) -> str:
    """A non-empty, valid regular expression."""
    if not str(raw).strip():
        raise KwireOptionError(f"Option '{option}' must be a non-empty regular expression, e.g. 'events-.*'.")
    try:
        re.compile(raw)
    except re.error as e:
        raise KwireOptionError(f"Option '{option}' is not a valid regular expression ({e}): {raw!r}.") from None
    return raw


@dataclass(frozen=True)
class Subscription:
    """Which topic-partitions to read: exactly one of subscribe, subscribePattern or assign."""
    kind: str  # "subscribe" | "subscribePattern" | "assign"
    topics: tuple[str, ...] = ()
    pattern: str | None = None
    assignment: tuple[tuple[str, int], ...] = ()

    @property
    def topic_filter(self) -> NameFilter:
        """The topics named, as a filter (assign: the topics it names partitions of)."""
        if self.kind == "subscribePattern":
            return NameFilter(pattern=self.pattern, option="subscribePattern")
        return NameFilter(names=self.topics, option=self.kind)

    def describe(self) -> str:
        if self.kind == "subscribe":
            return f"subscribe={','.join(self.topics)}"
        if self.kind == "subscribePattern":
            return f"subscribePattern={self.pattern}"
        return f"assign={len(self.assignment)} partitions"


def parse_subscription(options: Mapping[str, str]) -> Subscription:
    given = [name for name in ("subscribe", "subscribePattern", "assign") if name.lower() in options]
    if len(given) != 1:
        which = "none was given" if not given else f"got {', '.join(given)}"
        raise KwireOptionError(
            f"Exactly one of the options 'subscribe', 'subscribePattern' or 'assign' must be set ({which}): "
            "subscribe='topic1,topic2', subscribePattern='topic.*', or assign='{\"topic\":[0,1]}'."
        )
    kind = given[0]
    raw = options[kind.lower()]
    if kind == "subscribe":
        # each topic once, as Spark's source (its consumer subscribes to a set): 't,t' reads t once
        return Subscription(kind, topics=parse_names(raw, "subscribe", "topic"))
    if kind == "subscribePattern":
        return Subscription(kind, pattern=parse_pattern(raw, "subscribePattern"))
    example = '{"topicA":[0,1],"topicB":[2,4]}'
    assignment = []
    for topic, partitions in _parse_json_object(options, "assign", example).items():
        if not isinstance(partitions, list) or not all(isinstance(p, int) and not isinstance(p, bool) for p in partitions):
            raise KwireOptionError(f"Option 'assign': topic {topic!r} must map to a list of partition numbers, like {example}.")
        assignment.extend((topic, p) for p in partitions)
    if not assignment:
        raise KwireOptionError(f"Option 'assign' names no partitions; expected e.g. {example}.")
    return Subscription(kind, topics=tuple(dict.fromkeys(t for t, _ in assignment)), assignment=tuple(assignment))


@dataclass(frozen=True)
class OffsetBound:
    """Where a read starts or ends.

    kind: "earliest" | "latest" | "offsets" (per partition, -2/-1 allowed) | "timestamp" (one for all
    partitions) | "timestamps" (per partition) | "group" (a consumer group's committed offsets).
    """
    kind: str
    offsets: tuple[tuple[tuple[str, int], int], ...] = ()
    timestamp: int | None = None
    group: str | None = None

    @property
    def offset_map(self) -> dict[tuple[str, int], int]:
        return dict(self.offsets)


def parse_offset_bound(options: Mapping[str, str], side: str, *, default: str, streaming: bool = False,
                       group_id: str | None = None) -> OffsetBound:
    """Parse the starting or ending bound ('starting' or 'ending') with Spark's precedence:
    the global timestamp, then per-partition timestamps, then offsets. ``group_id``: kafka.group.id."""
    ts_name, by_ts_name, offsets_name = f"{side}Timestamp", f"{side}OffsetsByTimestamp", f"{side}Offsets"
    if ts_name.lower() in options:
        raw = options[ts_name.lower()]
        try:
            ts = int(str(raw).strip())
        except ValueError:
            ts = -1
        if ts < 0:
            raise KwireOptionError(f"Option '{ts_name}' must be a timestamp in milliseconds since the epoch (>= 0), got {raw!r}.")
        return OffsetBound("timestamp", timestamp=ts)
    if by_ts_name.lower() in options:
        example = '{"topicA":{"0":1700000000000,"1":1700000000000}}'
        mapping = _parse_partition_map(options, by_ts_name, example)
        for (topic, p), ts in mapping.items():
            if ts < 0:
                raise KwireOptionError(f"Option '{by_ts_name}': the timestamp for {topic}-{p} must be >= 0, got {ts}.")
        return OffsetBound("timestamps", offsets=tuple(sorted(mapping.items())))
    raw = options.get(offsets_name.lower(), default).strip()
    lowered = raw.lower()
    if side == "starting" and lowered == "group":
        group = options.get("startingoffsetsgroup") or group_id or options.get("commitoffsetstogroup")
        if not group:
            raise KwireOptionError(
                "startingOffsets='group' needs a consumer group: set 'commitOffsetsToGroup' (or 'startingOffsetsGroup')."
            )
        return OffsetBound("group", group=group)
    if lowered in ("earliest", "latest"):
        bound = OffsetBound(lowered)
    elif raw.startswith("{"):
        example = '{"topicA":{"0":23,"1":-1},"topicB":{"0":-2}}'
        mapping = _parse_partition_map(options, offsets_name, example) if offsets_name.lower() in options else {}
        for (topic, p), offset in mapping.items():
            if offset < EARLIEST:
                raise KwireOptionError(
                    f"Option '{offsets_name}': offset {offset} for {topic}-{p} is invalid; use an offset >= 0, "
                    "-2 for earliest or -1 for latest."
                )
        bound = OffsetBound("offsets", offsets=tuple(sorted(mapping.items())))
    else:
        raise KwireOptionError(
            f"Option '{offsets_name}' must be 'earliest', 'latest' or JSON like "
            f"'{{\"topicA\":{{\"0\":23,\"1\":-1}}}}', got {raw!r}."
        )
    # The same restrictions as Spark's source.
    if side == "starting" and not streaming:
        if bound.kind == "latest" or any(o == LATEST for _, o in bound.offsets):
            raise KwireOptionError("startingOffsets can't be 'latest' (or -1) for batch queries; use 'earliest', offsets or timestamps.")
    if side == "ending":
        if bound.kind == "earliest" or any(o == EARLIEST for _, o in bound.offsets):
            raise KwireOptionError("endingOffsets can't be 'earliest' (or -2) for batch queries; use 'latest', offsets or timestamps.")
    return bound


_STRATEGIES = ("error", "latest")
# streamReadMode: where a stream's micro-batches are read (spark/reading/stream_mode.py decides what auto means).
STREAM_READ_MODES = ("auto", "tasks", "driver")


def parse_stream_read_mode(opts: Mapping[str, str]) -> str:
    raw = opts.get("streamreadmode", "auto")
    mode = str(raw).strip().lower()
    if mode not in STREAM_READ_MODES:
        raise KwireOptionError(
            f"Option 'streamReadMode' must be 'auto', 'tasks' or 'driver', got {raw!r}: 'tasks' reads each "
            "micro-batch in Spark tasks, 'driver' in the driver's source process (small micro-batches), 'auto' "
            "chooses when the query starts.")
    return mode


@dataclass(frozen=True)
class ReadOptions:
    """Everything a batch or streaming read needs, validated at planning time."""
    kafka: ClientConfig = field(hash=False, repr=False)  # the Kafka client settings (secrets show as '***')
    subscription: Subscription
    starting: OffsetBound
    ending: OffsetBound | None
    fail_on_data_loss: bool
    include_headers: bool
    min_partitions: int | None
    max_records_per_partition: int | None
    timestamp_strategy: str
    max_offsets_per_trigger: int | None = None
    min_offsets_per_trigger: int | None = None
    max_trigger_delay_ms: int = 15 * 60 * 1000
    commit_group: str | None = None
    stream_read_mode: str = "auto"  # streams only: "auto" | "tasks" | "driver"
    # Records per Spark partition when kwire packs ranges (packing.py); None when it does not pack.
    pack_target: int | None = None
    delegation_token: str | None = None  # tasks' SCRAM mechanism with delegationToken=true (delegation.py)
    typed: typed_options.TypedOptions | None = None  # typed keys or values (spark/typed/); None: both binary

    @property
    def read_committed(self) -> bool:
        return self.kafka.read_committed

    @classmethod
    def parse(cls, options: Mapping[str, str], *, streaming: bool | None = False) -> "ReadOptions":
        """Validate and interpret a read's options. `streaming=None` checks only what is wrong for batch and
        streaming reads alike: the source does that when the DataFrame is defined (load()), before Spark
        says which of the two it will be, so that most mistakes fail there, as with Spark's source."""
        opts = {k.lower(): v for k, v in options.items()}
        if streaming is None:
            known, misplaced, what = sorted(set(BATCH_READ_OPTIONS) | set(STREAM_READ_OPTIONS)), _NOT_FOR_READS, "read"
        elif streaming:
            known, misplaced, what = STREAM_READ_OPTIONS, {**_NOT_FOR_READS, **_NOT_FOR_STREAM_READS}, "streaming read"
        else:
            known, misplaced, what = BATCH_READ_OPTIONS, {**_NOT_FOR_READS, **_NOT_FOR_BATCH_READS}, "batch read"
        _reject_unknown(opts, known, f"a kwire {what}", misplaced)
        params = kafka_params(opts)
        # kwire's own bound on how far compressed batches may inflate (no Kafka property says it)
        max_inflated = parse_positive_int(opts, "maxDecompressedBytes")
        if max_inflated is not None:
            params["kwire.max.decompressed.bytes"] = max_inflated
        # Spark's executors give up on a poll after kafkaConsumer.pollTimeoutMs; kwire's readers retry a fetch that
        # makes no progress for default.api.timeout.ms, so the one stands for the other unless both are given.
        poll_timeout = parse_positive_int(opts, "kafkaConsumer.pollTimeoutMs")
        if poll_timeout is not None and "default.api.timeout.ms" not in params:
            params["default.api.timeout.ms"] = poll_timeout
        # Spark's driver retries offset lookups fetchOffset.numRetries times; kwire's retry within
        # kafka.default.api.timeout.ms instead (docs/options.md). Their values are still checked, as Spark parses them.
        parse_non_negative_int(opts, "fetchOffset.numRetries")
        parse_non_negative_int(opts, "fetchOffset.retryIntervalMs")
        values, kafka = kafka_settings(params)
        if streaming is not None:  # reader() or streamReader(), once per query (load() says None)
            warn_ignored(values)
        strategy = opts.get("startingoffsetsbytimestampstrategy", "error").strip().lower()
        if strategy not in _STRATEGIES:
            raise KwireOptionError(
                f"Option 'startingOffsetsByTimestampStrategy' must be 'error' or 'latest', got {strategy!r}."
            )
        commit_group = opts.get("commitoffsetstogroup")
        if commit_group is not None and not commit_group.strip():
            raise KwireOptionError("Option 'commitOffsetsToGroup' must name a consumer group.")
        max_offsets = parse_positive_int(opts, "maxOffsetsPerTrigger")
        min_offsets = parse_positive_int(opts, "minOffsetsPerTrigger")
        if max_offsets is not None and min_offsets is not None and min_offsets > max_offsets:
            raise KwireOptionError(
                f"Option 'minOffsetsPerTrigger' ({min_offsets}) is higher than 'maxOffsetsPerTrigger' ({max_offsets})."
            )
        delay_ms = parse_duration_ms(opts.get("maxtriggerdelay", "15m"), "maxTriggerDelay")
        if streaming is False:
            for name in _STREAM_ONLY_IGNORED_IN_BATCH:
                if name.lower() in opts:
                    log.warning("kwire: option '%s' is ignored in batch queries (as by Spark's kafka source)", name)
        starting = parse_offset_bound(opts, "starting", default="latest" if streaming is not False else "earliest",
                                      streaming=streaming is not False, group_id=kafka.group_id)
        if "startingoffsetsgroup" in opts and starting.kind != "group":
            raise KwireOptionError(
                "Option 'startingOffsetsGroup' names the consumer group to start from and is used only with "
                "startingOffsets='group'."
            )
        min_partitions = parse_positive_int(opts, "minPartitions")
        max_records = parse_positive_int(opts, "maxRecordsPerPartition")
        return cls(
            kafka=kafka,
            subscription=parse_subscription(opts),
            starting=starting,
            ending=None if streaming else parse_offset_bound(opts, "ending", default="latest"),
            fail_on_data_loss=parse_bool(opts, "failOnDataLoss", True),
            include_headers=parse_bool(opts, "includeHeaders", False),
            min_partitions=min_partitions,
            max_records_per_partition=max_records,
            pack_target=parse_packing(opts, spark_cut=bool(min_partitions or max_records)),
            timestamp_strategy=strategy,
            max_offsets_per_trigger=max_offsets,
            min_offsets_per_trigger=min_offsets,
            max_trigger_delay_ms=delay_ms,
            commit_group=commit_group.strip() if commit_group else None,
            stream_read_mode=parse_stream_read_mode(opts),
            delegation_token=parse_delegation_token(opts, kafka),
            typed=typed_options.parse_typed(opts, write=False),
        )


DEFAULT_PACK_TARGET_RECORDS = 200_000


def parse_packing(opts: Mapping[str, str], *, spark_cut: bool) -> int | None:
    """The records per Spark partition kwire packs small ranges to, or None when it does not pack.

    packPartitions (default true) and targetRecordsPerPartition are kwire's; minPartitions and
    maxRecordsPerPartition are Spark's and, when given, cut the read exactly as Spark's source does,
    so they cannot be combined with asking for packing."""
    pack = parse_bool(opts, "packPartitions", True)
    target = parse_positive_int(opts, "targetRecordsPerPartition")
    if spark_cut:
        asked = [name for name in ("packPartitions", "targetRecordsPerPartition")
                 if name.lower() in opts and not (name == "packPartitions" and not pack)]
        if asked:
            raise KwireOptionError(
                f"Option '{asked[0]}' cannot be combined with 'minPartitions' or 'maxRecordsPerPartition': those "
                "cut the read into Spark partitions exactly as Spark's kafka source does, without packing. "
                "Drop one of them.")
        return None
    if not pack:
        if target is not None:
            raise KwireOptionError(
                "Option 'targetRecordsPerPartition' sets the size of packed Spark partitions, but "
                "'packPartitions' is 'false'. Drop one of them.")
        return None
    return target or DEFAULT_PACK_TARGET_RECORDS


_DURATION = re.compile(r"^\s*(\d+)\s*(ms|s|m|h|d|milliseconds?|seconds?|minutes?|hours?|days?)?\s*$", re.I)
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


def parse_duration_ms(raw: str, name: str) -> int:
    """'15m', '30s', '500ms', '1h' or a bare number of milliseconds."""
    match = _DURATION.match(str(raw))
    if not match:
        raise KwireOptionError(f"Option '{name}' must be a duration like '500ms', '30s', '15m' or '1h', got {raw!r}.")
    number, unit = int(match.group(1)), (match.group(2) or "ms").lower()
    key = {"millisecond": "ms", "milliseconds": "ms", "second": "s", "seconds": "s", "minute": "m", "minutes": "m",
           "hour": "h", "hours": "h", "day": "d", "days": "d"}.get(unit, unit)
    return number * _UNIT_MS[key]


@dataclass(frozen=True)
class WriteOptions:
    """Options of the kwire sink."""
    kafka: ClientConfig = field(hash=False, repr=False)  # the Kafka client settings (secrets show as '***')
    topic: str | None
    delivery_guarantee: str = "at-least-once"  # or "exactly-once" (spark/writing/exactly_once.py)
    transactional_id_prefix: str | None = None  # exactly-once only; tasks use <prefix>-<partition id>
    transaction_timeout_ms: int | None = None  # exactly-once only
    delegation_token: str | None = None  # tasks' SCRAM mechanism with delegationToken=true (delegation.py)
    typed: typed_options.TypedOptions | None = None  # typed keys or values (spark/typed/); None: both binary

    @property
    def exactly_once(self) -> bool:
        return self.delivery_guarantee == "exactly-once"

    @classmethod
    def parse(cls, options: Mapping[str, str], *, streaming: bool = False, warn: bool = True) -> "WriteOptions":
        """Validate and interpret a write's options; ``warn`` names the settings with no effect (once per query)."""
        opts = {k.lower(): v for k, v in options.items()}
        if streaming:
            _reject_unknown(opts, WRITE_OPTIONS, "a kwire streaming write", _NOT_FOR_WRITES,
                            tolerated=_SPARK_INJECTED_STREAM_WRITE)
        else:
            _reject_unknown(opts, WRITE_OPTIONS, "a kwire write", {**_NOT_FOR_WRITES, **_NOT_FOR_BATCH_WRITES})
        values, kafka = kafka_settings(kafka_params(opts, for_write=True))
        if warn:
            warn_ignored(values, stream=str(opts.get("checkpointlocation")) if streaming else None)
        topic = opts.get("topic")
        if topic is not None and not topic.strip():
            raise KwireOptionError("Option 'topic' must name a topic when given.")
        from spark_kwire.spark.writing.exactly_once import transaction_options

        guarantee, prefix, timeout_ms = transaction_options(opts, values, streaming=streaming)
        return cls(kafka=kafka, topic=topic.strip() if topic else None, delivery_guarantee=guarantee,
                   transactional_id_prefix=prefix, transaction_timeout_ms=timeout_ms,
                   delegation_token=parse_delegation_token(opts, kafka),
                   typed=typed_options.parse_typed(opts, write=True))
