"""The foundation: a real Apache Kafka broker, the Java tools beside it, a 3-node cluster."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import time

import pytest

from harness import KafkaCluster, run_java_tool


def _raw_api_versions(port: int) -> dict[int, tuple[int, int]]:
    """ApiVersions v0 by hand (independent of kwire's protocol layer): api key -> (min, max) version."""
    client_id = b"kwire-foundation-test"
    body = struct.pack(">hhih", 18, 0, 7, len(client_id)) + client_id
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(struct.pack(">i", len(body)) + body)
        size = struct.unpack(">i", s.recv(4, socket.MSG_WAITALL))[0]
        data = s.recv(size, socket.MSG_WAITALL)
    correlation_id, error_code, count = struct.unpack_from(">ihi", data, 0)
    assert correlation_id == 7 and error_code == 0
    ranges = {}
    for i in range(count):
        key, lo, hi = struct.unpack_from(">hhh", data, 10 + 6 * i)
        ranges[key] = (lo, hi)
    return ranges


def test_broker_is_real_apache_kafka_4(kafka):
    ranges = _raw_api_versions(kafka.nodes[1].port)
    # Kafka 4.x dropped Fetch v0-v3, ListOffsets v0 and OffsetCommit v0-v1 (KIP-896); 4.1 serves Fetch v18.
    assert ranges[1] == (4, 18), ranges[1]
    assert ranges[2][0] == 1 and ranges[8][0] == 2, (ranges[2], ranges[8])
    assert "Kafka version: 4.1.1" in kafka.nodes[1].log_path.read_text()


def test_java_console_producer_write_is_read_by_librdkafka(kafka, create_topic, topic_name):
    from confluent_kafka import Consumer

    create_topic(topic_name, partitions=1)
    run_java_tool(
        "org.apache.kafka.tools.ConsoleProducer", "--bootstrap-server", kafka.bootstrap_servers,
        "--topic", topic_name, "--property", "parse.key=true", "--property", "key.separator=:",
        input="k1:hello from java\nk2:second line\n",
    )
    consumer = Consumer({"bootstrap.servers": kafka.bootstrap_servers, "group.id": topic_name,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic_name])
    got, deadline = [], time.time() + 30
    while len(got) < 2 and time.time() < deadline:
        msg = consumer.poll(1.0)
        if msg is not None and not msg.error():
            got.append((msg.key(), msg.value(), msg.offset()))
    consumer.close()
    assert got == [(b"k1", b"hello from java", 0), (b"k2", b"second line", 1)]


def _kafka_pids() -> set[int]:
    out = subprocess.run(["pgrep", "-f", "kafka.Kafka"], capture_output=True, text=True).stdout
    return {int(p) for p in out.split()}


def test_three_node_cluster_survives_a_killed_node_and_cleans_up():
    started = time.monotonic()
    cluster = KafkaCluster(3).start()
    try:
        assert time.monotonic() - started < 60
        pids = {n.process.pid for n in cluster.nodes.values()}
        assert len(pids) == 3 and pids <= _kafka_pids()
        for node in cluster.nodes.values():
            assert _raw_api_versions(node.port)[1][0] == 4
        cluster.kill(2)
        assert not cluster.nodes[2].is_running()
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", cluster.nodes[2].port), timeout=2).close()
        _raw_api_versions(cluster.nodes[1].port)  # the others still answer
        cluster.restart(2)
        assert cluster.nodes[2].is_running()
        pids.add(cluster.nodes[2].process.pid)
        assert _raw_api_versions(cluster.nodes[2].port)[1][0] == 4
        workdir = cluster.workdir
    finally:
        cluster.stop()
    # Nothing this cluster started is left (other Kafka processes on the machine may come and go meanwhile).
    assert not (_kafka_pids() & pids)
    assert not workdir.exists()


def test_single_broker_starts_in_under_30_seconds():
    started = time.monotonic()
    with KafkaCluster(1) as cluster:
        elapsed = time.monotonic() - started
        _raw_api_versions(cluster.nodes[1].port)
    assert elapsed < 30, elapsed


def test_the_sessions_brokers_run_lean_and_share_the_kafka_class_archive(kafka):
    """harness.jvm as tests/conftest.py turns it on: the session broker runs C1 and the serial collector, loads
    the archive `make setup` dumped, and the archive is one this JDK accepts (-Xshare:on refuses to start
    otherwise); Spark drivers started from here get the same options, and the archive of .venv's PySpark."""
    from harness.jvm import LEAN_JVM_OPTIONS, kafka_class_archive, spark_class_archive
    from harness.paths import java_command, kafka_lib_dir

    archive = kafka_class_archive(kafka_lib_dir())
    assert archive.exists(), f"no class archive at {archive}: make setup dumps it"
    command = open(f"/proc/{kafka.nodes[1].process.pid}/cmdline", "rb").read().decode().split("\0")
    assert set(LEAN_JVM_OPTIONS) <= set(command) and f"-XX:SharedArchiveFile={archive}" in command, command
    submit_options = os.environ["SPARK_SUBMIT_OPTS"].split()
    assert set(LEAN_JVM_OPTIONS) <= set(submit_options)
    if os.environ.get("KWIRE_EXPECT_WHEEL") != "1":  # the checkout's .venv, whose PySpark `make setup` archived
        assert f"-XX:SharedArchiveFile={spark_class_archive()}" in submit_options, submit_options
    strict = [part for part in java_command("kafka.tools.StorageTool", "random-uuid")
              if not part.startswith("-Xlog:cds")]
    out = subprocess.run([strict[0], "-Xshare:on", *strict[1:]], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and len(out.stdout.strip().splitlines()[0]) == 22, out.stdout + out.stderr


def test_kdc_moves_to_another_port_when_its_free_port_is_taken_before_it_binds():
    """Parallel test runs pick free ports at the same time: a KDC whose port another process took between the
    choice and krb5kdc's bind must start on another port, not fail (the 4.0.5 run beside the newest did once)."""
    from harness.kerberos import KerberosRealm

    realm = KerberosRealm()
    taken = realm.port
    with socket.socket() as squatter:
        squatter.bind(("0.0.0.0", taken))
        squatter.listen()
        try:
            realm.start()
            assert realm.port != taken
            assert realm.process.poll() is None
            assert f"127.0.0.1:{realm.port}" in realm.krb5_conf.read_text()
        finally:
            realm.stop()
