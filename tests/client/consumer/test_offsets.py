"""ListOffsets against the real broker, on data written by librdkafka: earliest, latest, by timestamp, and the
last stable offset under read_committed."""

from __future__ import annotations

import time

import pytest

from spark_kwire.client import fetch_range, list_offsets
from tests.client.conftest import rdkafka_produce


def test_list_offsets_earliest_latest_by_timestamp(bootstrap, client, create_topic, topic_name):
    create_topic(topic_name, partitions=2)
    base = int(time.time() * 1000) - 60_000  # recent: retention must not delete them
    # partition 0: 10 records at base, base+1000, ...; partition 1: 3 records, max timestamp not last
    rdkafka_produce(bootstrap, topic_name, [
        {"value": f"v{i}".encode(), "partition": 0, "timestamp": base + 1000 * i} for i in range(10)
    ] + [
        {"value": b"a", "partition": 1, "timestamp": base + 10},
        {"value": b"b", "partition": 1, "timestamp": base + 500},
        {"value": b"c", "partition": 1, "timestamp": base + 20},
    ], **{"linger.ms": 0, "batch.num.messages": 1, "enable.idempotence": True})  # in order even if retried
    tp0, tp1 = (topic_name, 0), (topic_name, 1)
    assert list_offsets(client, [tp0, tp1], "earliest") == {tp0: (0, -1), tp1: (0, -1)}
    latest = list_offsets(client, [tp0, tp1], "latest")
    assert latest == {tp0: (10, -1), tp1: (3, -1)}
    by_ts = list_offsets(client, [tp0, tp1], base + 2500)
    assert by_ts == {tp0: (3, base + 3000), tp1: (-1, -1)}
    # the first offset whose timestamp is >= the one asked, even if later records have smaller ones
    assert list_offsets(client, [tp1], base + 100)[tp1] == (1, base + 500)
    assert list_offsets(client, [tp0], base)[tp0] == (0, base)
    assert list_offsets(client, [tp0], base + 10_000)[tp0] == (-1, -1)  # none that late
    assert list_offsets(client, [tp1], "max_timestamp")[tp1] == (1, base + 500)
    mixed = list_offsets(client, [tp0, tp1], {tp0: "earliest", tp1: base + 15})
    assert mixed == {tp0: (0, -1), tp1: (1, base + 500)}
    with pytest.raises(ValueError, match="unknown offset spec"):
        list_offsets(client, [tp0], "newest")


def test_latest_under_read_committed_is_last_stable_offset(bootstrap, client, create_topic, topic_name):
    from confluent_kafka import Producer

    create_topic(topic_name)
    rdkafka_produce(bootstrap, topic_name, [{"value": b"plain", "partition": 0}])
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": topic_name})
    producer.init_transactions(30)
    producer.begin_transaction()
    for i in range(5):
        producer.produce(topic_name, value=b"open", partition=0)
    producer.flush(30)
    tp = (topic_name, 0)
    try:
        assert list_offsets(client, [tp], "latest", isolation_level="read_uncommitted")[tp][0] == 6
        assert list_offsets(client, [tp], "latest", isolation_level="read_committed")[tp][0] == 1
        reader = fetch_range(client, topic_name, 0, 0, 6, isolation_level="read_committed")
        values = [v for b in reader for v in b.value.to_pylist()]
        assert values == [b"plain"]
        assert reader.stopped_early and "last stable offset" in reader.stop_reason
    finally:
        producer.abort_transaction(30)
    # the abort marker is written asynchronously by the coordinator; then LSO == HW == 7
    deadline = time.monotonic() + 15
    while list_offsets(client, [tp], "latest", isolation_level="read_committed")[tp][0] != 7:
        assert time.monotonic() < deadline, "the last stable offset never moved past the aborted transaction"
        time.sleep(0.1)
    assert [v for b in fetch_range(client, topic_name, 0, 0, 7, isolation_level="read_committed")
            for v in b.value.to_pylist()] == [b"plain"]
