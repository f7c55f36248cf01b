"""Fixtures of the client-layer tests: a KafkaClient on the session broker, librdkafka helpers, fake brokers."""

from __future__ import annotations

import socket
import struct
import threading
import time

import pytest

from spark_kwire.client import ClientConfig, KafkaClient


@pytest.fixture
def client(bootstrap):
    with KafkaClient(ClientConfig.from_kafka_options({"bootstrap.servers": bootstrap})) as c:
        yield c


def rdkafka_produce(bootstrap, topic, records, **config):
    """Produce ``records`` (dicts for confluent_kafka.Producer.produce) with librdkafka; fail on any error."""
    from confluent_kafka import Producer

    errors = []
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, **config})
    for rec in records:
        producer.produce(topic, on_delivery=lambda err, msg: errors.append(err) if err else None, **rec)
        producer.poll(0)
    assert producer.flush(30) == 0
    assert not errors, errors


def rdkafka_consume(bootstrap, topic, count, *, partitions=1, timeout=30, extra_wait=1.0, **config):
    """Read ``count`` messages of ``topic`` (partitions 0..partitions-1, from the start) with librdkafka,
    then keep polling ``extra_wait`` seconds to catch extra (duplicate) records."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"verify-{time.time_ns()}",
                         "enable.auto.commit": False, **config})
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    out = []
    deadline = time.monotonic() + timeout
    try:
        while len(out) < count and time.monotonic() < deadline:
            for msg in consumer.consume(1000, 0.5):
                assert msg.error() is None, msg.error()
                out.append(msg)
        end = time.monotonic() + extra_wait
        while time.monotonic() < end:
            out.extend(m for m in consumer.consume(1000, 0.2) if m.error() is None)
    finally:
        consumer.close()
    return out


class FakeBroker:
    """A TCP server on loopback whose per-connection behaviour is ``handler(conn_socket)``."""

    def __init__(self, handler) -> None:
        self.handler = handler
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.requests: list[tuple[int, int, int]] = []  # (api_key, version, correlation_id)
        self._stop = False
        self._conns = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            self._conns.append(conn)
            threading.Thread(target=self._run, args=(conn,), daemon=True).start()

    def _run(self, conn) -> None:
        try:
            self.handler(self, conn)
        except OSError:
            pass

    def read_request(self, conn):
        """One request frame: (api_key, version, correlation_id, frame) or None on EOF."""
        header = _recv_exact(conn, 4)
        if header is None:
            return None
        size = struct.unpack(">i", header)[0]
        frame = _recv_exact(conn, size)
        if frame is None:
            return None
        api_key, version, cid = struct.unpack_from(">hhi", frame, 0)
        self.requests.append((api_key, version, cid))
        return api_key, version, cid, frame

    @staticmethod
    def send_frame(conn, payload: bytes) -> None:
        conn.sendall(struct.pack(">i", len(payload)) + payload)

    def close(self) -> None:
        self._stop = True
        self.sock.close()
        for c in self._conns:
            try:
                c.close()
            except OSError:
                pass


def _recv_exact(conn, n):
    buf = b""
    while len(buf) < n:
        chunk = conn.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


@pytest.fixture
def fake_broker():
    servers = []

    def make(handler):
        server = FakeBroker(handler)
        servers.append(server)
        return server

    yield make
    for s in servers:
        s.close()


def fake_kafka(fake_broker, topic, handlers, *, partitions=1, topic_id=None):
    """A scripted one-node 'Kafka' on loopback: answers ApiVersions and Metadata (``topic`` with ``partitions``
    led by node 1) itself and every other API with ``handlers[api_key](version, request_body) -> response body``
    (encoded with the protocol layer). Returns the FakeBroker."""
    import uuid as _uuid

    from spark_kwire.protocol import messages as m

    topic_id = topic_id or _uuid.uuid4()
    supported = [m.API_VERSIONS, m.METADATA, *[m.BY_KEY[k] for k in handlers]]

    def handler(srv, conn):
        while True:
            req = srv.read_request(conn)
            if req is None:
                return
            api_key, version, cid, frame = req
            api = m.BY_KEY[api_key]
            _, body = api.decode_request(version, frame)
            if api is m.API_VERSIONS:
                response = {"error_code": 0, "api_keys": [
                    {"api_key": a.api_key, "min_version": a.min_version, "max_version": a.max_stable_version}
                    for a in supported]}
            elif api is m.METADATA:
                response = {"brokers": [{"node_id": 1, "host": "127.0.0.1", "port": srv.port}], "controller_id": 1,
                            "cluster_id": "fake", "topics": [{
                                "error_code": 0, "name": topic, "topic_id": topic_id, "partitions": [
                                    {"error_code": 0, "partition_index": p, "leader_id": 1, "leader_epoch": 0,
                                     "replica_nodes": [1], "isr_nodes": [1], "offline_replicas": []}
                                    for p in range(partitions)]}]}
            else:
                response = handlers[api_key](version, body)
            srv.send_frame(conn, api.encode_response(version, response, correlation_id=cid))

    return fake_broker(handler)
