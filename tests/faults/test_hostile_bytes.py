"""Hostile bytes: more than 100,000 random and mutated Fetch responses and record sets (seeded; seeds are real
responses of the session broker captured here) through the decoders, and a fake broker that answers with
garbage, truncated frames, absurd sizes, a trickle or nothing. Only KwireError subclasses may come out,
each input within a fixed time, memory bounded; the client fails clearly within its timeouts.
"""

from __future__ import annotations

import time
import tracemalloc

import pyarrow as pa
import pytest

from spark_kwire.client import KafkaClient, Producer, fetch_range
from spark_kwire.protocol.errors import KwireError, ProtocolDecodeError
from spark_kwire.protocol.records import (DEFAULT_MAX_DECOMPRESSED_BYTES, DecompressedSizeError,
                                         decode_record_set, warm_up)

from harness import fake_broker

from . import hostile
from . import scenarios as sc

MAX_SECONDS_PER_INPUT = 2.0  # inputs take well under a millisecond; generous for loaded CI machines


def make_seeds(bootstrap: str) -> tuple[list, list]:
    """Fetch responses of a topic holding every codec, headers, null keys/values and committed and aborted
    transactions (control batches), written by librdkafka and kwire, captured at several Fetch versions."""
    from confluent_kafka import Producer as RdProducer

    topic = sc.create_topic(bootstrap, sc.unique_topic("fuzz-seeds"), 3, replication=1, min_isr=None)
    for i, codec in enumerate(["none", "gzip", "snappy", "lz4", "zstd"]):
        producer = RdProducer({"bootstrap.servers": bootstrap, "compression.type": codec, "linger.ms": 5})
        for j in range(30):
            producer.produce(topic, partition=i % 3, key=None if j % 7 == 0 else f"k{j}".encode(),
                             value=None if j % 11 == 0 else f"{codec}-{j}".encode() * (1 + j % 4),
                             headers=[("h", f"{j}".encode()), ("empty", None)] if j % 2 else None)
        assert producer.flush(30) == 0
    txn = RdProducer({"bootstrap.servers": bootstrap, "transactional.id": f"fuzz-{topic}", "linger.ms": 5})
    txn.init_transactions(30)
    for commit in (True, False):
        txn.begin_transaction()
        for j in range(10):
            txn.produce(topic, partition=0, key=b"t", value=f"txn-{commit}-{j}".encode())
        txn.flush(30)
        (txn.commit_transaction if commit else txn.abort_transaction)(30)
    with KafkaClient({"bootstrap.servers": bootstrap}) as client:
        producer = Producer(client, compression="zstd", batch_size=2048)
        producer.send_batch(topic, 1, pa.array([f"kwire-{i}".encode() for i in range(200)], pa.binary()),
                            pa.array([None if i % 5 == 0 else b"key" for i in range(200)], pa.binary()))
        producer.flush()
        topic_id = client.topic_info(topic).topic_id
        host, port = client.config.bootstrap_servers[0]
    frames = hostile.capture_fetch_responses(host, port, topic, topic_id, 3)
    records = [r for version, frame in frames for r in hostile.record_sets_of(version, frame)]
    return frames, records


@pytest.fixture(scope="module")
def seeds(bootstrap):
    warm_up()  # numba compilation must not count as the time of an input
    return make_seeds(bootstrap)


def test_seeds_are_real_and_decode(seeds):
    frames, records = seeds
    assert {v for v, _ in frames} >= {4, 12, 13, 18}
    decoded = [decode_record_set(r, start_offset=0, include_headers=True) for r in records]
    codecs = set().union(*(d.codecs for d in decoded))
    assert codecs >= {"gzip", "snappy", "lz4", "zstd"}, codecs
    assert sum(d.record_count for d in decoded) > 100


def test_memory_growth_is_measured_around_the_work_not_over_the_process_life():
    """The fuzz test's memory bound must be able to fail: what it measures rises with memory held during
    the work, even after the process once held more (which ru_maxrss, a lifetime high-water mark, hides)."""
    earlier_peak = b"\x01" * (300 * 2**20)
    del earlier_peak
    with hostile.RssGrowth() as quiet:
        time.sleep(0.1)
    with hostile.RssGrowth() as busy:
        held = b"\x01" * (150 * 2**20)
        time.sleep(0.1)
    del held
    assert quiet.growth_mb < 20, quiet.growth_mb
    assert 140 < busy.growth_mb < 200, busy.growth_mb


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_100k_hostile_inputs_raise_only_kwire_errors_quickly_in_bounded_memory(seeds):
    frames, records = seeds
    report = hostile.fuzz_decoders(frames, records, fetch_inputs=40_000, record_inputs=62_000, seed=20261122)
    print("\n" + report.summary())
    assert report.inputs >= 100_000
    assert not report.escaped, "non-KwireError exceptions:\n" + "\n".join(
        f"{d}: {e}\n  input: {h}" for d, h, e in report.escaped[:10])
    assert sum(report.errors.values()) > 50_000 and report.ok > 1_000  # both paths were exercised
    assert report.slowest_s < MAX_SECONDS_PER_INPUT, (report.slowest_decoder, report.slowest_input.hex()[:400])
    assert report.rss_growth_mb < 300


EXPECTED = {
    # mode: (exception raised, text it must contain)
    "garbage": (ProtocolDecodeError, "cannot decode Fetch"),
    "corrupt": (ProtocolDecodeError, "hostile"),
    "truncated": (KwireError, "mid-frame"),
    "close": (KwireError, "closed by the broker"),
    "silent": (KwireError, "no complete Fetch response"),
    "trickle": (KwireError, "no complete Fetch response"),
    "huge": (KwireError, "invalid response frame size 2147483647"),
    "lie": (KwireError, "no complete Fetch response"),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("mode", sorted(EXPECTED))
def test_fake_broker_hostile_fetch_answers_fail_clearly_within_the_timeouts(mode):
    error_type, text = EXPECTED[mode]
    options = {"request.timeout.ms": "1000", "default.api.timeout.ms": "2000", "fetch.max.wait.ms": "100",
               "retry.backoff.max.ms": "200"}
    tracemalloc.start()
    try:
        with fake_broker.FakeBroker(mode) as broker, KafkaClient({"bootstrap.servers": broker.bootstrap, **options}) as client:
            started = time.monotonic()
            with pytest.raises(error_type) as info:
                for _ in fetch_range(client, fake_broker.FAKE_TOPIC, 0, 0, 3):
                    pass
            elapsed = time.monotonic() - started
            _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    message = str(info.value)
    print(f"\n{mode}: {type(info.value).__name__} after {elapsed:.1f}s, peak {peak / 2**20:.1f} MiB: {message}")
    assert text in message
    assert broker.bootstrap in message or mode == "corrupt"
    # default.api.timeout.ms (2 s) of retries, the last attempt's request.timeout.ms (1 s), backoff, slack
    assert elapsed < 2.0 + 1.1 + 0.2 + 1.5, elapsed
    assert peak < 40 * 2**20, "a size field the broker did not back with data was allocated"
    assert broker.fetches >= 1


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_decompression_bomb_stops_at_the_limit_in_bounded_memory(codec):
    limit = 8 * 2**20
    batch = fake_broker.bomb_batch(codec, 64 * 2**20)
    assert len(batch) < 4 * 2**20
    warm_up()  # loading compiled kernels allocates too; only the decode is measured
    tracemalloc.start()
    try:
        with pytest.raises(DecompressedSizeError, match=f"{codec} data inflates to more than {limit} bytes"):
            decode_record_set(batch, start_offset=0, topic="bomb", partition=0, max_decompressed_bytes=limit)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 * limit + len(batch) + 2**20, f"{len(batch)} bytes on the wire made the decoder allocate {peak / 2**20:.0f} MiB"
    # below the limit the same batch decodes: the bound refuses only what exceeds it
    decoded = decode_record_set(batch, start_offset=0, topic="bomb", partition=0, max_decompressed_bytes=65 * 2**20)
    assert decoded.record_count == 1 and decoded.value[0].as_py() == b"\0" * (64 * 2**20)


def test_decompression_bomb_past_the_default_limit_is_refused():
    batch = fake_broker.bomb_batch("zstd", DEFAULT_MAX_DECOMPRESSED_BYTES + 2**20)
    assert len(batch) < 64 * 1024
    with pytest.raises(DecompressedSizeError, match=str(DEFAULT_MAX_DECOMPRESSED_BYTES)):
        decode_record_set(batch, start_offset=0, topic="bomb", partition=0)


@pytest.mark.timeout(60)
def test_fake_broker_sending_a_decompression_bomb_fails_with_the_setting_to_raise():
    options = {"request.timeout.ms": "1000", "default.api.timeout.ms": "2000", "kwire.max.decompressed.bytes": "4194304"}
    tracemalloc.start()
    try:
        with fake_broker.FakeBroker("bomb") as broker, KafkaClient({"bootstrap.servers": broker.bootstrap, **options}) as client:
            with pytest.raises(DecompressedSizeError) as info:
                for _ in fetch_range(client, fake_broker.FAKE_TOPIC, 0, 0, 3):
                    pass
            _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    message = str(info.value)
    assert "more than 4194304 bytes" in message and "maxDecompressedBytes" in message, message
    assert f"topic {fake_broker.FAKE_TOPIC!r} partition 0" in message, message
    assert peak < 24 * 2**20, f"peak {peak / 2**20:.0f} MiB"
