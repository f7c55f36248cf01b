"""How a flush's batches leave for a real broker: the few small partitions of a stream's micro-batch as one
Produce request, a flush of many partitions sent while the rest is still being encoded. Encoding is slowed
down here (as on a busy machine), so that when the sender is woken decides what each request carries."""

from __future__ import annotations

import time

import pyarrow as pa
import pytest

from spark_kwire.client import Producer
from spark_kwire.client.producer import accumulator as accumulator_module
from spark_kwire.client.producer.sender import Sender

ENCODE_DELAY_S = 0.02  # per partition encoded: a busy machine's encoding, long enough for the sender to act


@pytest.fixture
def slow_encoding(monkeypatch):
    encode = accumulator_module.encode_record_batches

    def encode_slowly(*args, **kwargs):
        time.sleep(ENCODE_DELAY_S)  # releases the GIL, as the compiled kernels do
        return encode(*args, **kwargs)

    monkeypatch.setattr(accumulator_module, "encode_record_batches", encode_slowly)


@pytest.fixture
def produce_requests(monkeypatch):
    """The Produce requests sent: (partitions in the request, its bytes, records still open when it left)."""
    sent = []
    send_request = Sender._send_request

    def counted(self, leader, batches, now):
        sent.append((sorted(b.partition for b in batches), sum(len(b.payload) for b in batches),
                     self.accumulator.pending_records))
        return send_request(self, leader, batches, now)

    monkeypatch.setattr(Sender, "_send_request", counted)
    return sent


def _rows(n: int, partition: int) -> pa.Array:
    return pa.array([b"%02d-%06d-" % (partition, i) + b"x" * 88 for i in range(n)], pa.binary())


def _flush_of(client, topic: str, partitions: int, rows: int, produce_requests: list, **settings) -> list:
    """The requests that a flush of ``rows`` rows in each of ``partitions`` partitions sent (a warm producer:
    its producer id known and each partition's first batch acknowledged, as in a stream's later micro-batches)."""
    with Producer(client, **settings) as producer:
        for partition in range(partitions):
            producer.send_batch(topic, partition, _rows(10, partition))
        producer.flush()
        for partition in range(partitions):
            producer.send_batch(topic, partition, _rows(rows, partition))
        assert producer.sending_in_background is False  # nothing was full: all of it waits for the flush
        produce_requests.clear()
        acks = producer.flush()
        assert {tp[1]: a.records for tp, a in acks.items()} == {p: rows for p in range(partitions)}
        return list(produce_requests)


def test_a_micro_batch_of_a_few_partitions_is_one_produce_request(client, create_topic, topic_name, slow_encoding,
                                                                   produce_requests):
    """Woken at the first partition made ready, the sender sent it alone and the rest in a second request (a
    stream's flush of 4 partitions took 1.9-2.3 requests under load)."""
    create_topic(topic_name, partitions=4)
    requests = _flush_of(client, topic_name, 4, 400, produce_requests)
    assert [(partitions, still_open) for partitions, _, still_open in requests] == [([0, 1, 2, 3], 0)]


def test_a_flush_of_many_partitions_is_sent_while_the_rest_is_encoded(client, create_topic, topic_name,
                                                                      slow_encoding, produce_requests):
    """Woken only once every partition was ready, the sender idled while the flush encoded them all, and the
    broker waited with it (issue 45: 64-partition writes of 0.98-1.60 s against 0.73-1.12 s). Each request
    but the last still carries at least batch.size bytes."""
    create_topic(topic_name, partitions=24)
    batch_size = 64 * 1024
    requests = _flush_of(client, topic_name, 24, 300, produce_requests, batch_size=batch_size)  # ~32 KB each
    assert sorted(p for partitions, _, _ in requests for p in partitions) == list(range(24))
    assert requests[0][2] > 0  # the first request left while records were still waiting to be encoded
    assert all(size >= batch_size for _, size, _ in requests[:-1])  # not a request per partition
    assert len(requests) >= 3
