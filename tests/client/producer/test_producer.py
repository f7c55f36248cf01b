"""Producer: our record batches read back by librdkafka; retries, dedup, acks, clear failures."""

from __future__ import annotations

import time
from collections import Counter, defaultdict

import pyarrow as pa
import pytest

from spark_kwire.client import (Admin, BrokerConnection, BrokerConnectionError, KafkaClient, PendingResponse,
                                ProduceError, Producer, UnknownTopicError, fetch_range, list_offsets)
from spark_kwire.protocol import messages as m
from spark_kwire.protocol.errors import KwireError
from tests.client.conftest import rdkafka_consume

HEADERS_TYPE = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))


def _columns(n, prefix="v"):
    values = pa.array([None if i % 13 == 0 else f"{prefix}{i}-".encode() * (i % 4 + 1) for i in range(n)], pa.binary())
    keys = pa.array([None if i % 5 == 0 else f"k{i}".encode() for i in range(n)], pa.binary())
    headers = pa.array([[{"key": "n", "value": str(i).encode()}, {"key": "nul", "value": None}] if i % 3 == 0 else None
                        for i in range(n)], HEADERS_TYPE)
    return values, keys, headers


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_produce_every_codec_read_by_librdkafka(bootstrap, client, create_topic, topic_name, codec):
    create_topic(topic_name, partitions=2)
    n = 2000
    values, keys, headers = _columns(n)
    base = int(time.time() * 1000) - 5000
    timestamps = pa.array([base + i for i in range(n)], pa.int64())
    producer = Producer(client, compression=codec, batch_size=16384)
    assert producer.idempotent
    producer.send_batch(topic_name, 1, values, keys, headers, timestamps)
    acks = producer.flush()
    assert acks[(topic_name, 1)].records == n and acks[(topic_name, 1)].base_offset == 0
    assert acks[(topic_name, 1)].last_offset == n - 1 and acks[(topic_name, 1)].batches > 1
    msgs = rdkafka_consume(bootstrap, topic_name, n, partitions=2, extra_wait=0.3)
    assert len(msgs) == n
    for i, msg in enumerate(sorted(msgs, key=lambda x: x.offset())):
        assert msg.partition() == 1 and msg.offset() == i
        assert msg.value() == values[i].as_py() and msg.key() == keys[i].as_py()
        assert msg.timestamp() == (1, base + i)  # CreateTime
        expected_headers = [("n", str(i).encode()), ("nul", None)] if i % 3 == 0 else None
        assert msg.headers() == expected_headers


def test_many_partitions_pipelined_keep_order_and_key_partitioning(bootstrap, client, create_topic, topic_name):
    from confluent_kafka import Producer as RdProducer

    create_topic(topic_name, partitions=8)
    producer = Producer(client, compression="lz4", batch_size=4096, max_in_flight=5)
    sent = defaultdict(list)
    for chunk in range(3):
        for p in range(8):
            vals = pa.array([f"p{p}-c{chunk}-{i:05d}".encode() * 8 for i in range(700)], pa.binary())
            producer.send_batch(topic_name, p, vals)
            sent[p].extend(vals.to_pylist())
    acks = producer.flush()
    assert {tp[1]: a.records for tp, a in acks.items()} == {p: 2100 for p in range(8)}
    # keyed rows without a partition follow Java's murmur2 partitioner (librdkafka's murmur2_random)
    keys = pa.array([f"user-{i}".encode() for i in range(200)], pa.binary())
    producer.send_batch(topic_name, None, pa.array([b"keyed"] * 200, pa.binary()), keys)
    producer.flush()
    rd = RdProducer({"bootstrap.servers": bootstrap, "partitioner": "murmur2_random"})
    rd_topic = topic_name + "-rd"
    Admin(client).create_topics([(rd_topic, 8, 1)])
    for k in keys.to_pylist():
        rd.produce(rd_topic, value=b"keyed", key=k)
    assert rd.flush(30) == 0
    got = defaultdict(list)
    for msg in rdkafka_consume(bootstrap, topic_name, 8 * 2100 + 200, partitions=8, extra_wait=0.3):
        got[msg.partition()].append((msg.offset(), msg.key(), msg.value()))
    ours = {}
    for p in range(8):
        rows = sorted(got[p])
        assert [v for _, k, v in rows if k is None] == sent[p]  # every record once, in order
        ours.update({k: p for _, k, _ in rows if k is not None})
    theirs = {msg.key(): msg.partition() for msg in rdkafka_consume(bootstrap, rd_topic, 200, partitions=8,
                                                                     extra_wait=0.1)}
    assert ours == theirs and len(ours) == 200


def _lose_first_produce_response(monkeypatch):
    """The first Produce request reaches the broker and is answered, but the answer is 'lost' (connection dropped)."""
    original = BrokerConnection.send
    state = Counter()

    def send(self, api, body, version=None, **kw):
        pending = original(self, api, body, version, **kw)
        if api is m.PRODUCE:
            state["produce_requests"] += 1
            if state["dropped"] == 0:
                state["dropped"] += 1
                pending.result()  # the broker appended the records...
                self.close()  # ...and the response never arrived
                lost = PendingResponse(None, api, version, -1, 0.0)
                lost._set_error(BrokerConnectionError(self.address, "injected: connection lost"))
                return lost
        return pending

    monkeypatch.setattr(BrokerConnection, "send", send)
    return state


def test_idempotent_retry_does_not_duplicate(bootstrap, client, create_topic, topic_name, monkeypatch):
    create_topic(topic_name, partitions=2)
    state = _lose_first_produce_response(monkeypatch)
    producer = Producer(client, batch_size=8192)
    for p in range(2):
        producer.send_batch(topic_name, p, pa.array([f"{p}-{i}".encode() for i in range(3000)], pa.binary()))
    acks = producer.flush()
    assert state["dropped"] == 1 and state["produce_requests"] > 1
    assert sum(a.records for a in acks.values()) == 6000
    msgs = rdkafka_consume(bootstrap, topic_name, 6000, partitions=2)
    values = [x.value() for x in msgs]
    assert len(values) == 6000 and len(set(values)) == 6000


def test_non_idempotent_retry_duplicates_which_the_idempotent_test_would_catch(bootstrap, client, create_topic,
                                                                             topic_name, monkeypatch):
    """The same lost response without idempotence writes the first request twice (shows the check above bites)."""
    create_topic(topic_name)
    state = _lose_first_produce_response(monkeypatch)
    producer = Producer(client, acks=1, idempotent=False, batch_size=8192)
    producer.send_batch(topic_name, 0, pa.array([f"{i}".encode() for i in range(3000)], pa.binary()))
    producer.flush()
    assert state["dropped"] == 1
    msgs = rdkafka_consume(bootstrap, topic_name, 3000)
    assert len(msgs) > 3000 and len({x.value() for x in msgs}) == 3000


def test_acks_zero_sends_without_waiting(bootstrap, client, create_topic, topic_name):
    create_topic(topic_name)
    producer = Producer(client, acks=0)
    assert not producer.idempotent
    producer.send_batch(topic_name, 0, pa.array([b"fire"] * 500, pa.binary()))
    acks = producer.flush()
    ack = acks[(topic_name, 0)]
    assert ack.records == 500 and not ack.acknowledged and ack.base_offset == -1
    assert len(rdkafka_consume(bootstrap, topic_name, 500, extra_wait=0.2)) == 500
    # the connection is still in sync (no response was expected)
    assert list_offsets(client, [(topic_name, 0)], "latest")[(topic_name, 0)][0] == 500


def test_message_too_large_is_a_clear_produce_error(client, create_topic, topic_name):
    create_topic(topic_name, config={"max.message.bytes": "2000"})
    producer = Producer(client, batch_size=64 * 1024)
    producer.send_batch(topic_name, 0, pa.array([b"x" * 100] * 200, pa.binary()))
    with pytest.raises(ProduceError) as info:
        producer.flush()
    text = str(info.value)
    assert topic_name in text and "partition 0" in text and "MESSAGE_TOO_LARGE" in text and "batch.size" in text
    assert "broker 1" in text
    with pytest.raises(Exception, match="failed earlier"):
        producer.flush()


def _answer_produce_with_error(monkeypatch, code, times):
    """The first ``times`` Produce requests are not sent: they are answered with error ``code`` for every partition
    (as a broker short of in-sync replicas would). Kafka caps min.insync.replicas at the replication factor, so a
    one-broker cluster cannot produce NOT_ENOUGH_REPLICAS itself."""
    original = BrokerConnection.send
    state = Counter()

    def send(self, api, body, version=None, **kw):
        if api is m.PRODUCE and state["faked"] < times:
            state["faked"] += 1
            response = {"responses": [
                {"name": t["name"], "topic_id": t.get("topic_id"), "partition_responses": [
                    {"index": pd["index"], "error_code": code, "base_offset": -1} for pd in t["partition_data"]]}
                for t in body["topic_data"]]}
            return PendingResponse.completed(api, version or 13, response)
        if api is m.PRODUCE:
            state["sent"] += 1
        return original(self, api, body, version, **kw)

    monkeypatch.setattr(BrokerConnection, "send", send)
    return state


def test_retriable_errors_are_retried(bootstrap, client, create_topic, topic_name, monkeypatch):
    create_topic(topic_name, partitions=3)
    state = _answer_produce_with_error(monkeypatch, 19, times=3)  # NOT_ENOUGH_REPLICAS
    producer = Producer(client)
    for p in range(3):
        producer.send_batch(topic_name, p, pa.array([f"{p}-{i}".encode() for i in range(100)], pa.binary()))
    acks = producer.flush()
    assert state["faked"] == 3 and state["sent"] >= 1
    assert {tp[1]: (a.records, a.base_offset) for tp, a in acks.items()} == {0: (100, 0), 1: (100, 0), 2: (100, 0)}
    assert len(rdkafka_consume(bootstrap, topic_name, 300, partitions=3, extra_wait=0.3)) == 300


def test_retriable_error_until_delivery_timeout(client, create_topic, topic_name, monkeypatch):
    create_topic(topic_name)
    _answer_produce_with_error(monkeypatch, 19, times=10**9)
    producer = Producer(client, delivery_timeout_ms=2000)
    producer.send_batch(topic_name, 0, pa.array([b"never"] * 10, pa.binary()))
    started = time.monotonic()
    with pytest.raises(ProduceError) as info:
        producer.flush()
    elapsed = time.monotonic() - started
    assert 1.0 < elapsed < 4, elapsed
    text = str(info.value)
    assert "NOT_ENOUGH_REPLICAS" in text and "delivery timeout" in text and "10 record(s)" in text
    assert topic_name in text and "partition 0" in text
    assert list_offsets(client, [(topic_name, 0)], "latest")[(topic_name, 0)][0] == 0


def test_out_of_order_sequence_raises_instead_of_guessing(client, create_topic, topic_name, monkeypatch):
    create_topic(topic_name)
    _answer_produce_with_error(monkeypatch, 45, times=1)  # OUT_OF_ORDER_SEQUENCE_NUMBER on the first batch
    producer = Producer(client)
    producer.send_batch(topic_name, 0, pa.array([b"x"] * 10, pa.binary()))
    with pytest.raises(ProduceError, match="OUT_OF_ORDER_SEQUENCE_NUMBER"):
        producer.flush()


def test_unknown_topic_or_partition_fails_at_send(client, create_topic, topic_name):
    producer = Producer(client)
    with pytest.raises(UnknownTopicError, match=topic_name):
        producer.send_batch(topic_name, 0, pa.array([b"x"], pa.binary()))
    create_topic(topic_name)
    with pytest.raises(UnknownTopicError, match="partition 3"):
        producer.send_batch(topic_name, 3, pa.array([b"x"], pa.binary()))


def test_successive_flushes_continue_offsets_and_sequences(bootstrap, create_topic, topic_name):
    create_topic(topic_name)
    with KafkaClient({"bootstrap.servers": bootstrap, "compression.type": "zstd", "batch.size": "2048"}) as client:
        producer = Producer(client)
        assert producer.compression == "zstd" and producer.batch_size == 2048
        totals = []
        for round_ in range(3):
            producer.send_batch(topic_name, 0, pa.array([f"{round_}-{i}".encode() for i in range(1000)], pa.binary()))
            totals.append(producer.flush()[(topic_name, 0)])
        assert [(a.base_offset, a.last_offset) for a in totals] == [(0, 999), (1000, 1999), (2000, 2999)]
        assert producer.flush() == {}


def test_a_reused_producer_keeps_no_delivery_state_of_earlier_writes(client, create_topic, topic_name):
    """Spark reuses a worker's producer task after task: writing into new topics, its sender kept the state of
    every partition it had written to and checked all of them every 50 ms while sending (18 ms a check after
    24 writes of 512 partitions). Sequence numbers still go on across the writes."""
    producer = Producer(client)
    try:
        for write in range(3):
            topic = create_topic(f"{topic_name}-{write}", partitions=8)
            keys = pa.array([f"k{i}".encode() for i in range(400)], pa.binary())
            producer.send_batch(topic, None, pa.array([b"v"] * 400, pa.binary()), keys)
            assert sum(ack.records for ack in producer.flush().values()) == 400
            assert producer.sender.tracked_partitions == 8 and producer.reusable
            producer.prepare_for_reuse()
            assert producer.sender.tracked_partitions == 0
        producer.send_batch(topic, 0, pa.array([b"again"], pa.binary()))
        assert producer.flush()[(topic, 0)].records == 1  # the same producer id, its sequence going on
    finally:
        producer.close()


def test_fresh_many_partition_topic_keyed_rows_exactly_once_in_order(bootstrap, client, topic_name):
    """Writing right after creating a 64-partition topic: partitions whose leader is not ready yet answer
    NOT_LEADER_OR_FOLLOWER. A broker without producer state accepts any first sequence number, so a pipelined
    later batch could overtake a retried first batch (Spark's built-in sink fails here with
    OutOfOrderSequenceException). Every row must arrive exactly once, in order per partition."""
    Admin(client).create_topics([(topic_name, 64, 1)])
    n = 20_000
    keys = pa.array([f"key-{i % 997}".encode() for i in range(n)], pa.binary())
    values = pa.array([f"{i:06d}".encode() * 4 for i in range(n)], pa.binary())
    producer = Producer(client, batch_size=2048, compression="lz4")
    for start in range(0, n, 5000):
        producer.send_batch(topic_name, None, values.slice(start, 5000), keys.slice(start, 5000))
    acks = producer.flush()
    assert sum(a.records for a in acks.values()) == n
    msgs = rdkafka_consume(bootstrap, topic_name, n, partitions=64, extra_wait=0.5)
    assert len(msgs) == n
    per_partition = defaultdict(list)
    for msg in sorted(msgs, key=lambda x: (x.partition(), x.offset())):
        per_partition[msg.partition()].append(int(msg.value()[:6]))
    for p, rows in per_partition.items():
        assert rows == sorted(rows), f"partition {p} out of order"
    assert sorted(v for rows in per_partition.values() for v in rows) == list(range(n))


def test_first_batch_retry_cannot_be_overtaken(bootstrap, client, create_topic, topic_name, monkeypatch):
    """The first Produce request is answered NOT_LEADER_OR_FOLLOWER. Had later batches of the same partitions been
    pipelined behind it, the broker (no producer state yet) would have accepted them and then rejected the retried
    first batch with OUT_OF_ORDER_SEQUENCE_NUMBER."""
    create_topic(topic_name, partitions=3)
    state = _answer_produce_with_error(monkeypatch, 6, times=1)
    producer = Producer(client, batch_size=1024)
    for p in range(3):
        producer.send_batch(topic_name, p, pa.array([f"{i:05d}".encode() * 10 for i in range(500)], pa.binary()))
    acks = producer.flush()
    assert state["faked"] == 1
    assert {tp[1]: a.records for tp, a in acks.items()} == {0: 500, 1: 500, 2: 500}
    for p in range(3):
        _, rows = [], [v for b in fetch_range(client, topic_name, p, 0, 500) for v in b.value.to_pylist()]
        assert rows == [f"{i:05d}".encode() * 10 for i in range(500)]


def test_per_row_partitions(bootstrap, client, create_topic, topic_name):
    create_topic(topic_name, partitions=3)
    producer = Producer(client)
    values = pa.array([f"{i}".encode() for i in range(30)], pa.binary())
    parts = pa.array([i % 3 if i % 10 else None for i in range(30)], pa.int32())  # nulls: chosen (sticky)
    assert producer.send_batch(topic_name, parts, values) == 30
    assert producer.pending_bytes > 0
    acks = producer.flush()
    assert sum(a.records for a in acks.values()) == 30 and producer.pending_bytes == 0
    got = {msg.value(): msg.partition() for msg in rdkafka_consume(bootstrap, topic_name, 30, partitions=3,
                                                                    extra_wait=0.2)}
    assert all(got[f"{i}".encode()] == i % 3 for i in range(30) if i % 10)
    with pytest.raises(UnknownTopicError, match="partition 5"):
        producer.send_batch(topic_name, pa.array([0, 5], pa.int32()), pa.array([b"a", b"b"], pa.binary()))


def test_background_flushes_keep_order_and_carry_acks(bootstrap, client, create_topic, topic_name, monkeypatch):
    """A small buffer.memory hands batches to background flushes while later ones are encoded; slowed Produce
    answers make the overlap real. Every record arrives once, in order, and flush() reports all of them."""
    create_topic(topic_name, partitions=3)
    original = BrokerConnection.send
    overlapped = Counter()

    def slow_send(self, api, body, version=None, **kw):
        if api is m.PRODUCE:
            time.sleep(0.02)
        return original(self, api, body, version, **kw)

    monkeypatch.setattr(BrokerConnection, "send", slow_send)
    producer = Producer(client, batch_size=4096, buffer_memory=32 * 1024)
    sent = defaultdict(list)
    for chunk in range(20):
        for p in range(3):
            values = [f"{p}-{chunk}-{i:04d}".encode() * 4 for i in range(500)]
            producer.send_batch(topic_name, p, pa.array(values, pa.binary()))
            sent[p] += values
            overlapped["busy"] += producer.sending_in_background
    acks = producer.flush()
    assert overlapped["busy"] > 0, "no send_batch ran while a background flush was sending"
    assert {tp[1]: (a.records, a.base_offset, a.last_offset) for tp, a in acks.items()} == \
        {p: (10_000, 0, 9_999) for p in range(3)}
    for p in range(3):
        got = [v for b in fetch_range(client, topic_name, p, 0, 10_000) for v in b.value.to_pylist()]
        assert got == sent[p]


def test_background_flush_failure_is_raised_by_the_next_call(client, create_topic, topic_name, monkeypatch):
    create_topic(topic_name)
    _answer_produce_with_error(monkeypatch, 45, times=10**9)  # OUT_OF_ORDER_SEQUENCE_NUMBER: not retriable
    producer = Producer(client, batch_size=1024, buffer_memory=4096)
    producer.send_batch(topic_name, 0, pa.array([b"x" * 100] * 100, pa.binary()))  # over buffer.memory: handed off
    with pytest.raises(ProduceError, match="OUT_OF_ORDER_SEQUENCE_NUMBER"):
        for _ in range(100):
            producer.send_batch(topic_name, 0, pa.array([b"y"], pa.binary()))
            time.sleep(0.05)
        producer.flush()
    with pytest.raises(KwireError, match="failed earlier"):
        producer.send_batch(topic_name, 0, pa.array([b"z"], pa.binary()))


def test_linger_ms_is_how_long_an_open_batch_waits_for_more_rows(bootstrap, client, create_topic, topic_name):
    """kafka.linger.ms, Kafka's meaning: a batch that is not full is sent linger.ms after its first row even when
    no other row is appended (the sender's own timer); until then rows of later appends join it. Unset (kwire's
    default), it waits for flush() (or buffer.memory)."""
    create_topic(topic_name, partitions=2)
    tp = (topic_name, 0)
    with KafkaClient({"bootstrap.servers": bootstrap, "linger.ms": "1000"}) as lingering:
        producer = Producer(lingering)
        assert producer.linger_ms == 1000
        producer.send_batch(topic_name, 0, pa.array([b"first"] * 10, pa.binary()))
        appended = time.monotonic()
        producer.send_batch(topic_name, 0, pa.array([b"joins"] * 5, pa.binary()))
        assert producer.pending_records == 15  # younger than linger.ms: waiting for more rows
        deadline = appended + 30
        while list_offsets(client, [tp], "latest")[tp][0] < 15 and time.monotonic() < deadline:
            time.sleep(0.02)
        waited = time.monotonic() - appended
        assert list_offsets(client, [tp], "latest")[tp][0] == 15, "not sent before flush()"
        assert waited >= 0.95, f"sent {waited:.3f}s after the first row, before linger.ms"
        assert producer.pending_records == 0
        acks = producer.flush()
        assert acks[tp].records == 15 and acks[tp].batches == 1  # both appends in one record batch

    unset = Producer(client, batch_size=1024)
    assert unset.linger_ms is None
    unset.send_batch(topic_name, 0, pa.array([b"third"] * 10, pa.binary()))
    time.sleep(0.2)
    unset.send_batch(topic_name, 0, pa.array([b"fourth"] * 10, pa.binary()))
    assert unset.pending_records == 20 and not unset.sending_in_background
    assert list_offsets(client, [tp], "latest")[tp][0] == 15
    assert unset.flush()[tp].records == 20
    assert len(rdkafka_consume(bootstrap, topic_name, 35, partitions=2, extra_wait=0.3)) == 35


def _hook_values(prefix: str, n: int) -> pa.Array:
    return pa.array([f"{prefix}-{i}".encode() for i in range(n)], pa.binary())


def test_first_batch_hook_sees_each_partition_once_per_admission_round(bootstrap, create_topic, topic_name):
    """Sender.before_first_batch (where a transaction adds its partitions) runs before a partition's first batch is
    sent, not for later batches, and again after forget_admitted_partitions()."""
    create_topic(topic_name, partitions=4)
    seen: list[list] = []
    with KafkaClient({"bootstrap.servers": bootstrap, "batch.size": "1024"}) as client:
        producer = Producer(client)
        producer.sender.before_first_batch = lambda tps: seen.append(sorted(tps))
        for p in (0, 1, 2):
            producer.send_batch(topic_name, p, _hook_values(f"p{p}", 500))  # several batches each
        producer.flush()
        admitted = [tp for call in seen for tp in call]
        assert sorted(admitted) == [(topic_name, 0), (topic_name, 1), (topic_name, 2)]
        producer.send_batch(topic_name, 0, _hook_values("again", 10))
        producer.flush()
        assert len([tp for call in seen for tp in call]) == 3  # already admitted: no call
        producer.sender.forget_admitted_partitions()
        calls_before = len(seen)
        producer.send_batch(topic_name, 3, _hook_values("new", 10))
        producer.send_batch(topic_name, 0, _hook_values("once-more", 10))
        producer.flush()
        assert sorted(tp for call in seen[calls_before:] for tp in call) == [(topic_name, 0), (topic_name, 3)]


def test_first_batch_hook_failure_fails_the_producer_and_sends_nothing(bootstrap, create_topic, topic_name):
    create_topic(topic_name)
    tp = (topic_name, 0)
    with KafkaClient({"bootstrap.servers": bootstrap}) as client:
        producer = Producer(client)

        def refuse(tps):
            raise ProduceError(topic_name, 0, "the transaction coordinator refused the partition")

        producer.sender.before_first_batch = refuse
        producer.send_batch(topic_name, 0, _hook_values("x", 10))
        with pytest.raises(ProduceError, match="coordinator refused"):
            producer.flush()
        assert not producer.reusable
        assert list_offsets(client, [tp], "latest")[tp][0] == 0
