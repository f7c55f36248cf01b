"""The metadata cache against the real broker: brokers, topics, partitions, unknown names, refreshes."""

from __future__ import annotations

import pickle
import time

import pytest

from spark_kwire.client import KafkaApiError, KafkaClient, UnknownTopicError, fetch_range, list_offsets


def test_metadata_brokers_topics_partitions(client, kafka, create_topic, topic_name):
    create_topic(topic_name, partitions=4)
    node = kafka.nodes[1]
    assert client.brokers[1].port == node.port
    info = client.describe_topics([topic_name])[topic_name]
    assert info.topic_id is not None and not info.is_internal
    assert info.partition_ids == [0, 1, 2, 3]
    part = info.partitions[2]
    assert part.leader == 1 and part.replicas == (1,) and part.isr == (1,) and part.offline_replicas == ()
    assert part.leader_epoch >= 0
    assert client.partitions_for(topic_name) == [0, 1, 2, 3]
    assert topic_name in client.list_topics()
    assert "__consumer_offsets" not in client.list_topics()
    assert client.metadata.topic_by_id(info.topic_id).name == topic_name
    assert client.metadata.cluster_id


def test_unknown_topic_names_topic_and_lists_existing(client, create_topic, topic_name):
    create_topic(topic_name)
    client.partitions_for(topic_name)  # it reached the broker's metadata
    missing = topic_name + "-nope"
    with pytest.raises(UnknownTopicError) as info:
        client.partitions_for(missing)
    text = str(info.value)
    assert repr(missing) in text and "does not exist" in text and "existing topics include" in text
    assert topic_name in info.value.existing
    back = pickle.loads(pickle.dumps(info.value))
    assert str(back) == text and back.topic == missing
    with pytest.raises(UnknownTopicError):
        list_offsets(client, [(missing, 0)], "latest")
    with pytest.raises(UnknownTopicError, match="partition 7"):
        list_offsets(client, [(topic_name, 7)], "latest")
    with pytest.raises(UnknownTopicError):
        list(fetch_range(client, missing, 0, 0, 10))
    with pytest.raises(KafkaApiError, match="INVALID_TOPIC_EXCEPTION.*'bad name!'"):
        client.partitions_for("bad name!")


def test_metadata_refresh_follows_new_partitions(client, bootstrap, create_topic, topic_name):
    from confluent_kafka.admin import AdminClient, NewPartitions

    create_topic(topic_name, partitions=1)
    assert client.partitions_for(topic_name) == [0]
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_partitions([NewPartitions(topic_name, 3)])[topic_name].result(30)
    deadline = time.monotonic() + 10
    while client.partitions_for(topic_name) != [0, 1, 2] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert client.partitions_for(topic_name) == [0, 1, 2]
    # a partition the cache does not know yet triggers a refresh instead of an error
    with KafkaClient({"bootstrap.servers": bootstrap}) as other:
        assert list_offsets(other, [(topic_name, 2)], "latest") == {(topic_name, 2): (0, -1)}
