"""The cluster as rows (client/cluster_tables.py), without Spark, cross-checked with librdkafka."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, TopicPartition

from spark_kwire.client.admin import cluster_tables as tables
from spark_kwire.client.errors import UnknownNameError
from tests.client.conftest import rdkafka_produce


def test_topic_and_partition_rows_match_librdkafka(bootstrap, client, create_topic, topic_name):
    create_topic(topic_name, partitions=3, config={"cleanup.policy": "compact", "retention.ms": "7200000"})
    rdkafka_produce(bootstrap, topic_name, [{"value": b"v", "key": b"k", "partition": i % 3} for i in range(14)])
    selected = tables.select_topics(client, tables.NameFilter(pattern=f"{topic_name}|__nothing"))
    assert list(selected) == [topic_name]
    (row,) = tables.topic_rows(client, tables.topic_summaries(selected))
    assert dict(zip(tables.COLUMNS["topics"], row)) == {
        "topic": topic_name, "partitions": 3, "replication_factor": 1, "is_internal": False,
        "cleanup_policy": "compact", "retention_ms": 7200000, "max_message_bytes": row[6]}
    parts = [(topic_name, p.partition, p.leader, p.replicas, p.isr) for p in selected[topic_name].partitions.values()]
    rows = {r[1]: dict(zip(tables.COLUMNS["partitions"], r)) for r in tables.partition_rows(client, parts)}
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic_name}-wm"})
    try:
        for p in range(3):
            low, high = consumer.get_watermark_offsets(TopicPartition(topic_name, p), timeout=30)
            assert (rows[p]["earliest_offset"], rows[p]["latest_offset"]) == (low, high)
            assert rows[p]["record_count_estimate"] == high - low and rows[p]["leader"] == 1
    finally:
        consumer.close()


def test_exact_names_that_do_not_exist_are_errors_patterns_are_not(client, create_topic, topic_name):
    create_topic(topic_name)
    with pytest.raises(UnknownNameError, match=rf"Topic '{topic_name}-gone' named in option 'subscribe' does not "
                                               r"exist\. Existing topics include: "):
        tables.select_topics(client, tables.NameFilter(names=(topic_name, f"{topic_name}-gone"), option="subscribe"))
    assert tables.select_topics(client, tables.NameFilter(pattern=f"{topic_name}-gone.*")) == {}
    with pytest.raises(UnknownNameError, match=rf"Consumer group '{topic_name}-g' does not exist"):
        tables.select_groups(client, tables.NameFilter(names=(f"{topic_name}-g",)))


def test_group_offset_rows_are_the_lag_librdkafka_committed(bootstrap, client, create_topic, topic_name):
    other = f"{topic_name}-other"
    create_topic(topic_name, partitions=2)
    create_topic(other)
    rdkafka_produce(bootstrap, topic_name, [{"value": b"x", "partition": i % 2} for i in range(20)])
    rdkafka_produce(bootstrap, other, [{"value": b"y"}] * 3)
    group = f"{topic_name}-g"
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    consumer.commit(offsets=[TopicPartition(topic_name, 0, 4), TopicPartition(topic_name, 1, 10),
                             TopicPartition(other, 0, 1)], asynchronous=False)
    consumer.close()
    (listing,) = tables.select_groups(client, tables.NameFilter(names=(group,)))
    assert listing.group_id == group
    rows = tables.group_offset_rows(client, [group], tables.NameFilter(names=(topic_name,)))
    assert sorted((r[1], r[2], r[3], r[4], r[5]) for r in rows) == [(topic_name, 0, 4, 10, 6), (topic_name, 1, 10, 10, 0)]
    every = tables.group_offset_rows(client, [group])
    assert {(r[1], r[2]): r[5] for r in every} == {(topic_name, 0): 6, (topic_name, 1): 0, (other, 0): 2}
    (group_row,) = tables.group_rows(client, [listing])
    assert dict(zip(tables.COLUMNS["groups"], group_row))["group_id"] == group
