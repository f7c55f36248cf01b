"""Delegation tokens as Spark uses them: the driver logs in with Kerberos and obtains a token, tasks read and write
with it through SCRAM, executors need no Kerberos at all.

A Spark standalone cluster whose executors run with ``KRB5_CONFIG`` pointing at a file that does not exist (no
realm, no KDC: any Kerberos login there fails, which the driver checks first with a read that has no
``delegationToken``), and a driver (tests/spark/token_job.py, a subprocess with the realm's krb5.conf and a keytab)
that writes and reads a batch, then runs a stream for longer than a token can live: the brokers give tokens 30 s
(``delegation.token.expiry.time.ms``), at most 55 s (``.max.lifetime.ms``), drop expired ones every second, and
make every connection re-authenticate every 10 s, so a token that is not renewed, or not replaced at its maximum
lifetime, fails the stream's tasks (checked: with renewal turned off the stream fails). The HMACs of the tokens the brokers list during the run appear in
none of the driver's output, plans, or executor logs; in what Spark pickles for a task they are masked.
"""

from __future__ import annotations

import base64
import json
import os
import pickle
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from harness import REPO_ROOT, SparkStandaloneCluster
from harness.kerberos import GSSAPI_LISTENER
from spark_kwire.client import Admin, KafkaClient, fetch_range
from spark_kwire.client.admin.delegation_tokens import describe_delegation_tokens
from spark_kwire.client.consumer.offsets import list_offsets
from tests.client.auth.kerberos_fixtures import (_fresh_logins, gssapi_options, kerberos, keytab_jaas,  # noqa: F401
                                                 start_cluster)

TOKEN_EXPIRY_MS = 30_000
TOKEN_MAX_LIFETIME_MS = 55_000
REAUTH_MS = 10_000
DRIVER = "spark-driver"


@pytest.fixture(scope="module")
def token_kafka(kerberos):
    cluster = start_cluster(kerberos, delegation_tokens=True, reauth_ms=REAUTH_MS, extra_properties={
        "delegation.token.expiry.time.ms": str(TOKEN_EXPIRY_MS),
        "delegation.token.max.lifetime.ms": str(TOKEN_MAX_LIFETIME_MS),
        "delegation.token.expiry.check.interval.ms": "1000"})
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def kerberos_less_executors(tmp_path_factory):
    """Two workers (one core each) whose executors find no krb5 config, ticket cache or default keytab."""
    nowhere = tmp_path_factory.mktemp("no-kerberos")
    env = {"KRB5_CONFIG": str(nowhere / "krb5.conf"), "KRB5CCNAME": f"FILE:{nowhere / 'krb5cc'}",
           "KRB5_CLIENT_KTNAME": str(nowhere / "client.keytab")}
    with SparkStandaloneCluster(workers=2, cores=1, memory="1g", env=env) as cluster:
        yield cluster


def _driver_client(kerberos, cluster) -> KafkaClient:
    return KafkaClient(gssapi_options(cluster, keytab_jaas(kerberos.user(DRIVER), kerberos.principal(DRIVER))))


class TokenWatch(threading.Thread):
    """Lists the driver principal's tokens every second while the job runs: (seen at, id, expiry, HMAC)."""

    def __init__(self, client: KafkaClient) -> None:
        super().__init__(daemon=True)
        self.client, self.seen, self.stopping = client, [], threading.Event()

    def run(self) -> None:
        while not self.stopping.wait(1.0):
            try:
                for token in describe_delegation_tokens(self.client, owners=[f"User:{DRIVER}"]):
                    self.seen.append((time.time(), token.token_id, token.expiry_ms, token.hmac.reveal()))
            except Exception as exc:  # noqa: BLE001 - a failed listing is retried next second
                self.seen.append((time.time(), None, None, repr(exc)))

    def renewed(self) -> set[str]:
        """Tokens whose expiry moved later while they were watched."""
        first: dict[str, int] = {}
        moved = set()
        for _, token_id, expiry, _ in self.seen:
            if token_id is None:
                continue
            if expiry > first.setdefault(token_id, expiry):
                moved.add(token_id)
        return moved

    def hmacs(self) -> set[str]:
        return {hmac for _, token_id, _, hmac in self.seen if token_id is not None}


def _all_values(client: KafkaClient, topic: str) -> list[str]:
    partitions = client.partitions_for(topic)
    ends = list_offsets(client, [(topic, p) for p in partitions], -1)
    return sorted(v.decode() for p in partitions for b in fetch_range(client, topic, p, 0, ends[(topic, p)][0])
                  for v in b.value.to_pylist())


def _logs(folder: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file() and
                     (p.name in ("stdout", "stderr") or p.suffix == ".log"))


@pytest.mark.timeout(900)
def test_tasks_use_the_token_and_executors_need_no_kerberos(kerberos, token_kafka, kerberos_less_executors, tmp_path):
    rows, stream_rows, seconds = 3000, 3000, 62
    topic, out_topic = f"token-in-{uuid.uuid4().hex[:8]}", f"token-out-{uuid.uuid4().hex[:8]}"
    with _driver_client(kerberos, token_kafka) as client:
        Admin(client).create_topics([(topic, 3, 1), (out_topic, 2, 1)])
        watch = TokenWatch(client)
        watch.start()
        env = {**os.environ, "KRB5_CONFIG": str(kerberos.realm.krb5_conf), "KRB5CCNAME": f"FILE:{tmp_path / 'none'}",
               "PYSPARK_PYTHON": sys.executable, "PYTHONPATH": str(REPO_ROOT)}
        started = time.time()
        try:
            out = subprocess.run(
                [sys.executable, str(Path(__file__).with_name("token_job.py")), "--master",
                 kerberos_less_executors.master_url, "--bootstrap", token_kafka.bootstrap(GSSAPI_LISTENER),
                 "--keytab", str(kerberos.user(DRIVER)), "--principal", kerberos.principal(DRIVER), "--topic", topic,
                 "--out-topic", out_topic, "--checkpoint", str(tmp_path / "checkpoint"), "--rows", str(rows),
                 "--stream-rows", str(stream_rows), "--seconds", str(seconds)],
                capture_output=True, text=True, env=env, timeout=780, cwd=tmp_path)
        finally:
            watch.stopping.set()
            watch.join()
        elapsed = time.time() - started
        lines = [line for line in out.stdout.splitlines() if line.startswith("RESULT ")]
        assert out.returncode == 0 and lines, f"driver failed:\n{out.stdout[-3000:]}\n{out.stderr[-6000:]}"
        result = json.loads(lines[-1][len("RESULT "):])
        written = _all_values(client, topic)
        copied = _all_values(client, out_topic)
        executor_logs = _logs(kerberos_less_executors.workdir / "work")

    # the control: without a token, tasks must log in with Kerberos, and the executors cannot
    control = result["control_error"]
    assert control is not None, "a Kerberos read succeeded on executors that have no krb5 config"
    assert "Kerberos" in control and "krb5 config" in control, control[-2000:]
    # batch: every row written through the token is read back through it
    assert result["batch_values"] == sorted(f"v{i}" for i in range(rows))
    # stream: every micro-batch succeeded, across renewals, and copied exactly what was written
    assert result["stream_exception"] is None and result["stream_active"], result
    # longer than a token's maximum lifetime: the stream's planner had to renew its token and then replace it
    assert result["stream_seconds"] > TOKEN_MAX_LIFETIME_MS / 1000 + 5, result["stream_seconds"]
    assert written == sorted(f"v{i}" for i in range(rows + stream_rows))
    assert copied == written, f"{len(copied)} records copied of {len(written)}"
    assert watch.renewed(), f"no token was renewed while the stream ran {elapsed:.0f} s: {watch.seen[-5:]}"
    # the HMACs show nowhere: driver output and logs, plans, progress, executor logs
    hmacs = watch.hmacs()
    assert hmacs
    texts = {"driver stdout": out.stdout, "driver stderr": out.stderr, "batch plan": result["batch_plan"],
             "stream plan": result["stream_plan"], "control error": control, "executor logs": executor_logs}
    for hmac in hmacs:
        raw_hex = base64.b64decode(hmac).hex()
        for where, text in texts.items():
            assert hmac not in text and raw_hex not in text, f"a token HMAC shows in the {where}"


def test_what_tasks_receive_holds_the_token_masked_and_nothing_of_kerberos(kerberos, token_kafka):
    from spark_kwire.client.admin.token_keeper import held_delegation_token
    from spark_kwire.client.settings.logins import DelegationTokenLogin, GssapiLogin
    from spark_kwire.spark.delegation import TokenAuthenticated, partitions_for_tasks, write_options_for_tasks
    from spark_kwire.spark.options.parsing import ReadOptions, WriteOptions
    from spark_kwire.spark.reading.planner import OffsetRange
    from spark_kwire.spark.shared_client import shared_client

    keytab = kerberos.user(DRIVER)
    options = {f"kafka.{k}": v for k, v in
               gssapi_options(token_kafka, keytab_jaas(keytab, kerberos.principal(DRIVER))).items()}
    read = ReadOptions.parse({**options, "subscribe": "t", "delegationToken": "true"})
    planned = partitions_for_tasks([OffsetRange("t", 0, 0, 10)], read)
    write = write_options_for_tasks(WriteOptions.parse({**options, "topic": "t", "delegationToken": "true",
                                                        "delegationToken.mechanism": "SCRAM-SHA-256"}))
    token = held_delegation_token(shared_client(read.kafka))
    assert isinstance(planned[0], TokenAuthenticated) and planned[0].partition == OffsetRange("t", 0, 0, 10)
    for task_kafka, mechanism in ((planned[0].kafka, "SCRAM-SHA-512"), (write.kafka, "SCRAM-SHA-256")):
        assert task_kafka.sasl_mechanism == mechanism
        assert not isinstance(task_kafka.sasl, GssapiLogin)  # nothing of the driver's Kerberos login
        login = task_kafka.sasl  # SCRAM as the token: its id, its HMAC, tokenauth=true
        assert isinstance(login, DelegationTokenLogin) and login.username == token.token_id
        assert login.password == token.hmac and str(keytab) not in repr(task_kafka)
    for shipped in (planned, write):
        data = pickle.dumps(shipped)
        assert token.hmac.reveal().encode() not in data and token.hmac_bytes not in data
        assert token.hmac.reveal() not in repr(shipped) and token.hmac.reveal() not in str(shipped)
        assert str(keytab).encode() not in data
    restored = pickle.loads(pickle.dumps(planned))[0]
    # the options a task gets authenticate as the token, on their own
    with KafkaClient(restored.kafka) as task_client:
        task_client.list_topics()
        assert task_client.any_connection().sasl_session.principal == token.token_id
