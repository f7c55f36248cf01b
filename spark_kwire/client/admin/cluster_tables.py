"""The cluster as tables: rows of topics, partitions, groups and group offsets, built with the client alone.

The Spark layer serves them as DataFrames (``option("metadata", <table>)``, see :mod:`spark_kwire.spark.metadata.tables`)
and :mod:`spark_kwire.admin` as lists of dicts; both get the same rows from here, so ``spark_kwire.admin`` needs
no pyspark. Each table's columns are in :data:`COLUMNS`.

* :class:`NameFilter` selects topics or groups: exact names, a regular expression that must match the whole
  name (as Java's ``Pattern.matches``), or everything.
* ``select_topics`` / ``select_groups`` list what a filter selects; a name given exactly that does not exist
  raises :class:`UnknownNameError`, as Kafka's tools do.
* ``topic_rows``, ``partition_rows``, ``group_rows`` and ``group_offset_rows`` build the rows; topics or
  groups deleted meanwhile are left out. Authorization failures raise :class:`MetadataAuthorizationError`
  naming the Kafka error, the resource and the ACL operation it needs.

Offsets come from ListOffsets with the client's isolation level, as ``kafka-consumer-groups.sh`` and
``kafka-get-offsets.sh`` do.
"""

from __future__ import annotations

import datetime as _dt
import re
from contextlib import contextmanager
from typing import Iterable, Iterator, Mapping

from spark_kwire.client.admin.admin import Admin
from spark_kwire.client.errors import (MetadataAuthorizationError, RetriesExhaustedError, UnknownNameError,
                                       UnknownTopicError, UnsupportedVersionError)
from spark_kwire.client.consumer.offsets import list_offsets
from spark_kwire.protocol.errors import KafkaApiError, KwireError

__all__ = ["COLUMNS", "TABLES", "NameFilter", "UnknownNameError", "MetadataAuthorizationError", "select_topics",
           "select_groups", "topic_summaries", "topic_rows", "partition_rows", "group_rows", "group_offset_rows"]

#: The columns of each table, in order (the Spark layer gives them types).
COLUMNS: dict[str, tuple[str, ...]] = {
    "topics": ("topic", "partitions", "replication_factor", "is_internal", "cleanup_policy", "retention_ms",
               "max_message_bytes"),
    "partitions": ("topic", "partition", "leader", "replicas", "isr", "earliest_offset", "latest_offset",
                   "record_count_estimate", "latest_record_timestamp"),
    "groups": ("group_id", "state", "protocol_type", "protocol", "coordinator", "member_count"),
    "group_offsets": ("group", "topic", "partition", "committed_offset", "latest_offset", "lag", "metadata"),
}
TABLES = tuple(COLUMNS)

TOPIC_CONFIGS = ("cleanup.policy", "retention.ms", "max.message.bytes")

TOPIC_AUTHORIZATION_FAILED, GROUP_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_FAILED = 29, 30, 31
GROUP_ID_NOT_FOUND = 69
_AUTH_CODES = (TOPIC_AUTHORIZATION_FAILED, GROUP_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_FAILED)


class NameFilter:
    """Exact names, a regular expression that must match a whole name, or everything.

    ``option`` names where the names came from (e.g. the Spark option 'subscribe'), for error messages."""

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


# -- rows -----------------------------------------------------------------------------------------------------

def select_topics(client, topics: NameFilter) -> dict:
    """{name: TopicInfo} of the topics `topics` selects; an exact name that does not exist is an error."""
    with _authorization("describe topics"):
        if topics.names is not None:
            try:
                return client.describe_topics(topics.names)
            except UnknownTopicError as e:
                existing = f" Existing topics include: {', '.join(e.existing[:10])}." if e.existing else ""
                where = f" named in option '{topics.option}'" if topics.option else ""
                raise UnknownNameError(f"Topic '{e.topic}'{where} does not exist.{existing}") from None
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
    """GroupListings of the groups `groups` selects; an exact name that does not exist is an error."""
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
            raise UnknownNameError(
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
