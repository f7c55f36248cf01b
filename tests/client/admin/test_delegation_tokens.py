"""Kafka delegation tokens against a real broker (KRaft) with GSSAPI and SCRAM-SHA-512 on its SASL listener and a
``delegation.token.secret.key``: a token created over Kerberos lets a process with no Kerberos at all (a
subprocess with no krb5 config, given the options pickled, as Spark ships them to tasks) produce and fetch, and
Kafka's Java console consumer, authenticating with the same token, reads what it wrote; renew, describe and expire
behave as the broker says; requests the broker refuses say why; the HMAC never shows.
"""

from __future__ import annotations

import base64
import dataclasses
import logging
import pickle
import subprocess
import sys
import time

import pytest

from harness import REPO_ROOT, run_java_tool
from harness.kerberos import GSSAPI_LISTENER
from spark_kwire.client import KafkaClient
from spark_kwire.client.admin.delegation_tokens import (DelegationTokenError, create_delegation_token,
                                                  describe_delegation_tokens, expire_delegation_token,
                                                  renew_delegation_token)
from spark_kwire.client.auth.sasl import AuthenticationError
from tests.client.auth.kerberos_fixtures import (_fresh_logins, gssapi_options, kerberos, keytab_jaas,  # noqa: F401
                                            start_cluster)


@pytest.fixture(scope="module")
def token_kafka(kerberos):
    cluster = start_cluster(kerberos, delegation_tokens=True)
    yield cluster
    cluster.stop()


def _kerberos_client(kerberos, cluster, name: str) -> KafkaClient:
    return KafkaClient(gssapi_options(cluster, keytab_jaas(kerberos.user(name), kerberos.principal(name))))


def _token_options(cluster, token) -> dict:
    return {"bootstrap.servers": cluster.bootstrap(GSSAPI_LISTENER), "security.protocol": "SASL_PLAINTEXT",
            **token.client_options()}


_TASK = """
import pickle, sys
import pyarrow as pa
from spark_kwire.client import KafkaClient, Producer
from spark_kwire.client.admin.admin import Admin
from spark_kwire.client.consumer.fetcher import fetch_range
opts, topic = pickle.loads(sys.stdin.buffer.read())
with KafkaClient(opts) as client:
    Admin(client).create_topics([(topic, 1, 1)])
    values = pa.array([f"token-{i}".encode() for i in range(30)], pa.binary())
    with Producer(client) as producer:
        producer.send_batch(topic, 0, values)
        assert producer.flush()[(topic, 0)].records == 30
    got = [v for b in fetch_range(client, topic, 0, 0, 30) for v in b.value.to_pylist()]
    assert got == values.to_pylist(), got[:3]
    session = client.any_connection().sasl_session
    print("SESSION", session.mechanism, session.principal)
"""


def test_token_from_kerberos_authenticates_a_process_without_kerberos(kerberos, token_kafka, tmp_path):
    with _kerberos_client(kerberos, token_kafka, "alice") as client:
        token = create_delegation_token(client)
    assert token.owner == "User:alice" and token.requester == "User:alice"
    topic = f"token-{token.token_id[:8].lower()}"
    # a task-like process: the options arrive pickled, and no Kerberos configuration, cache or keytab exists there
    env = {"PATH": "/usr/bin:/bin", "KRB5_CONFIG": str(tmp_path / "no-krb5.conf"),
           "KRB5CCNAME": f"FILE:{tmp_path / 'no-cache'}", "PYTHONPATH": str(REPO_ROOT)}
    out = subprocess.run([sys.executable, "-c", _TASK], input=pickle.dumps((_token_options(token_kafka, token), topic)),
                         capture_output=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr.decode()[-3000:]
    assert f"SESSION SCRAM-SHA-512 {token.token_id}" in out.stdout.decode()
    # an independent client authenticating with the same token reads what the task wrote
    config = tmp_path / "java-token.properties"
    config.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"
                      f"sasl.jaas.config={token.client_options()['sasl.jaas.config'].reveal()}\n")
    java = run_java_tool(
        "org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", token_kafka.bootstrap(GSSAPI_LISTENER),
        "--topic", topic, "--from-beginning", "--max-messages", "30", "--timeout-ms", "30000",
        "--consumer.config", str(config), timeout=120, check=False)
    assert [line for line in java.stdout.splitlines() if line] == [f"token-{i}" for i in range(30)], java.stderr[-2000:]


def test_renew_describe_and_expire(kerberos, token_kafka):
    with _kerberos_client(kerberos, token_kafka, "alice") as alice, \
            _kerberos_client(kerberos, token_kafka, "bob") as bob, \
            _kerberos_client(kerberos, token_kafka, "carol") as carol:
        token = create_delegation_token(alice, renewers=["User:bob"], max_lifetime_ms=600_000)
        assert token.max_timestamp_ms - token.issued_ms == 600_000
        described = [t for t in describe_delegation_tokens(alice, owners=["User:alice"]) if t.token_id == token.token_id]
        assert len(described) == 1
        assert (described[0].hmac, described[0].owner, described[0].renewers, described[0].expiry_ms) == \
            (token.hmac, "User:alice", ("User:bob",), token.expiry_ms)

        renewed = renew_delegation_token(bob, token, renew_period_ms=60_000)  # a renewer may
        assert abs(renewed - (time.time() * 1000 + 60_000)) < 5_000
        assert renew_delegation_token(alice, token, renew_period_ms=3_600_000) == token.max_timestamp_ms  # capped
        with pytest.raises(DelegationTokenError, match=r"DELEGATION_TOKEN_OWNER_MISMATCH.*neither the token's owner"):
            renew_delegation_token(carol, token)

        with KafkaClient(_token_options(token_kafka, token)) as holder:
            assert holder.list_topics() is not None
        assert expire_delegation_token(alice, token) <= time.time() * 1000 + 1_000
        # brokers learn of the expiry from the metadata log: a new connection is refused soon after
        deadline = time.monotonic() + 15
        while True:
            try:
                with KafkaClient(_token_options(token_kafka, token)) as holder:
                    holder.list_topics()
            except AuthenticationError as exc:
                assert f"SCRAM-SHA-512 authentication as delegation token '{token.token_id}'" in str(exc)
                break
            assert time.monotonic() < deadline, "the expired token still authenticates"
            time.sleep(0.2)
        with pytest.raises(DelegationTokenError, match=r"DELEGATION_TOKEN_(NOT_FOUND|EXPIRED)") as info:
            renew_delegation_token(alice, token)
        assert token.token_id in str(info.value)


def test_requests_refused_on_plaintext_and_token_channels(kerberos, token_kafka):
    with KafkaClient({"bootstrap.servers": token_kafka.bootstrap_servers}) as plaintext:
        with pytest.raises(DelegationTokenError, match=r"REQUEST_NOT_ALLOWED.*security.protocol=PLAINTEXT.*own "
                                                       r"credentials"):
            create_delegation_token(plaintext)
    with _kerberos_client(kerberos, token_kafka, "alice") as alice:
        token = create_delegation_token(alice)
    with KafkaClient(_token_options(token_kafka, token)) as holder:
        with pytest.raises(DelegationTokenError, match=r"REQUEST_NOT_ALLOWED.*sasl.mechanism=SCRAM-SHA-512.*"
                                                       r"delegation token authenticated") as info:
            create_delegation_token(holder)  # a token cannot beget tokens
    assert info.value.code == 64 and not info.value.retriable


def test_hmac_never_shows(kerberos, token_kafka, caplog):
    caplog.set_level(logging.DEBUG, logger="spark_kwire")
    with _kerberos_client(kerberos, token_kafka, "alice") as alice:
        token = create_delegation_token(alice)
        listed = describe_delegation_tokens(alice)
    secret_forms = [token.hmac.reveal(), token.hmac_bytes.hex(), base64.urlsafe_b64encode(token.hmac_bytes).decode()]
    options = _token_options(token_kafka, token)
    with KafkaClient(options) as holder:
        holder.list_topics()
        seen = [repr(token), str(token), repr(listed), repr(options), repr(holder.config), repr(holder.hooks),
                repr(holder.any_connection().sasl_session)]
    seen += [r.getMessage() for r in caplog.records]
    pickled = pickle.dumps(options) + pickle.dumps(token)
    for form in secret_forms:
        assert form.encode() not in pickled
        for text in seen:
            assert form not in text


def test_a_held_token_is_shared_renewed_then_replaced(kerberos, token_kafka):
    """held_delegation_token: one token per cluster and principal; at its refresh time it is renewed (same id and
    HMAC, later expiry); once its maximum lifetime ends within an expiry period, or renewal fails, a new token
    replaces it."""
    from spark_kwire.client.admin import token_keeper

    token_keeper.forget_delegation_tokens()
    with _kerberos_client(kerberos, token_kafka, "dana") as dana, \
            _kerberos_client(kerberos, token_kafka, "dana") as dana_again, \
            _kerberos_client(kerberos, token_kafka, "erin") as erin:
        first = token_keeper.held_delegation_token(dana)
        assert first.owner == "User:dana"
        assert token_keeper.held_delegation_token(dana_again) is first  # another client, same cluster and principal
        other = token_keeper.held_delegation_token(erin)
        assert other.owner == "User:erin" and other.token_id != first.token_id
        (key,) = [k for k, held in token_keeper._held.items() if held.token is first]
        lifetime_s = (first.expiry_ms - first.issued_ms) / 1000
        assert abs(token_keeper._held[key].refresh_at - (first.issued_ms / 1000 + 0.75 * lifetime_s)) < 5

        token_keeper._held[key].refresh_at = 0  # due now: renewed
        time.sleep(0.05)
        renewed = token_keeper.held_delegation_token(dana)
        assert (renewed.token_id, renewed.hmac) == (first.token_id, first.hmac) and renewed.expiry_ms > first.expiry_ms
        deadline = time.monotonic() + 10  # the brokers learn of the renewal from the metadata log
        while {t.token_id: t.expiry_ms for t in describe_delegation_tokens(dana, owners=["User:dana"])}.get(
                first.token_id) != renewed.expiry_ms:
            assert time.monotonic() < deadline, "the brokers never listed the renewed expiry"
            time.sleep(0.1)

        # its maximum lifetime ends within one expiry period: the cluster would still renew it (up to that end),
        # but the renewed token would leave tasks a shorter margin than a period's quarter, so a new one replaces it
        held = token_keeper._held[key]
        assert held.period_s == lifetime_s
        now_ms = time.time() * 1000
        held.token = dataclasses.replace(renewed, expiry_ms=int(now_ms + lifetime_s * 250),
                                         max_timestamp_ms=int(now_ms + lifetime_s * 500))
        held.refresh_at = 0
        replaced = token_keeper.held_delegation_token(dana)
        assert replaced.token_id != first.token_id and replaced.owner == "User:dana"
        assert replaced.expiry_ms - replaced.issued_ms == lifetime_s * 1000  # a whole period again

        expire_delegation_token(dana, replaced)  # renewal fails (the cluster dropped it): a new token again
        token_keeper._held[key].refresh_at = 0
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:  # wait until the brokers forget the expired token
            if replaced.token_id not in {t.token_id for t in describe_delegation_tokens(dana, owners=["User:dana"])}:
                break
            time.sleep(0.2)
        again = token_keeper.held_delegation_token(dana)
        assert again.token_id not in (first.token_id, replaced.token_id)
    token_keeper.forget_delegation_tokens()
