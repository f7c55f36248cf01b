"""A small admin API for notebooks, the demo and tests: topics, offsets and consumer groups. Needs no pyspark.

Every function takes `cluster`: a bootstrap string ("host:port,...") or a dict of Kafka client settings
(with or without Spark's "kafka." prefix, e.g. the same options given to `spark.read.format("kwire")`).

    from spark_kwire import admin
    admin.create_topic("localhost:9092", "events", partitions=6)
    admin.group_lag("localhost:9092", "my-group")
"""

from __future__ import annotations

from typing import Iterable, Mapping, Union

from spark_kwire.client.admin import cluster_tables as tables
from spark_kwire.client.admin.admin import Admin
from spark_kwire.client.settings.config import ClientConfig
from spark_kwire.client.core.kafka_client import KafkaClient
from spark_kwire.client.consumer.offsets import list_offsets

Cluster = Union[str, Mapping[str, str]]


def connect(cluster: Cluster) -> KafkaClient:
    """A KafkaClient for `cluster`; close it when done (it is a context manager)."""
    if isinstance(cluster, str):
        options = {"bootstrap.servers": cluster}
    else:
        options = {(k[len("kafka."):] if k.lower().startswith("kafka.") else k): v for k, v in cluster.items()}
    return KafkaClient(ClientConfig.from_kafka_options(options))


def create_topic(cluster: Cluster, name: str, partitions: int = 1, replication_factor: int = 1,
                 config: Mapping[str, str] | None = None, *, exist_ok: bool = False) -> None:
    """Create a topic and wait until every partition has a leader."""
    with connect(cluster) as client:
        Admin(client).create_topics([(name, partitions, replication_factor, dict(config or {}))], exist_ok=exist_ok)


def delete_topic(cluster: Cluster, name: str, *, missing_ok: bool = False) -> None:
    with connect(cluster) as client:
        Admin(client).delete_topics([name], missing_ok=missing_ok)


def list_topics(cluster: Cluster) -> list[str]:
    with connect(cluster) as client:
        return sorted(client.list_topics())


def _offsets(cluster: Cluster, topic: str, spec) -> dict[int, int]:
    with connect(cluster) as client:
        tps = [(topic, p) for p in client.partitions_for(topic)]
        return {p: off for (_t, p), (off, _ts) in sorted(list_offsets(client, tps, spec).items())}


def earliest_offsets(cluster: Cluster, topic: str) -> dict[int, int]:
    """{partition: log start offset}"""
    return _offsets(cluster, topic, "earliest")


def latest_offsets(cluster: Cluster, topic: str) -> dict[int, int]:
    """{partition: log end offset (high watermark)}"""
    return _offsets(cluster, topic, "latest")


def list_groups(cluster: Cluster) -> list[str]:
    with connect(cluster) as client:
        return sorted(g.group_id for g in Admin(client).list_groups())


def describe_groups(cluster: Cluster, groups: Iterable[str]) -> dict:
    """{group id: GroupDescription(group_id, state, protocol_type, protocol, members, coordinator)}"""
    with connect(cluster) as client:
        return Admin(client).describe_groups(list(groups))


def committed_offsets(cluster: Cluster, group: str) -> dict[tuple[str, int], int]:
    """{(topic, partition): committed offset} of a consumer group."""
    with connect(cluster) as client:
        return {tp: c.offset for tp, c in Admin(client).fetch_committed_offsets(group).items()}


def commit_offsets(cluster: Cluster, group: str, offsets: Mapping[tuple[str, int], int], metadata: str = "") -> None:
    """Commit {(topic, partition): offset} for `group` (with an optional metadata string), as a client outside
    the group does; a group with active members refuses it."""
    with connect(cluster) as client:
        Admin(client).commit_offsets(group, dict(offsets), metadata)


def describe_topics(cluster: Cluster, topics: Iterable[str] | None = None) -> list[dict]:
    """One dict per topic (all of them when `topics` is None), with the columns of the `topics` metadata
    table: topic, partitions, replication_factor, is_internal, cleanup_policy, retention_ms, max_message_bytes."""
    selection = tables.NameFilter(names=tuple(topics)) if topics is not None else tables.NameFilter()
    with connect(cluster) as client:
        rows = tables.topic_rows(client, tables.topic_summaries(tables.select_topics(client, selection)))
    return [dict(zip(tables.COLUMNS["topics"], row)) for row in rows]


def topic_configs(cluster: Cluster, topic: str, keys: Iterable[str] | None = None) -> dict[str, str | None]:
    """{config name: effective value} of a topic (every config when `keys` is None; sensitive values are None)."""
    with connect(cluster) as client:
        entries = Admin(client).describe_configs([topic], None if keys is None else list(keys))[topic]
    return {name: entry.value for name, entry in sorted(entries.items())}


def group_lag(cluster: Cluster, group: str) -> list[dict]:
    """The lag of a consumer group, one dict per partition it committed an offset for (the rows of the
    `group_offsets` metadata table): group, topic, partition, committed_offset, latest_offset, lag, metadata.
    A group that does not exist raises an error, as kafka-consumer-groups.sh --describe does."""
    with connect(cluster) as client:
        tables.select_groups(client, tables.NameFilter(names=(group,)))
        rows = tables.group_offset_rows(client, [group])
    return [dict(zip(tables.COLUMNS["group_offsets"], row)) for row in rows]
