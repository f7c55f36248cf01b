"""fetch_range against data written by librdkafka and the Java ConsoleProducer."""

from __future__ import annotations

import struct
import time

import pyarrow as pa
import pytest

from spark_kwire.client import (FetchStalledError, KafkaClient, OffsetOutOfRangeError, RetriesExhaustedError,
                                fetch_range, list_offsets)
from spark_kwire.protocol import messages as m
from harness import run_java_tool
from tests.client.conftest import fake_kafka, rdkafka_produce


def _read(client, topic, partition, start, end, **kw):
    reader = fetch_range(client, topic, partition, start, end, **kw)
    rows = []
    for batch in reader:
        headers = batch.headers.to_pylist() if batch.headers is not None else [None] * batch.record_count
        rows.extend(zip(batch.offset.tolist(), batch.key.to_pylist(), batch.value.to_pylist(),
                        batch.timestamp.tolist(), headers))
    return reader, rows


def _records(n, base_ts):
    out = []
    for i in range(n):
        rec = {"partition": 0, "timestamp": base_ts + i,
               "key": None if i % 7 == 0 else f"key-{i}".encode(),
               "value": None if i % 11 == 0 else (f"value-{i}-" * (i % 5 + 1)).encode()}
        if i % 3 == 0:
            rec["headers"] = [("h1", f"x{i}".encode()), ("h2", None)]
        out.append(rec)
    return out


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_fetch_librdkafka_every_codec_with_headers_and_nulls(bootstrap, client, create_topic, topic_name, codec):
    create_topic(topic_name)
    base = int(time.time() * 1000) - 10_000
    sent = _records(3000, base)
    rdkafka_produce(bootstrap, topic_name, sent, **{"compression.type": codec, "batch.num.messages": 500})
    tp = (topic_name, 0)
    end = list_offsets(client, [tp], "latest")[tp][0]
    assert end == len(sent)
    reader, rows = _read(client, topic_name, 0, 0, end, include_headers=True, max_bytes=4096)
    assert not reader.stopped_early and reader.position == end
    assert reader.fetches > 1  # small max_bytes: several fetches, pipelined
    assert [r[0] for r in rows] == list(range(end))
    for (offset, key, value, ts, headers), rec in zip(rows, sent):
        assert (key, value, ts) == (rec["key"], rec["value"], rec["timestamp"]), offset
        if "headers" in rec:
            assert headers == [{"key": "h1", "value": f"x{offset}".encode()}, {"key": "h2", "value": None}]
        else:
            assert headers is None
    # a range starting and ending inside (compressed) batches
    _, rows = _read(client, topic_name, 0, 1234, 2345)
    assert [r[0] for r in rows] == list(range(1234, 2345))
    assert rows[0][2] == sent[1234]["value"]


def test_fetch_uses_topic_ids_on_new_brokers(client, bootstrap, create_topic, topic_name):
    create_topic(topic_name)
    rdkafka_produce(bootstrap, topic_name, [{"value": b"v", "partition": 0}])
    conn = client.connection(client.leader_for(topic_name, 0))
    assert conn.version_for(m.FETCH) >= 13  # topic ids instead of names
    reader, rows = _read(client, topic_name, 0, 0, 1)
    assert [r[2] for r in rows] == [b"v"]


def test_fetch_java_console_producer(bootstrap, client, create_topic, topic_name):
    create_topic(topic_name)
    lines = "".join(f"k{i}:v{i}\n" for i in range(200))
    run_java_tool("org.apache.kafka.tools.ConsoleProducer", "--bootstrap-server", bootstrap, "--topic", topic_name,
                  "--property", "parse.key=true", "--property", "key.separator=:",
                  "--compression-codec", "gzip", input=lines)
    tp = (topic_name, 0)
    end = list_offsets(client, [tp], "latest")[tp][0]
    assert end == 200
    _, rows = _read(client, topic_name, 0, 0, end)
    assert [(k, v) for _, k, v, _, _ in rows] == [(f"k{i}".encode(), f"v{i}".encode()) for i in range(200)]


def test_transactions_committed_and_aborted(bootstrap, client, create_topic, topic_name):
    from confluent_kafka import Producer

    create_topic(topic_name)
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": topic_name, "linger.ms": 5})
    producer.init_transactions(30)
    expected_committed = []
    for round_ in range(4):
        producer.begin_transaction()
        for i in range(50):
            value = f"r{round_}-{i}".encode()
            producer.produce(topic_name, value=value, partition=0)
            if round_ % 2 == 0:
                expected_committed.append(value)
        producer.flush(30)
        if round_ % 2 == 0:
            producer.commit_transaction(30)
        else:
            producer.abort_transaction(30)
        # a non-transactional record between transactions
    tp = (topic_name, 0)
    deadline = time.monotonic() + 15
    while True:  # markers are written asynchronously; wait for the final one
        lso = list_offsets(client, [tp], "latest", isolation_level="read_committed")[tp][0]
        hw = list_offsets(client, [tp], "latest")[tp][0]
        if lso == hw == 4 * 51:
            break
        assert time.monotonic() < deadline, (lso, hw)
        time.sleep(0.1)
    reader, rows = _read(client, topic_name, 0, 0, hw, isolation_level="read_committed")
    extra = [(r[0], r[2]) for r in rows if r[2] not in expected_committed]
    got = {r[2] for r in rows}
    missing = [v for v in expected_committed if v not in got]
    assert [r[2] for r in rows] == expected_committed, (len(rows), extra[:5], missing[:5], reader.fetches)
    assert not reader.stopped_early and reader.position == hw
    offsets = [r[0] for r in rows]
    assert offsets[50] == 102  # skipped: the first commit marker (50), the aborted records (51..100), abort marker
    _, rows = _read(client, topic_name, 0, 0, hw, isolation_level="read_uncommitted")
    assert len(rows) == 200  # all data records, no control records
    # default isolation level comes from the config
    with KafkaClient({"bootstrap.servers": bootstrap, "isolation.level": "read_committed"}) as rc:
        _, rows = _read(rc, topic_name, 0, 0, hw)
        assert len(rows) == 100


def test_offset_out_of_range_carries_log_bounds(bootstrap, client, create_topic, topic_name):
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import AdminClient

    create_topic(topic_name)
    rdkafka_produce(bootstrap, topic_name, [{"value": f"{i}".encode(), "partition": 0} for i in range(30)])
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.delete_records([TopicPartition(topic_name, 0, 10)])[TopicPartition(topic_name, 0, 10)].result(30)
    tp = (topic_name, 0)
    assert list_offsets(client, [tp], "earliest")[tp][0] == 10
    with pytest.raises(OffsetOutOfRangeError) as info:
        list(fetch_range(client, topic_name, 0, 3, 30))
    err = info.value
    assert (err.topic, err.partition, err.offset, err.log_start_offset, err.log_end_offset) == \
        (topic_name, 0, 3, 10, 30)
    assert topic_name in str(err) and "[10, 30)" in str(err)
    with pytest.raises(OffsetOutOfRangeError) as info:
        list(fetch_range(client, topic_name, 0, 31, 40))
    assert info.value.offset == 31
    _, rows = _read(client, topic_name, 0, 10, 30)
    assert [r[2] for r in rows] == [f"{i}".encode() for i in range(10, 30)]


def test_range_beyond_high_watermark_stops_early_without_waiting(bootstrap, client, create_topic, topic_name):
    create_topic(topic_name)
    rdkafka_produce(bootstrap, topic_name, [{"value": b"x", "partition": 0} for _ in range(5)])
    started = time.monotonic()
    reader, rows = _read(client, topic_name, 0, 2, 100)
    assert [r[0] for r in rows] == [2, 3, 4]
    assert reader.stopped_early and reader.position == 5 and reader.high_watermark == 5
    assert "[5, 100)" in reader.stop_reason
    # reading at the end: one empty fetch (no wait loop), then a clean stop
    reader, rows = _read(client, topic_name, 0, 5, 100)
    assert rows == [] and reader.stopped_early and reader.position == 5
    assert time.monotonic() - started < 5
    # empty range: no fetch at all
    reader, rows = _read(client, topic_name, 0, 3, 3)
    assert rows == [] and reader.fetches == 0 and not reader.stopped_early


def test_batch_larger_than_max_bytes_is_still_read(bootstrap, client, create_topic, topic_name):
    create_topic(topic_name)
    big = b"z" * 300_000
    rdkafka_produce(bootstrap, topic_name, [{"value": big, "partition": 0}, {"value": b"small", "partition": 0}],
                    **{"linger.ms": 0, "batch.num.messages": 1})
    reader, rows = _read(client, topic_name, 0, 0, 2, max_bytes=1024)
    assert [r[2] for r in rows] == [big, b"small"]


def test_compacted_topic_offsets_with_gaps(bootstrap, client, create_topic, topic_name):
    create_topic(topic_name, config={"cleanup.policy": "compact", "segment.ms": "100", "min.compaction.lag.ms": "0",
                                     "min.cleanable.dirty.ratio": "0.001", "delete.retention.ms": "100"})
    records = [{"key": f"k{i % 10}".encode(), "value": f"{i}".encode(), "partition": 0} for i in range(200)]
    rdkafka_produce(bootstrap, topic_name, records, **{"batch.num.messages": 20})
    time.sleep(0.3)
    rdkafka_produce(bootstrap, topic_name, [{"key": b"roll", "value": b"roll", "partition": 0}])  # rolls the segment
    end = 201
    deadline = time.monotonic() + 30
    while True:  # the log cleaner runs every second (log.cleaner.backoff.ms=1000)
        reader, rows = _read(client, topic_name, 0, 0, end)
        if len(rows) < 201 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert len(rows) == 11, "the log cleaner did not compact the topic in time"
    offsets = [r[0] for r in rows]
    assert offsets == list(range(190, 201))  # the latest value of each key survives; 0..189 are gaps
    assert {r[1]: r[2] for r in rows} == {**{f"k{i}".encode(): f"{190 + i}".encode() for i in range(10)},
                                          b"roll": b"roll"}
    assert reader.position == end and not reader.stopped_early
    # a range that falls entirely into a compacted gap yields nothing and ends cleanly
    reader, rows = _read(client, topic_name, 0, 20, 40)
    assert rows == [] and reader.position >= 40 and not reader.stopped_early


def _fetch_answer(records, hw):
    def answer(version, body):
        t = body["topics"][0]
        return {"responses": [{"topic": t.get("topic"), "topic_id": t.get("topic_id"), "partitions": [{
            "partition_index": 0, "error_code": 0, "high_watermark": hw, "last_stable_offset": hw,
            "log_start_offset": 0, "aborted_transactions": None, "preferred_read_replica": -1,
            "records": records}]}]}
    return answer


def test_fetch_that_never_progresses_gives_up_within_budget(fake_broker):
    """A 'broker' that answers every Fetch with no records although its high watermark says there are some."""
    server = fake_kafka(fake_broker, "t", {m.FETCH.api_key: _fetch_answer(b"", 100)})
    config = {"bootstrap.servers": server.address, "request.timeout.ms": "1500", "retry.backoff.ms": "50",
              "retry.backoff.max.ms": "200"}
    started = time.monotonic()
    with KafkaClient(config) as client:
        with pytest.raises(RetriesExhaustedError) as info:
            list(fetch_range(client, "t", 0, 10, 20))
    elapsed = time.monotonic() - started
    assert elapsed < 5, elapsed
    assert isinstance(info.value.last_error, FetchStalledError)
    assert "no progress at offset 10" in str(info.value)
    fetches = sum(1 for key, _, _ in server.requests if key == m.FETCH.api_key)
    assert 3 <= fetches < 40


def test_truncated_batch_grows_fetch_size_then_gives_up(fake_broker):
    """Only a partial batch ever comes back: the fetch size grows (x4 each time) up to its cap, then the reader
    backs off and gives up within the budget instead of looping."""
    from spark_kwire.protocol.records import encode_record_batch

    batch = encode_record_batch(pa.array([b"x" * 1000] * 10, pa.binary()), base_offset=0)
    sizes = []

    def answer(version, body):
        sizes.append(body["topics"][0]["partitions"][0]["partition_max_bytes"])
        return _fetch_answer(batch[:200], 10)(version, body)

    server = fake_kafka(fake_broker, "t", {m.FETCH.api_key: answer})
    config = {"bootstrap.servers": server.address, "request.timeout.ms": "1500", "max.partition.fetch.bytes": "1024",
              "fetch.max.bytes": "1048576", "retry.backoff.ms": "50"}
    with KafkaClient(config) as client:
        with pytest.raises(RetriesExhaustedError, match="no complete batch"):
            list(fetch_range(client, "t", 0, 0, 10))
    assert sizes[:3] == [1024, 4096, 16384] and max(sizes) <= 1048576 + 64 * 1024 * 1024


def _batch_headers(base: int, count: int, size: int = 61) -> bytes:
    """`count` magic-2 batches of one record each from offset `base`: only the header fields a scan reads."""
    out = bytearray()
    for offset in range(base, base + count):
        header = struct.pack(">qiibIhi", offset, size - 12, 0, 2, 0, 0, 0)  # lastOffsetDelta 0
        out += header + bytes(size - len(header))
    return bytes(out)


def test_a_small_answer_covering_a_range_below_the_high_watermark_is_not_scanned(monkeypatch):
    """A stream's micro-batch: its end is known to exist, the broker sent what it had; a Fetch pipelined after it
    would never be needed, and scanning hundreds of small batches for it cost ~0.6 ms per partition."""
    from spark_kwire.client.consumer import fetcher

    records = _batch_headers(100, 375)
    assert fetcher.scan_next_offset(records) == 475
    # cut by the size limit (more than half of it): the next Fetch goes out before this answer is decoded
    assert fetcher.pipelined_offset(records, 100, 600, 1000, 2 * len(records) - 1) == 475
    assert fetcher.pipelined_offset(records, 100, 475, 1000, 2 * len(records) - 1) is None  # (nothing follows)
    # the range ends past the high watermark: scanned, and the next Fetch goes out up to the watermark
    assert fetcher.pipelined_offset(records, 100, 600, 500, 1 << 20) == 475
    assert fetcher.pipelined_offset(records, 100, 600, 475, 1 << 20) is None
    monkeypatch.setattr(fetcher, "scan_next_offset", lambda _records: pytest.fail("scanned"))
    assert fetcher.pipelined_offset(records, 100, 475, 1000, 1 << 20) is None
    assert fetcher.pipelined_offset(records, 100, 475, 475, 2 * len(records)) is None
    assert fetcher.pipelined_offset(None, 100, 475, 1000, 1 << 20) is None
