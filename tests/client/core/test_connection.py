"""BrokerConnection: ApiVersions negotiation, pipelining, and failing fast instead of hanging."""

from __future__ import annotations

import struct
import time

import pytest

from spark_kwire.client import (BrokerConnection, BrokerConnectionError, ClientConfig, KafkaClient,
                                RequestTimeoutError, RetriesExhaustedError, UnsupportedVersionError)
from spark_kwire.protocol import messages as m
from harness import free_port


def _config(**opts):
    return ClientConfig.from_kafka_options({"bootstrap.servers": "127.0.0.1:1", **opts})


def test_api_versions_negotiation_with_real_broker(bootstrap):
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    with BrokerConnection(host, int(port), _config()) as conn:
        ranges = conn.api_versions
        # Kafka 4.x dropped Fetch v0-v3 and Produce v0-v2 (KIP-896)
        assert ranges[m.FETCH.api_key][0] >= 4
        assert ranges[m.FETCH.api_key][1] >= 13
        assert conn.version_for(m.FETCH) == min(ranges[m.FETCH.api_key][1], m.FETCH.max_version)
        assert conn.version_for(m.FETCH, 12) == 12
        assert conn.version_for(m.METADATA) >= 12
        # unstable versions are not advertised: OffsetCommit v10 needs topic ids and is not offered
        assert conn.version_for(m.OFFSET_COMMIT) <= 10


def test_pipelined_requests_matched_by_correlation_id(bootstrap):
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    with BrokerConnection(host, int(port), _config()) as conn:
        pendings = [conn.send(m.METADATA, {"topics": [], "allow_auto_topic_creation": False}) for _ in range(5)]
        pendings.append(conn.send(m.API_VERSIONS, {"client_software_name": "x", "client_software_version": "1"}))
        assert conn.in_flight == 6
        assert len({p.correlation_id for p in pendings}) == 6
        # collect the newest first: older answers are read and kept on their own PendingResponse
        api_versions = pendings[-1].result(timeout=10)
        assert any(k["api_key"] == m.FETCH.api_key for k in api_versions["api_keys"])
        assert all(p.done for p in pendings)
        for p in pendings[:-1]:
            assert p.result()["brokers"][0]["port"] == int(port)
        assert conn.in_flight == 0


def test_connection_refused_names_address_quickly():
    port = free_port()  # nothing listens there now
    started = time.monotonic()
    with pytest.raises(BrokerConnectionError) as info:
        BrokerConnection("127.0.0.1", port, _config()).connect()
    assert time.monotonic() - started < 5
    assert f"127.0.0.1:{port}" in str(info.value)
    assert info.value.retriable

    config = ClientConfig.from_kafka_options({"bootstrap.servers": f"127.0.0.1:{port}", "request.timeout.ms": "1500",
                                              "retry.backoff.ms": "50", "retry.backoff.max.ms": "200"})
    started = time.monotonic()
    with pytest.raises(RetriesExhaustedError) as info:
        with KafkaClient(config) as client:
            client.list_topics()
    elapsed = time.monotonic() - started
    assert elapsed < 5, elapsed
    assert f"127.0.0.1:{port}" in str(info.value)
    assert isinstance(info.value.last_error, BrokerConnectionError)


def test_silent_server_times_out_within_request_timeout(fake_broker):
    server = fake_broker(lambda srv, conn: time.sleep(30))
    config = _config(**{"request.timeout.ms": "1000"})
    started = time.monotonic()
    with pytest.raises(RequestTimeoutError) as info:
        BrokerConnection("127.0.0.1", server.port, config).connect()
    elapsed = time.monotonic() - started
    assert 0.9 <= elapsed < 3, elapsed
    assert server.address in str(info.value) and "request.timeout.ms=1000" in str(info.value)

    client_config = ClientConfig.from_kafka_options({"bootstrap.servers": server.address, "request.timeout.ms": "1000"})
    started = time.monotonic()
    with pytest.raises(RetriesExhaustedError) as info:
        KafkaClient(client_config).list_topics()
    assert time.monotonic() - started < 4
    assert server.address in str(info.value)


def _answer_once(payload_after_request):
    def handler(srv, conn):
        if srv.read_request(conn) is None:
            return
        conn.sendall(payload_after_request)
        time.sleep(0.5)
        conn.close()
    return handler


def test_connection_closed_mid_frame(fake_broker):
    server = fake_broker(_answer_once(struct.pack(">i", 100) + b"\x00\x00\x00\x01" + b"x" * 10))
    with pytest.raises(BrokerConnectionError) as info:
        BrokerConnection("127.0.0.1", server.port, _config()).connect()
    assert server.address in str(info.value)
    assert "mid-frame" in str(info.value) and "14 of 100" in str(info.value)
    assert info.value.retriable


@pytest.mark.parametrize("size", [2**31 - 1, -5, 0])
def test_bad_frame_sizes_rejected_without_allocating(fake_broker, size):
    server = fake_broker(_answer_once(struct.pack(">i", size)))
    started = time.monotonic()
    with pytest.raises(BrokerConnectionError, match=f"invalid response frame size {size}"):
        BrokerConnection("127.0.0.1", server.port, _config()).connect()
    assert time.monotonic() - started < 2


def _api_versions_v0_body(code, ranges):
    body = struct.pack(">hi", code, len(ranges))
    for key, lo, hi in ranges:
        body += struct.pack(">hhh", key, lo, hi)
    return body


def test_api_versions_fallback_on_unsupported_version(fake_broker):
    """An older broker answers an ApiVersions version it does not know with a v0 UNSUPPORTED_VERSION body."""
    broker_ranges = [(18, 0, 2), (3, 0, 12), (1, 4, 12)]

    def handler(srv, conn):
        while True:
            req = srv.read_request(conn)
            if req is None:
                return
            api_key, version, cid, _ = req
            if version > 2:
                srv.send_frame(conn, struct.pack(">i", cid) + _api_versions_v0_body(35, [(18, 0, 2)]))
            else:
                body = {"error_code": 0, "api_keys": [{"api_key": k, "min_version": lo, "max_version": hi}
                                                      for k, lo, hi in broker_ranges], "throttle_time_ms": 0}
                srv.send_frame(conn, m.API_VERSIONS.encode_response(version, body, correlation_id=cid))

    server = fake_broker(handler)
    with BrokerConnection("127.0.0.1", server.port, _config()) as conn:
        assert [v for _, v, _ in server.requests] == [m.API_VERSIONS.max_version, 2]
        assert conn.version_for(m.METADATA) == 12
        assert conn.version_for(m.FETCH) == 12
        with pytest.raises(UnsupportedVersionError, match="does not support Produce"):
            conn.version_for(m.PRODUCE)


def test_no_common_version_is_a_clear_error(fake_broker):
    def handler(srv, conn):
        req = srv.read_request(conn)
        if req is None:
            return
        _, version, cid, _ = req
        body = {"error_code": 0, "api_keys": [{"api_key": 18, "min_version": 0, "max_version": 4},
                                              {"api_key": 1, "min_version": 0, "max_version": 3}]}
        srv.send_frame(conn, m.API_VERSIONS.encode_response(version, body, correlation_id=cid))
        time.sleep(1)

    server = fake_broker(handler)
    with BrokerConnection("127.0.0.1", server.port, _config()) as conn:
        with pytest.raises(UnsupportedVersionError) as info:
            conn.version_for(m.FETCH)
    text = str(info.value)
    assert "Fetch" in text and "v0..v3" in text and f"v{m.FETCH.min_version}" in text and server.address in text


def test_requests_in_flight_fail_when_broker_goes_away(fake_broker):
    """Answers ApiVersions, then swallows two requests and closes: both pending requests fail, no hang."""
    def handler(srv, conn):
        req = srv.read_request(conn)
        _, version, cid, _ = req
        body = {"error_code": 0, "api_keys": [{"api_key": 18, "min_version": 0, "max_version": 4},
                                              {"api_key": 3, "min_version": 0, "max_version": 12}]}
        srv.send_frame(conn, m.API_VERSIONS.encode_response(version, body, correlation_id=cid))
        srv.read_request(conn)
        srv.read_request(conn)
        conn.close()

    server = fake_broker(handler)
    conn = BrokerConnection("127.0.0.1", server.port, _config()).connect()
    first = conn.send(m.METADATA, {"topics": []})
    second = conn.send(m.METADATA, {"topics": []})
    with pytest.raises(BrokerConnectionError, match="closed by the broker"):
        second.result(timeout=5)
    with pytest.raises(BrokerConnectionError):
        first.result()
    assert not conn.connected
