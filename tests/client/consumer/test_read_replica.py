"""Which replica a fetch goes to, against a scripted one-node 'Kafka' that sees every Fetch (rack-aware reads
against real racks of brokers are in tests/spark/test_rack_aware_reads.py)."""

from __future__ import annotations

import pyarrow as pa

from spark_kwire.client import ClientConfig, KafkaClient, fetch_range
from spark_kwire.protocol import messages as m
from spark_kwire.protocol.records import encode_record_batch
from tests.client.conftest import fake_kafka

VALUES = [f"v{i}".encode() for i in range(10)]


def _answers(fetches: list, redirect_to: int | None = None):
    """Fetch answers with the 10 records; with ``redirect_to``, a Fetch that names a rack gets that broker as its
    preferred read replica and no records instead, as a rack-aware leader answers."""
    batch = encode_record_batch(pa.array(VALUES, pa.binary()), base_offset=0)

    def answer(version, body):
        fetches.append(body)
        t = body["topics"][0]
        redirect = redirect_to is not None and body.get("rack_id")
        return {"responses": [{"topic": t.get("topic"), "topic_id": t.get("topic_id"), "partitions": [{
            "partition_index": 0, "error_code": 0, "high_watermark": 10, "last_stable_offset": 10,
            "log_start_offset": 0, "aborted_transactions": None,
            "preferred_read_replica": redirect_to if redirect else -1, "records": b"" if redirect else batch}]}]}
    return answer


def _metadata_requests(server) -> int:
    return sum(1 for key, _, _ in server.requests if key == m.METADATA.api_key)


def test_client_rack_is_read_from_the_kafka_setting():
    assert ClientConfig.from_kafka_options({"client.rack": " use1-az1 "}).client_rack == "use1-az1"
    assert ClientConfig.from_kafka_options({"client.rack": ""}).client_rack is None
    assert ClientConfig.from_kafka_options({}).client_rack is None
    assert "client.rack" not in ClientConfig.from_kafka_options({"client.rack": "a"}).ignored  # a field, honoured


def test_without_client_rack_every_fetch_goes_to_the_leader_naming_no_rack(fake_broker):
    fetches = []
    server = fake_kafka(fake_broker, "t", {m.FETCH.api_key: _answers(fetches)})
    with KafkaClient({"bootstrap.servers": server.address}) as client:
        reader = fetch_range(client, "t", 0, 0, 10)
        assert [v for b in reader for v in b.value.to_pylist()] == VALUES
        assert client.read_replicas == {}
    assert [f["rack_id"] for f in fetches] == [""] and reader.fetches == 1
    assert _metadata_requests(server) == 1  # the bootstrap's, nothing more


def test_a_rack_is_sent_and_changes_nothing_when_the_leader_names_no_replica(fake_broker):
    fetches = []
    server = fake_kafka(fake_broker, "t", {m.FETCH.api_key: _answers(fetches)})
    with KafkaClient({"bootstrap.servers": server.address, "client.rack": "az-a"}) as client:
        reader = fetch_range(client, "t", 0, 0, 10)
        assert [v for b in reader for v in b.value.to_pylist()] == VALUES
        assert client.read_replicas == {}
    assert [f["rack_id"] for f in fetches] == ["az-a"] and reader.fetches == 1
    assert _metadata_requests(server) == 1


def test_a_preferred_replica_the_metadata_does_not_know_is_not_followed(fake_broker):
    """The leader names broker 7, which the cluster metadata (refreshed once to be sure) does not list: the
    partition is read from the leader alone (no rack named, so it serves the records itself), not from broker 7,
    and not in a loop of redirects."""
    fetches = []
    server = fake_kafka(fake_broker, "t", {m.FETCH.api_key: _answers(fetches, redirect_to=7)})
    with KafkaClient({"bootstrap.servers": server.address, "client.rack": "az-a"}) as client:
        reader = fetch_range(client, "t", 0, 0, 10)
        assert [v for b in reader for v in b.value.to_pylist()] == VALUES
        assert client.read_replicas[("t", 0)].node == -1  # the leader alone, for a while
        again = fetch_range(client, "t", 0, 5, 10)  # a later range of the partition: straight to the leader
        assert [v for b in again for v in b.value.to_pylist()] == VALUES[5:]
    assert [f["rack_id"] for f in fetches] == ["az-a", "", ""]
    assert _metadata_requests(server) == 2  # the bootstrap's and one refresh before giving up on broker 7
