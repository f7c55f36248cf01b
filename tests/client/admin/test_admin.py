"""Admin operations, cross-checked with confluent-kafka (librdkafka)."""

from __future__ import annotations

import time

import pytest

from spark_kwire.client import Admin, KafkaApiError, UnknownTopicError


def test_create_describe_delete_topics(client, topic_name):
    other = topic_name + "-b"
    ids = Admin(client).create_topics([(topic_name, 3, 1, {"retention.ms": "3600000", "cleanup.policy": "compact"}),
                                (other, 1, 1)])
    assert set(ids) == {topic_name, other} and all(ids.values())
    info = client.describe_topics([topic_name, other])
    assert info[topic_name].partition_ids == [0, 1, 2] and info[other].partition_ids == [0]
    assert all(p.leader == 1 for p in info[topic_name].partitions.values())  # waited for leaders
    configs = Admin(client).describe_configs([topic_name], ["retention.ms", "cleanup.policy"])[topic_name]
    assert configs["retention.ms"].value == "3600000" and configs["cleanup.policy"].value == "compact"
    all_configs = Admin(client).describe_configs([other])[other]
    assert "segment.bytes" in all_configs and "retention.ms" in all_configs

    with pytest.raises(KafkaApiError) as info:
        Admin(client).create_topics([(other, 1, 1)])
    assert info.value.name == "TOPIC_ALREADY_EXISTS" and info.value.topic == other
    Admin(client).create_topics([(other, 1, 1)], exist_ok=True)
    with pytest.raises(KafkaApiError, match="INVALID_REPLICATION_FACTOR"):
        Admin(client).create_topics([(topic_name + "-rf", 1, 3)])

    Admin(client).delete_topics([topic_name, other])
    assert topic_name not in client.list_topics() and other not in client.list_topics()
    with pytest.raises(UnknownTopicError, match=topic_name):
        Admin(client).delete_topics([topic_name])
    Admin(client).delete_topics([topic_name], missing_ok=True)
    with pytest.raises(UnknownTopicError):
        Admin(client).describe_configs([topic_name])


def test_commit_offsets_read_back_by_librdkafka(bootstrap, client, create_topic, topic_name):
    from confluent_kafka import Consumer, TopicPartition

    create_topic(topic_name, partitions=3)
    group = f"g-{topic_name}"
    assert Admin(client).find_coordinator(group) == 1
    Admin(client).commit_offsets(group, {(topic_name, 0): 5, (topic_name, 2): 42}, metadata="kwire")
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        committed = consumer.committed([TopicPartition(topic_name, p) for p in range(3)], timeout=30)
        assert [(tp.partition, tp.offset) for tp in committed] == [(0, 5), (1, -1001), (2, 42)]
        # confluent-kafka reads metadata as a NUL-terminated C string (and writes the NUL): compare the prefix
        assert committed[0].metadata[:5] == "kwire"
        # the other way round: librdkafka commits, we read
        consumer.commit(offsets=[TopicPartition(topic_name, 1, 7)], asynchronous=False)
    finally:
        consumer.close()
    got = Admin(client).fetch_committed_offsets(group)
    assert {tp: c.offset for tp, c in got.items()} == {(topic_name, 0): 5, (topic_name, 1): 7, (topic_name, 2): 42}
    assert got[(topic_name, 0)].metadata == "kwire"
    some = Admin(client).fetch_committed_offsets(group, [(topic_name, 2), (topic_name, 1), (topic_name, 0)])
    assert {tp: c.offset for tp, c in some.items()} == {(topic_name, 0): 5, (topic_name, 1): 7, (topic_name, 2): 42}
    assert Admin(client).fetch_committed_offsets(group + "-none") == {}

    groups = {g.group_id: g for g in Admin(client).list_groups()}
    assert group in groups and groups[group].coordinator == 1
    described = Admin(client).describe_groups([group])[group]
    assert described.state == "Empty" and described.members == ()
    Admin(client).commit_offsets(group, {(topic_name, 0): 6})
    assert Admin(client).fetch_committed_offsets(group, [(topic_name, 0)])[(topic_name, 0)].offset == 6


def test_commit_to_unknown_topic_fails_clearly(client, topic_name):
    started = time.monotonic()
    with pytest.raises(UnknownTopicError) as info:
        Admin(client).commit_offsets("g-" + topic_name, {(topic_name, 0): 1})
    assert info.value.topic == topic_name and time.monotonic() - started < 5
