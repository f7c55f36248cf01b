"""The cluster as DataFrames: option("metadata", "<table>") reads topics, partitions, groups or group offsets.

    spark.read.format("kwire").option("kafka.bootstrap.servers", "host:9092") \\
        .option("metadata", "group_offsets").option("groups", "my-group").load()

Every table has a fixed schema (below); the connection and security options are those of ordinary reads
(`kafka.*`). Other options accepted, by table:

=============== ============================================ ==============================================
table           filters                                      Spark partitions
=============== ============================================ ==============================================
topics          subscribe / subscribePattern                 one (a Metadata and a DescribeConfigs request)
partitions      subscribe / subscribePattern                 one per partition-leader broker (ListOffsets)
groups          groups / groupPattern                        one per group-coordinator broker
group_offsets   groups / groupPattern, subscribe /           one per group-coordinator broker
                subscribePattern
=============== ============================================ ==============================================

`subscribe` and `groups` are comma-separated names; `subscribePattern` and `groupPattern` are regular
expressions that must match the whole name (as Java's `Pattern.matches`, like Spark's `subscribePattern`).
Without a filter every topic (internal ones included, as `kafka-topics.sh --describe` shows them) or every
group the principal may describe is read.

Like Kafka's tools: a topic named in `subscribe` that does not exist is an error naming it
(`kafka-topics.sh --describe --topic x`: "Topic 'x' does not exist"), and so is a group named in `groups`
(`kafka-consumer-groups.sh --describe --group x`: "GroupIdNotFoundException: Group x not found"); patterns
that match nothing give an empty DataFrame. Authorization failures raise :class:`MetadataAuthorizationError`
naming the Kafka error, the resource and the ACL operation it needs.

`group_offsets` has a row for each partition a group has committed an offset for (a member's assigned
partition without a commit, shown with "-" by kafka-consumer-groups.sh, has none); `lag` is
`latest_offset - committed_offset`, as that tool computes LAG. KIP-848 groups (group.protocol=consumer),
which DescribeGroups cannot see, are described by ConsumerGroupDescribe: `protocol` is the server-side
assignor (e.g. "uniform"); on a broker without that API their `member_count` (unless Empty) and `protocol`
are null.

Offsets come from ListOffsets with the client's isolation level (read_uncommitted unless
`kafka.isolation.level` says otherwise), as `kafka-consumer-groups.sh` and `kafka-get-offsets.sh` do.
"""

from __future__ import annotations

import datetime as _dt
import difflib
import re
from contextlib import contextmanager
from typing import Iterable, Iterator, Mapping

from pyspark.sql.datasource import DataSourceReader, InputPartition
from pyspark.sql.types import (ArrayType, BooleanType, IntegerType, LongType, StringType, StructField, StructType,
                               TimestampType)

from spark_kwire.client.admin import Admin
from spark_kwire.client.errors import RetriesExhaustedError, UnknownTopicError, UnsupportedVersionError
from spark_kwire.client.offsets import list_offsets
from spark_kwire.protocol.errors import KafkaApiError, KwireError
from spark_kwire.spark.options import KwireOptionError, kafka_params

__all__ = ["TABLES", "metadata_schema", "MetadataReader", "MetadataPartition", "MetadataAuthorizationError",
           "topic_rows", "partition_rows", "group_rows", "group_offset_rows"]


def _fields(*spec: tuple) -> StructType:
    return StructType([StructField(name, dtype, nullable) for name, dtype, nullable in spec])


_INT_ARRAY = ArrayType(IntegerType(), containsNull=False)

#: The fixed schema of each table. Non-nullable columns always have a value; see the docs of each column.
SCHEMAS: dict[str, StructType] = {
    # One row per topic. The configs are the topic's effective values (DescribeConfigs).
    "topics": _fields(
        ("topic", StringType(), False),
        ("partitions", IntegerType(), False),          # partition count
        ("replication_factor", IntegerType(), False),  # replicas of its first partition, as kafka-topics.sh
        ("is_internal", BooleanType(), False),         # __consumer_offsets, __transaction_state, ...
        ("cleanup_policy", StringType(), True),        # "delete", "compact" or "compact,delete"
        ("retention_ms", LongType(), True),            # -1: no time limit
        ("max_message_bytes", IntegerType(), True),
    ),
    # One row per topic-partition.
    "partitions": _fields(
        ("topic", StringType(), False),
        ("partition", IntegerType(), False),
        ("leader", IntegerType(), True),               # broker id; null when the partition has no leader
        ("replicas", _INT_ARRAY, False),
        ("isr", _INT_ARRAY, False),
        ("earliest_offset", LongType(), True),         # log start offset; null without a leader
        ("latest_offset", LongType(), True),           # log end offset (high watermark)
        ("record_count_estimate", LongType(), True),   # latest - earliest (compaction, markers make it an estimate)
        ("latest_record_timestamp", TimestampType(), True),  # ListOffsets MAX_TIMESTAMP; null when empty/unsupported
    ),
    # One row per group (consumer groups and any other kind ListGroups shows).
    "groups": _fields(
        ("group_id", StringType(), False),
        ("state", StringType(), True),                 # Stable, Empty, PreparingRebalance, ...
        ("protocol_type", StringType(), True),         # "consumer", "connect", ...; null when none
        ("protocol", StringType(), True),              # the assignor: "range" (client side), "uniform" (KIP-848)
        ("coordinator", IntegerType(), True),          # broker id of the group coordinator
        ("member_count", IntegerType(), True),         # null only where a broker cannot describe the group
    ),
    # One row per (group, topic, partition) with a committed offset: the lag table.
    "group_offsets": _fields(
        ("group", StringType(), False),
        ("topic", StringType(), False),
        ("partition", IntegerType(), False),
        ("committed_offset", LongType(), False),
        ("latest_offset", LongType(), True),           # log end offset; null if the topic vanished meanwhile
        ("lag", LongType(), True),                     # latest_offset - committed_offset
        ("metadata", StringType(), True),              # the metadata string committed with the offset
    ),
}
TABLES = tuple(SCHEMAS)

# The options a metadata read accepts (lower-case key -> documented spelling), and which tables use them.
_OPTION_NAMES = {"metadata": "metadata", "subscribe": "subscribe", "subscribepattern": "subscribePattern",
                 "groups": "groups", "grouppattern": "groupPattern"}
_TOPIC_FILTERS = ("subscribe", "subscribepattern")
_GROUP_FILTERS = ("groups", "grouppattern")
_APPLIES = {"topics": _TOPIC_FILTERS, "partitions": _TOPIC_FILTERS, "groups": _GROUP_FILTERS,
            "group_offsets": _TOPIC_FILTERS + _GROUP_FILTERS}
_SPARK_INJECTED = {"path", "paths"}

TOPIC_CONFIGS = ("cleanup.policy", "retention.ms", "max.message.bytes")

TOPIC_AUTHORIZATION_FAILED, GROUP_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_FAILED = 29, 30, 31
GROUP_ID_NOT_FOUND = 69
_AUTH_CODES = (TOPIC_AUTHORIZATION_FAILED, GROUP_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_FAILED)


class MetadataAuthorizationError(KwireError):
    """The principal may not see what a metadata read asked for; names the error, the resource and the ACL."""


def _table_name(table: str | None) -> str:
    name = (table or "").strip().lower()
    if name not in SCHEMAS:
        hint = difflib.get_close_matches(name, TABLES, n=1, cutoff=0.6)
        suggestion = f" Did you mean '{hint[0]}'?" if hint else ""
        raise KwireOptionError(
            f"Unknown metadata table {table!r} (option 'metadata').{suggestion} "
            f"Accepted tables: {', '.join(TABLES)}."
        )
    return name


def metadata_schema(table: str) -> StructType:
    """The fixed schema of metadata table `table` (one of :data:`TABLES`)."""
    return SCHEMAS[_table_name(table)]


# -- options --------------------------------------------------------------------------------------------------

def _names(raw: str, option: str, what: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(n.strip() for n in str(raw).split(",") if n.strip()))
    if not names:
        raise KwireOptionError(f"Option '{option}' must name at least one {what}, e.g. '{what}1,{what}2'.")
    return names


def _pattern(raw: str, option: str) -> str:
    if not str(raw).strip():
        raise KwireOptionError(f"Option '{option}' must be a non-empty regular expression, e.g. 'events-.*'.")
    try:
        re.compile(raw)
    except re.error as e:
        raise KwireOptionError(f"Option '{option}' is not a valid regular expression ({e}): {raw!r}.") from None
    return raw


class NameFilter:
    """Exact names (`subscribe` / `groups`), a whole-name regex (`*Pattern`), or everything."""

    def __init__(self, names: tuple[str, ...] | None = None, pattern: str | None = None, option: str = "") -> None:
        self.names, self.pattern, self.option = names, pattern, option

    def __repr__(self) -> str:
        return f"NameFilter(names={self.names!r}, pattern={self.pattern!r})"

    def matches(self, name: str) -> bool:
        if self.names is not None:
            return name in self.names
        if self.pattern is not None:
            return re.fullmatch(self.pattern, name) is not None
        return True

    @classmethod
    def parse(cls, opts: Mapping[str, str], names_key: str, pattern_key: str, what: str) -> "NameFilter":
        given = [k for k in (names_key, pattern_key) if k in opts]
        if len(given) > 1:
            raise KwireOptionError(
                f"Give at most one of the options '{_OPTION_NAMES[names_key]}' and '{_OPTION_NAMES[pattern_key]}'.")
        if names_key in opts:
            return cls(names=_names(opts[names_key], _OPTION_NAMES[names_key], what), option=_OPTION_NAMES[names_key])
        if pattern_key in opts:
            return cls(pattern=_pattern(opts[pattern_key], _OPTION_NAMES[pattern_key]),
                       option=_OPTION_NAMES[pattern_key])
        return cls()


def parse_metadata_options(table: str, options: Mapping[str, str]) -> tuple[str, dict, NameFilter, NameFilter]:
    """(table, kafka params, topic filter, group filter), after rejecting options that do not apply."""
    table = _table_name(table)
    opts = {str(k).lower(): v for k, v in options.items()}
    for key in opts:
        if key.startswith("kafka.") or key in _SPARK_INJECTED or key == "metadata" or key in _APPLIES[table]:
            continue
        if key in _OPTION_NAMES:
            usable = ", ".join(t for t in TABLES if key in _APPLIES[t])
            raise KwireOptionError(
                f"Option '{_OPTION_NAMES[key]}' does not apply to metadata table '{table}' (only to: {usable}).")
        accepted = ["metadata"] + [_OPTION_NAMES[k] for k in _APPLIES[table]]
        hint = difflib.get_close_matches(key, [a.lower() for a in accepted], n=1, cutoff=0.75)
        suggestion = f" Did you mean '{_OPTION_NAMES[hint[0]]}'?" if hint else ""
        raise KwireOptionError(
            f"Unknown option '{key}' for a kwire metadata read of table '{table}'.{suggestion} Accepted options: "
            f"{', '.join(accepted)}, and Kafka client settings prefixed with 'kafka.'."
        )
    params = kafka_params(opts)
    topics = NameFilter.parse(opts, "subscribe", "subscribepattern", "topic")
    groups = NameFilter.parse(opts, "groups", "grouppattern", "group")
    return table, params, topics, groups


# -- errors ---------------------------------------------------------------------------------------------------

_NEEDS = {TOPIC_AUTHORIZATION_FAILED: "the Describe operation on the topic",
          GROUP_AUTHORIZATION_FAILED: "the Describe operation on the group",
          CLUSTER_AUTHORIZATION_FAILED: "the Describe operation on the cluster"}


def _auth_error(exc: BaseException) -> KafkaApiError | None:
    seen = exc
    while seen is not None:
        if isinstance(seen, KafkaApiError) and seen.code in _AUTH_CODES:
            return seen
        seen = getattr(seen, "last_error", None) if isinstance(seen, RetriesExhaustedError) else seen.__cause__
    return None


@contextmanager
def _authorization(what: str, needs: str | None = None) -> Iterator[None]:
    """Turn Kafka's *_AUTHORIZATION_FAILED errors into a MetadataAuthorizationError saying what was refused."""
    try:
        yield
    except KwireError as exc:
        api = _auth_error(exc)
        if api is None or isinstance(exc, MetadataAuthorizationError):
            raise
        resource = f" (topic {api.topic!r})" if api.topic else ""
        raise MetadataAuthorizationError(
            f"Not authorized to {what}{resource}: Kafka answered {api.name}. The principal needs "
            f"{needs or _NEEDS[api.code]} (an ACL given with kafka-acls.sh). Broker error: {api}"
        ) from exc


# -- collecting rows (client level, no Spark) ------------------------------------------------------------------

def select_topics(client, topics: NameFilter) -> dict:
    """{name: TopicInfo} of the topics `topics` selects; a name in `subscribe` that does not exist is an error."""
    with _authorization("describe topics"):
        if topics.names is not None:
            try:
                return client.describe_topics(topics.names)
            except UnknownTopicError as e:
                existing = f" Existing topics include: {', '.join(e.existing[:10])}." if e.existing else ""
                where = f" named in option '{topics.option}'" if topics.option else ""
                raise KwireOptionError(f"Topic '{e.topic}'{where} does not exist.{existing}") from None
        client.refresh_metadata(None)
        infos = dict(client.metadata.topics)
    return {name: info for name, info in sorted(infos.items())
            if (not info.error_code or info.error_code == 5) and topics.matches(name)}


def _int_or_none(entry) -> int | None:
    if entry is None or entry.value is None:
        return None
    try:
        return int(entry.value)
    except ValueError:
        return None


def _describe_configs(client, names: list[str]) -> dict:
    names = list(names)
    while names:
        try:
            with _authorization("describe the configs of topics",
                                "the DescribeConfigs operation on the topic (Describe alone is not enough)"):
                return Admin(client).describe_configs(names, list(TOPIC_CONFIGS))
        except UnknownTopicError as e:  # deleted after planning: leave it out
            if e.topic not in names:
                raise
            names.remove(e.topic)
    return {}


def topic_rows(client, topics: Iterable[tuple[str, int, int, bool]]) -> list[tuple]:
    """Rows of table `topics` for (name, partition count, replication factor, is_internal) tuples."""
    topics = list(topics)
    configs = _describe_configs(client, [t[0] for t in topics]) if topics else {}
    rows = []
    for name, count, rf, internal in topics:
        if name not in configs:
            continue
        entries = configs[name]
        policy = entries.get("cleanup.policy")
        rows.append((name, count, rf, internal, policy.value if policy else None,
                     _int_or_none(entries.get("retention.ms")), _int_or_none(entries.get("max.message.bytes"))))
    return rows


def topic_summaries(infos: Mapping) -> list[tuple[str, int, int, bool]]:
    out = []
    for name, info in sorted(infos.items()):
        ids = sorted(info.partitions)
        rf = len(info.partitions[ids[0]].replicas) if ids else 0
        out.append((name, len(ids), rf, bool(info.is_internal)))
    return out


_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def _timestamp(ms: int | None) -> _dt.datetime | None:
    if ms is None or ms < 0:
        return None
    return _EPOCH + _dt.timedelta(milliseconds=ms)


def _list_offsets(client, tps: list[tuple[str, int]], spec) -> dict:
    """list_offsets for `tps`, leaving out topics deleted meanwhile (their values are missing)."""
    tps = list(tps)
    while tps:
        try:
            with _authorization("list the offsets of topic partitions"):
                return list_offsets(client, tps, spec)
        except UnknownTopicError as e:
            remaining = [tp for tp in tps if tp[0] != e.topic]
            if len(remaining) == len(tps):
                raise
            tps = remaining
    return {}


def partition_rows(client, partitions: Iterable[tuple], *, with_offsets: bool = True) -> list[tuple]:
    """Rows of table `partitions` for (topic, partition, leader, replicas, isr) tuples led by one broker."""
    partitions = list(partitions)
    tps = [(t, p) for t, p, *_ in partitions]
    earliest = latest = max_ts = {}
    if with_offsets and tps:
        earliest = _list_offsets(client, tps, "earliest")
        latest = _list_offsets(client, tps, "latest")
        try:
            max_ts = _list_offsets(client, tps, "max_timestamp")
        except UnsupportedVersionError:  # a broker before Kafka 3.0 (ListOffsets v7)
            max_ts = {}
    rows = []
    for topic, partition, leader, replicas, isr in partitions:
        tp = (topic, partition)
        low = earliest.get(tp, (None, None))[0]
        high = latest.get(tp, (None, None))[0]
        count = high - low if low is not None and high is not None else None
        stamp = _timestamp(max_ts.get(tp, (None, None))[1])
        rows.append((topic, partition, leader, list(replicas), list(isr), low, high, count, stamp))
    return rows


def select_groups(client, groups: NameFilter) -> list:
    """GroupListings of the groups `groups` selects; a name in `groups` that does not exist is an error."""
    with _authorization("list consumer groups"):
        listings = [g for g in Admin(client).list_groups() if groups.matches(g.group_id)]
    if groups.names is not None:
        found = {g.group_id for g in listings}
        for name in groups.names:
            if name in found:
                continue
            # Not listed: missing, or not visible to this principal. Ask about it to tell which.
            with _authorization(f"describe consumer group '{name}'"):
                Admin(client).describe_groups([name])
            where = f" named in option '{groups.option}'" if groups.option else ""
            hint = " Use option 'groupPattern' to select groups that may be missing without an error." \
                if groups.option == "groups" else ""
            raise KwireOptionError(
                f"Consumer group '{name}'{where} does not exist (kafka-consumer-groups.sh --describe says "
                f"'GroupIdNotFoundException: Group {name} not found').{hint}"
            )
    return sorted(listings, key=lambda g: g.group_id)


def _or_none(text: str | None) -> str | None:
    return text if text else None


def group_rows(client, listings: Iterable) -> list[tuple]:
    """Rows of table `groups` for GroupListings (of one coordinator)."""
    listings = list(listings)
    ids = [g.group_id for g in listings]
    with _authorization("describe consumer groups"):
        descriptions = Admin(client).describe_groups(ids) if ids else {}
    rows = []
    for listing in listings:
        d = descriptions.get(listing.group_id)
        if d is None or (d.state == "Dead" and d.error_code == GROUP_ID_NOT_FOUND):
            continue  # deleted after planning
        # Described: classic groups by DescribeGroups, KIP-848 ones by ConsumerGroupDescribe (error_code 0);
        # a broker without ConsumerGroupDescribe leaves only the state from ListGroups (Empty: no members).
        described = (d.group_type or "classic") == "classic" or d.error_code == 0
        state = _or_none(d.state) or _or_none(listing.state)
        members = len(d.members) if described else (0 if state == "Empty" else None)
        rows.append((listing.group_id, state, _or_none(d.protocol_type) or _or_none(listing.protocol_type),
                     _or_none(d.protocol) if described else None,
                     d.coordinator if d.coordinator >= 0 else listing.coordinator, members))
    return rows


def _committed(client, group: str) -> dict:
    with _authorization(f"fetch the committed offsets of consumer group '{group}'"):
        try:
            return Admin(client).fetch_committed_offsets(group)
        except KafkaApiError as e:
            if e.code == GROUP_ID_NOT_FOUND:  # deleted after planning, or a kind of group without offsets
                return {}
            raise


def group_offset_rows(client, group_ids: Iterable[str], topics: NameFilter | None = None) -> list[tuple]:
    """Rows of table `group_offsets`: (group, topic, partition, committed, latest, lag, metadata)."""
    topics = topics or NameFilter()
    committed = []
    for group in group_ids:
        for (topic, partition), c in sorted(_committed(client, group).items()):
            if topics.matches(topic):
                committed.append((group, topic, partition, c))
    tps = sorted({(t, p) for _, t, p, _ in committed})
    latest = _list_offsets(client, tps, "latest") if tps else {}
    rows = []
    for group, topic, partition, c in committed:
        end = latest.get((topic, partition), (None, None))[0]
        rows.append((group, topic, partition, c.offset, end, None if end is None else end - c.offset, c.metadata))
    return rows


# -- the Spark reader -----------------------------------------------------------------------------------------

class MetadataPartition(InputPartition):
    """One Spark task of a metadata read: the broker it is about (None: any) and what to describe there."""

    def __init__(self, table: str, node: int | None, items: tuple, topics: NameFilter | None = None) -> None:
        super().__init__(None)
        self.table = table
        self.node = node
        self.items = tuple(items)
        self.topics = topics


class MetadataReader(DataSourceReader):
    """Batch reader of the metadata tables; see the module documentation."""

    def __init__(self, table: str, options: Mapping[str, str]) -> None:
        self.table, self.kafka, self.topics, self.groups = parse_metadata_options(table, options)

    def _client(self):
        from spark_kwire.spark.reader import shared_client
        return shared_client(self.kafka)

    def partitions(self) -> list[MetadataPartition]:
        client = self._client()
        table = self.table
        parts: list[MetadataPartition] = []
        if table == "topics":
            summaries = topic_summaries(select_topics(client, self.topics))
            if summaries:
                parts.append(MetadataPartition(table, None, tuple(summaries)))
        elif table == "partitions":
            by_leader: dict[int, list] = {}
            for name, info in select_topics(client, self.topics).items():
                for p in sorted(info.partitions.values(), key=lambda p: p.partition):
                    leader = p.leader if p.leader >= 0 else None
                    by_leader.setdefault(leader if leader is not None else -1, []).append(
                        (name, p.partition, leader, tuple(p.replicas), tuple(p.isr)))
            parts = [MetadataPartition(table, node if node >= 0 else None, tuple(items))
                     for node, items in sorted(by_leader.items())]
        else:
            topics = self.topics
            if table == "group_offsets" and topics.names is not None:
                select_topics(client, topics)  # a topic named in subscribe must exist
            by_coordinator: dict[int, list] = {}
            for listing in select_groups(client, self.groups):
                if table == "group_offsets" and listing.group_type == "share":
                    continue  # share groups have no committed offsets
                by_coordinator.setdefault(listing.coordinator, []).append(listing)
            parts = [MetadataPartition(table, node, tuple(items), topics if table == "group_offsets" else None)
                     for node, items in sorted(by_coordinator.items())]
        # An empty plan still needs one (empty) task, or Spark hands read() a placeholder.
        return parts or [MetadataPartition(table, None, ())]

    def read(self, partition):
        if not isinstance(partition, MetadataPartition) or not partition.items:
            return iter(())
        client = self._client()
        if partition.table == "topics":
            rows = topic_rows(client, partition.items)
        elif partition.table == "partitions":
            rows = partition_rows(client, partition.items, with_offsets=partition.node is not None)
        elif partition.table == "groups":
            rows = group_rows(client, partition.items)
        else:
            rows = group_offset_rows(client, [g.group_id for g in partition.items], partition.topics)
        return iter(rows)
