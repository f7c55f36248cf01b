"""Options of the kwire source and sink, named and interpreted as Spark's built-in `kafka` source does.

Spark hands a data source its options in a case-insensitive dict whose keys are lower-cased, so every
lookup here uses lower-case keys and every error message uses the documented spelling.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from dataclasses import dataclass, field
from typing import Mapping

from spark_kwire.client.admin.cluster_tables import NameFilter
from spark_kwire.client.errors import ConfigError
from spark_kwire.client.settings.config import ClientConfig
from spark_kwire.client.settings.parse import ConflictingSettingsError, OptionValues, RefusedSettingError, \
    UnknownSettingError, describe_ignored, parse_options
from spark_kwire.client.settings.secret import Secret, is_sensitive_key
from spark_kwire.spark.errors import KwireOptionError
from spark_kwire.spark.options.names import BY_KEY, READS, Use
from spark_kwire.spark.options.payloads import TypedOptions, parse_typed
from spark_kwire.spark.options.rules import SUBSCRIPTIONS, check_names, given, ignored_in, kafka_refused, value
from spark_kwire.spark.options.security import parse_delegation_token
from spark_kwire.spark.options.values import AT_LEAST_ONCE, EARLIEST, EXACTLY_ONCE, LATEST

log = logging.getLogger("spark_kwire")


def kafka_params(options: Mapping[str, str], use: Use) -> dict[str, str]:
    """The `kafka.*` options with the prefix removed, after refusing those Spark's kafka source refuses in ``use``;
    values of sensitive settings are wrapped in :class:`~spark_kwire.client.settings.secret.Secret`."""
    unsupported = kafka_refused(use)
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
    closest known one), the settings that go together checked together, then the settings built. A mistake raises
    :class:`KwireOptionError` naming the option as the user spells it (``kafka.``)."""
    try:
        values = parse_options(params, prefix="kafka.")
        return values, ClientConfig.from_values(values)
    except (UnknownSettingError, RefusedSettingError, ConflictingSettingsError) as exc:
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
    given_kinds = [name for name in SUBSCRIPTIONS if given(options, name)]
    if len(given_kinds) != 1:
        which = "none was given" if not given_kinds else f"got {', '.join(given_kinds)}"
        quoted = [f"'{name}'" for name in SUBSCRIPTIONS]
        raise KwireOptionError(
            f"Exactly one of the options {', '.join(quoted[:-1])} or {quoted[-1]} must be set ({which}): "
            "subscribe='topic1,topic2', subscribePattern='topic.*', or assign='{\"topic\":[0,1]}'."
        )
    kind = given_kinds[0]
    if kind == "subscribe":
        # each topic once, as Spark's source (its consumer subscribes to a set): 't,t' reads t once
        return Subscription(kind, topics=value(options, kind))
    if kind == "subscribePattern":
        return Subscription(kind, pattern=value(options, kind))
    assignment = value(options, kind)
    return Subscription(kind, topics=tuple(dict.fromkeys(t for t, _ in assignment)), assignment=assignment)


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
    if given(options, ts_name):
        return OffsetBound("timestamp", timestamp=value(options, ts_name))
    if given(options, by_ts_name):
        return OffsetBound("timestamps", offsets=tuple(sorted(value(options, by_ts_name).items())))
    spec = value(options, offsets_name) if given(options, offsets_name) else default
    if spec == "group":
        group = value(options, "startingOffsetsGroup") or group_id or value(options, "commitOffsetsToGroup")
        if not group:
            raise KwireOptionError(
                "startingOffsets='group' needs a consumer group: set 'commitOffsetsToGroup' (or 'startingOffsetsGroup')."
            )
        return OffsetBound("group", group=group)
    bound = OffsetBound(spec) if isinstance(spec, str) else OffsetBound("offsets", offsets=tuple(sorted(spec.items())))
    # The same restrictions as Spark's source.
    if side == "starting" and not streaming:
        if bound.kind == "latest" or any(o == LATEST for _, o in bound.offsets):
            raise KwireOptionError("startingOffsets can't be 'latest' (or -1) for batch queries; use 'earliest', offsets or timestamps.")
    if side == "ending":
        if bound.kind == "earliest" or any(o == EARLIEST for _, o in bound.offsets):
            raise KwireOptionError("endingOffsets can't be 'earliest' (or -2) for batch queries; use 'latest', offsets or timestamps.")
    return bound


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
    stream_read_mode: str = "auto"  # streams only: "auto" | "tasks" | "driver" (reading/stream_mode.py)
    # Records per Spark partition when kwire packs ranges (packing.py); None when it does not pack.
    pack_target: int | None = None
    delegation_token: str | None = None  # tasks' SCRAM mechanism with delegationToken=true (delegation.py)
    typed: TypedOptions | None = None  # typed keys or values (spark/typed/); None: both binary

    @property
    def read_committed(self) -> bool:
        return self.kafka.read_committed

    @classmethod
    def parse(cls, options: Mapping[str, str], *, streaming: bool | None = False) -> "ReadOptions":
        """Validate and interpret a read's options. `streaming=None` checks only what is wrong for batch and
        streaming reads alike: the source does that when the DataFrame is defined (load()), before Spark
        says which of the two it will be, so that most mistakes fail there, as with Spark's source."""
        opts = {k.lower(): v for k, v in options.items()}
        uses = READS if streaming is None else {Use.STREAM_READ if streaming else Use.BATCH_READ}
        check_names(opts, uses)
        params = kafka_params(opts, Use.STREAM_READ if streaming else Use.BATCH_READ)
        # kwire's own bound on how far compressed batches may inflate (no Kafka property says it)
        max_inflated = value(opts, "maxDecompressedBytes")
        if max_inflated is not None:
            params["kwire.max.decompressed.bytes"] = max_inflated
        # Spark's executors give up on a poll after kafkaConsumer.pollTimeoutMs; kwire's readers retry a fetch that
        # makes no progress for default.api.timeout.ms, so the one stands for the other unless both are given.
        poll_timeout = value(opts, "kafkaConsumer.pollTimeoutMs")
        if poll_timeout is not None and "default.api.timeout.ms" not in params:
            params["default.api.timeout.ms"] = poll_timeout
        # Spark's driver retries offset lookups fetchOffset.numRetries times; kwire's retry within
        # kafka.default.api.timeout.ms instead (docs/options.md). Their values are still checked, as Spark parses them.
        value(opts, "fetchOffset.numRetries")
        value(opts, "fetchOffset.retryIntervalMs")
        values, kafka = kafka_settings(params)
        if streaming is not None:  # reader() or streamReader(), once per query (load() says None)
            warn_ignored(values)
        strategy = value(opts, "startingOffsetsByTimestampStrategy")
        commit_group = value(opts, "commitOffsetsToGroup")
        max_offsets = value(opts, "maxOffsetsPerTrigger")
        min_offsets = value(opts, "minOffsetsPerTrigger")
        if max_offsets is not None and min_offsets is not None and min_offsets > max_offsets:
            raise KwireOptionError(
                f"Option 'minOffsetsPerTrigger' ({min_offsets}) is higher than 'maxOffsetsPerTrigger' ({max_offsets})."
            )
        delay_ms = value(opts, "maxTriggerDelay")
        if streaming is False:
            for name in ignored_in(Use.BATCH_READ):
                if given(opts, name):
                    log.warning("kwire: option '%s' is ignored in batch queries (as by Spark's kafka source)", name)
        starting = parse_offset_bound(opts, "starting", default="latest" if streaming is not False else "earliest",
                                      streaming=streaming is not False, group_id=kafka.group_id)
        if given(opts, "startingOffsetsGroup") and starting.kind != "group":
            raise KwireOptionError(
                "Option 'startingOffsetsGroup' names the consumer group to start from and is used only with "
                "startingOffsets='group'."
            )
        min_partitions = value(opts, "minPartitions")
        max_records = value(opts, "maxRecordsPerPartition")
        return cls(
            kafka=kafka,
            subscription=parse_subscription(opts),
            starting=starting,
            ending=None if streaming else parse_offset_bound(opts, "ending", default="latest"),
            fail_on_data_loss=value(opts, "failOnDataLoss"),
            include_headers=value(opts, "includeHeaders"),
            min_partitions=min_partitions,
            max_records_per_partition=max_records,
            pack_target=parse_packing(opts, spark_cut=bool(min_partitions or max_records)),
            timestamp_strategy=strategy,
            max_offsets_per_trigger=max_offsets,
            min_offsets_per_trigger=min_offsets,
            max_trigger_delay_ms=delay_ms,
            commit_group=commit_group,
            stream_read_mode=value(opts, "streamReadMode"),
            delegation_token=parse_delegation_token(opts, kafka),
            typed=parse_typed(opts, write=False),
        )


DEFAULT_PACK_TARGET_RECORDS = BY_KEY["targetrecordsperpartition"].default


def parse_packing(opts: Mapping[str, str], *, spark_cut: bool) -> int | None:
    """The records per Spark partition kwire packs small ranges to, or None when it does not pack.

    packPartitions (default true) and targetRecordsPerPartition are kwire's; minPartitions and
    maxRecordsPerPartition are Spark's and, when given, cut the read exactly as Spark's source does,
    so they cannot be combined with asking for packing."""
    pack = value(opts, "packPartitions")
    target = value(opts, "targetRecordsPerPartition")
    if spark_cut:
        asked = [name for name in ("packPartitions", "targetRecordsPerPartition")
                 if given(opts, name) and not (name == "packPartitions" and not pack)]
        if asked:
            raise KwireOptionError(
                f"Option '{asked[0]}' cannot be combined with 'minPartitions' or 'maxRecordsPerPartition': those "
                "cut the read into Spark partitions exactly as Spark's kafka source does, without packing. "
                "Drop one of them.")
        return None
    if not pack:
        if given(opts, "targetRecordsPerPartition"):
            raise KwireOptionError(
                "Option 'targetRecordsPerPartition' sets the size of packed Spark partitions, but "
                "'packPartitions' is 'false'. Drop one of them.")
        return None
    return target


@dataclass(frozen=True)
class WriteOptions:
    """Options of the kwire sink."""
    kafka: ClientConfig = field(hash=False, repr=False)  # the Kafka client settings (secrets show as '***')
    topic: str | None
    delivery_guarantee: str = AT_LEAST_ONCE  # or EXACTLY_ONCE (spark/writing/exactly_once.py)
    transactional_id_prefix: str | None = None  # exactly-once only; tasks use <prefix>-<partition id>
    transaction_timeout_ms: int | None = None  # exactly-once only
    delegation_token: str | None = None  # tasks' SCRAM mechanism with delegationToken=true (delegation.py)
    typed: TypedOptions | None = None  # typed keys or values (spark/typed/); None: both binary

    @property
    def exactly_once(self) -> bool:
        return self.delivery_guarantee == EXACTLY_ONCE

    @classmethod
    def parse(cls, options: Mapping[str, str], *, streaming: bool = False, warn: bool = True) -> "WriteOptions":
        """Validate and interpret a write's options; ``warn`` names the settings with no effect (once per query)."""
        opts = {k.lower(): v for k, v in options.items()}
        use = Use.STREAM_WRITE if streaming else Use.BATCH_WRITE
        check_names(opts, {use})
        values, kafka = kafka_settings(kafka_params(opts, use))
        if warn:
            warn_ignored(values, stream=str(value(opts, "checkpointLocation")) if streaming else None)
        topic = value(opts, "topic")
        guarantee, prefix, timeout_ms = transaction_options(opts, values, streaming=streaming)
        return cls(kafka=kafka, topic=topic, delivery_guarantee=guarantee, transactional_id_prefix=prefix,
                   transaction_timeout_ms=timeout_ms, delegation_token=parse_delegation_token(opts, kafka),
                   typed=parse_typed(opts, write=True))


def transaction_options(opts: Mapping[str, str], kafka: OptionValues, *,
                        streaming: bool) -> tuple[str, str | None, int | None]:
    """(deliveryGuarantee, transactionalIdPrefix, transaction timeout ms) from lower-cased write options and the
    query's Kafka settings as read."""
    guarantee = value(opts, "deliveryGuarantee")
    if guarantee == AT_LEAST_ONCE:
        if given(opts, "transactionalIdPrefix"):
            raise KwireOptionError("Option 'transactionalIdPrefix' applies only with "
                                   "deliveryGuarantee=exactly-once; at-least-once writes use no transactions.")
        if "transaction.timeout.ms" in kafka.given:
            raise KwireOptionError("Option 'kafka.transaction.timeout.ms' applies only with "
                                   "deliveryGuarantee=exactly-once; at-least-once writes use no transactions.")
        return guarantee, None, None
    if given(opts, "transactionalIdPrefix"):
        prefix = value(opts, "transactionalIdPrefix")
    else:
        prefix = default_prefix(value(opts, "checkpointLocation"), streaming=streaming)
    return guarantee, prefix, kafka.get("transaction.timeout.ms", 60_000)


def default_prefix(checkpoint_location: str | None, *, streaming: bool) -> str:
    """The transactionalIdPrefix used when none is given: derived from the checkpoint location for a stream
    (the same after a restart, so the restarted query fences the crashed one), unique per job for a batch
    write."""
    if not streaming:
        return f"kwire-{uuid.uuid4().hex}"
    if not checkpoint_location:
        raise KwireOptionError(
            "deliveryGuarantee=exactly-once on a stream needs a transactionalIdPrefix that stays the same when the "
            "query restarts: set option('transactionalIdPrefix', ...) (unique per query), or set the "
            "checkpointLocation option on writeStream, from which kwire derives one.")
    digest = hashlib.sha256(str(checkpoint_location).rstrip("/").encode()).hexdigest()[:20]
    return f"kwire-{digest}"
