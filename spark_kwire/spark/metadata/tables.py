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

The rows are built by the client layer (:mod:`spark_kwire.client.admin.cluster_tables`, which `spark_kwire.admin`
shares); the options are parsed by :func:`spark_kwire.spark.metadata.options.parse_metadata_options`. This module
holds the Spark side: the schemas, and a reader that spreads the work over Spark tasks.
"""

from __future__ import annotations

from typing import Mapping

from pyspark.sql.datasource import DataSourceReader, InputPartition
from pyspark.sql.types import (ArrayType, BooleanType, IntegerType, LongType, StringType, StructField, StructType,
                               TimestampType)

from spark_kwire.client.admin.cluster_tables import (TABLES, NameFilter, UnknownNameError, group_offset_rows, group_rows,
                                               partition_rows, select_groups, select_topics, topic_rows,
                                               topic_summaries)
from spark_kwire.spark.errors import KwireOptionError, MetadataAuthorizationError
from spark_kwire.spark.metadata.options import CHECK_TABLE, metadata_table_name, parse_metadata_options
from spark_kwire.spark.shared_client import shared_client

__all__ = ["TABLES", "SCHEMAS", "metadata_schema", "metadata_reader", "MetadataReader", "MetadataPartition", "MetadataAuthorizationError"]


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


def metadata_schema(table: str) -> StructType:
    """The fixed schema of metadata table `table` (one of :data:`TABLES`, or the connection check)."""
    name = metadata_table_name(table)
    if name == CHECK_TABLE:
        from spark_kwire.spark.metadata.check_table import CHECK_SCHEMA

        return CHECK_SCHEMA
    return SCHEMAS[name]


def metadata_reader(table: str, options: Mapping[str, str]) -> DataSourceReader:
    """The reader of metadata table `table`: the cluster tables' (below) or the connection check's."""
    if metadata_table_name(table) == CHECK_TABLE:
        from spark_kwire.spark.metadata.check_table import CheckTableReader

        return CheckTableReader(options)
    return MetadataReader(table, options)


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

    def partitions(self) -> list[MetadataPartition]:
        try:
            return self._plan()
        except UnknownNameError as e:  # a name given in 'subscribe' or 'groups': the user's option is wrong
            raise KwireOptionError(str(e)) from None

    def _client(self):
        return shared_client(self.kafka)

    def _plan(self) -> list[MetadataPartition]:
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
