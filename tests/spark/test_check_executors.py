"""The check table on a Spark standalone cluster of two executors (harness.SparkStandaloneCluster) whose workers
cannot see the folder of the brokers' CA certificate (a tmpfs over it in the workers' mount namespace: a truststore
copied to the driver's host and to no executor's). One driver process (check_job.py) reads the table twice:

* over PLAINTEXT, a healthy cluster: only ok (and skipped) rows, from the driver and from both executors, and the
  ``executors`` row counting 2 reached of 2;
* over SSL with ``kafka.ssl.truststore.location`` in that folder: the driver passes every TLS step, each executor
  fails ``tls_files`` with its fix, and the connection steps behind it are skipped, not hidden.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness import KafkaCluster, Listener, SparkStandaloneCluster, generate_test_certificates
from spark_kwire.client.check.fixes import FIXES
from spark_kwire.spark.metadata.check_table import EXECUTORS_STEP

EXECUTORS = 2
TOPIC = "checked"


@pytest.fixture(scope="module")
def secrets_folder(tmp_path_factory):
    return generate_test_certificates(tmp_path_factory.mktemp("driver-only-certs"), days=365)


@pytest.fixture(scope="module")
def tls_kafka(secrets_folder):
    props = {"listener.name.ssl.ssl.keystore.type": "PEM",
             "listener.name.ssl.ssl.keystore.location": str(secrets_folder.broker_keystore)}
    with KafkaCluster(1, listeners=[Listener("SSL", "SSL")], extra_properties=props) as cluster:
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": cluster.bootstrap("PLAINTEXT")})
        admin.create_topics([NewTopic(TOPIC, 2, 1)])[TOPIC].result(60)
        yield cluster


@pytest.fixture(scope="module")
def results(tls_kafka, secrets_folder, tmp_path_factory):
    """[plaintext rows, ssl rows] as the driver collected them."""
    folder = Path(secrets_folder.ca_cert).parent
    env = {"PYSPARK_PYTHON": sys.executable}
    with SparkStandaloneCluster(workers=EXECUTORS, cores=1, memory="1g", env=env, hidden=[str(folder)]) as cluster:
        plaintext = {"kafka.bootstrap.servers": tls_kafka.bootstrap("PLAINTEXT"), "subscribe": TOPIC}
        tls = {"kafka.bootstrap.servers": tls_kafka.bootstrap("SSL"), "kafka.security.protocol": "SSL",
               "kafka.ssl.truststore.location": str(secrets_folder.ca_cert), "subscribe": TOPIC}
        out = subprocess.run(
            [sys.executable, str(Path(__file__).with_name("check_job.py")), "--master", cluster.master_url,
             "--executors", str(EXECUTORS), json.dumps(plaintext), json.dumps(tls)],
            capture_output=True, text=True, timeout=600, cwd=tmp_path_factory.mktemp("check-driver"),
            env={**os.environ, "PYSPARK_PYTHON": sys.executable})
        lines = [line for line in out.stdout.splitlines() if line.startswith("RESULT ")]
        assert out.returncode == 0 and lines, (f"driver failed:\n{out.stdout[-3000:]}\n{out.stderr[-6000:]}\n"
                                               f"{cluster.log_tail()}")
        yield json.loads(lines[-1][len("RESULT "):])


def _by_executor(rows) -> dict[str, list[dict]]:
    grouped: dict[str, list[dict]] = {}
    for row in rows:
        grouped.setdefault(row["executor"], []).append(row)
    return grouped


def test_a_healthy_cluster_gives_ok_rows_from_the_driver_and_every_executor(results):
    rows = results[0]
    bad = [r for r in rows if r["outcome"] not in ("ok", "skipped")]
    assert not bad, "\n".join(f"{r['executor']} {r['step']} {r['outcome']}: {r['detail']}" for r in bad)
    grouped = _by_executor(rows)
    executors = sorted(set(grouped) - {"driver"})
    assert len(executors) == EXECUTORS and not any(e.startswith("unknown") for e in executors), sorted(grouped)
    for name in executors:  # each executor ran every step the driver ran, once
        driver_steps = [(r["step"], r["target"]) for r in grouped["driver"] if r["step"] != EXECUTORS_STEP]
        assert [(r["step"], r["target"]) for r in grouped[name]] == driver_steps
    (summary,) = [r for r in rows if r["step"] == EXECUTORS_STEP]
    assert summary["outcome"] == "ok" and f"{EXECUTORS} of the {EXECUTORS} executors" in summary["detail"], \
        f"{summary['outcome']}: {summary['detail']}"


def test_a_truststore_missing_on_the_executors_fails_there_with_the_fix_and_passes_on_the_driver(results):
    grouped = _by_executor(results[1])
    driver = grouped.pop("driver")
    bad = [r for r in driver if r["outcome"] not in ("ok", "skipped")]
    assert not bad, "\n".join(f"{r['step']} {r['outcome']}: {r['detail']}" for r in bad)
    passed = {r["step"] for r in driver if r["outcome"] == "ok"}
    assert {"tls_files", "tls_handshake", "tls_certificate", "tls_hostname", "metadata", "topic"} <= passed
    assert len(grouped) == EXECUTORS, sorted(grouped)
    for name, rows in grouped.items():
        failed = [r for r in rows if r["outcome"] == "fail"]
        assert [r["step"] for r in failed] == ["tls_files"], (name, failed)
        assert failed[0]["fix"] == FIXES["tls_files"].sentence and "truststore" in failed[0]["detail"]
        assert {r["outcome"] for r in rows if r["step"] in ("tls_handshake", "metadata", "topic")} <= {"skipped"}
    (summary,) = [r for r in results[1] if r["step"] == EXECUTORS_STEP]
    assert summary["outcome"] == "ok", f"{summary['detail']}"  # reached: their rows say what failed there
