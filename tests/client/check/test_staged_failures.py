"""kwire check against real brokers with failures staged (tests/client/check/staging.py): each names the failing
step, its outcome and a fix that names the remedy; an independent client (librdkafka, Python's own ssl, Kafka's
tools, confluent-kafka's registry client) confirms that the failure is real. A healthy cluster gives only ok rows,
and skipped ones only where the options configure nothing to check."""

from __future__ import annotations

import json
import socket
import ssl
import time

import pytest

from spark_kwire.client.check import FAIL, OK, SKIPPED, STEPS, WARN, check_connection
from tests.client.check.staging import (ACL_TOPIC, ALICE, BOB, BOB_PASSWORD, CLIENT_ID, CLIENT_SECRET, PASSWORD,
                                        REGISTRY_PASSWORD, TOPIC)

WRONG_PASSWORD = "chk-Wr0ng-pa55word"
WRONG_SECRET = "chk-Wr0ng-s3cret"
REPORTS = []  # every report of this module, for the secrets test at the end


def check(options: dict):
    report = check_connection(options, host="test-host", executor="test")
    REPORTS.append(report)
    return report


def only(report, step: str, outcome: str, target: str | None = None):
    """The one row of ``step`` with ``outcome`` (whose target starts with ``target``)."""
    rows = report.where(step=step, outcome=outcome, target=target)
    assert len(rows) == 1, f"expected one {outcome} row of {step}, got {len(rows)}:\n{report.text()}"
    return rows[0]


def failures(report) -> list[tuple[str, str]]:
    return [(r.step, r.target) for r in report.rows if r.outcome == FAIL]


def assert_healthy(report, allowed_skips: dict[str, str]) -> None:
    """Every row ok, except skipped rows of the steps named, each saying why (and none blocked by a failure)."""
    assert report.worst == OK, report.text()
    for row in report.rows:
        assert row.host == "test-host" and row.executor == "test" and row.time_ms >= 0
        assert row.step in STEPS, row
        if row.outcome == SKIPPED:
            assert row.step in allowed_skips, f"unexpected skipped row: {row}"
            assert allowed_skips[row.step] in row.detail and not row.detail.startswith("not run"), row
        else:
            assert row.outcome == OK and row.fix is None, row


# -- healthy ------------------------------------------------------------------------------------------------------

def test_a_healthy_cluster_gives_only_ok_rows(staged):
    options = staged.options("SASL_SSL", subscribe=TOPIC, checkThroughput="true", **staged.registry_options())
    report = check(options)
    assert_healthy(report, {"tls_client_certificate": "none configured"})
    seen = {r.step for r in report.rows}
    assert seen == set(STEPS), seen ^ set(STEPS)
    for role in ("bootstrap", "broker 1"):
        for step in ("resolve", "connect", "tls_handshake", "tls_certificate", "tls_hostname", "sasl_mechanisms",
                     "sasl_authenticate", "api_versions"):
            assert report.where(step=step, target=role), f"no {step} row for {role}"
    authenticated = only(report, "sasl_authenticate", OK, "bootstrap")
    assert f"authenticated as '{ALICE}' with SCRAM-SHA-512" in authenticated.detail
    assert "SCRAM-SHA-512, PLAIN" in only(report, "sasl_mechanisms", OK, "bootstrap").detail
    assert "365 days left" in only(report, "tls_certificate", OK, "bootstrap").detail
    assert "READ" in only(report, "topic_access", OK).detail
    assert "3 partition(s)" in only(report, "topic", OK).detail
    assert "MB/s" in only(report, "throughput", OK).detail
    assert "version 1, schema id" in only(report, "registry_subject", OK, f"subject {TOPIC}-value").detail


def test_plaintext_and_mutual_tls_are_healthy_too(staged):
    plain = check(staged.options("PLAINTEXT", subscribe=TOPIC))
    assert_healthy(plain, {"tls_handshake": "no TLS", "sasl_authenticate": "no SASL", "throughput": "not set",
                           "registry": "no schema.registry.url"})
    mtls = check(staged.options("MTLS", subscribe=TOPIC))
    assert_healthy(mtls, {"sasl_authenticate": "no SASL", "throughput": "not set",
                          "registry": "no schema.registry.url"})
    sent = only(mtls, "tls_client_certificate", OK, "bootstrap").detail
    assert "CN=kwire-client" in sent and "requires one and accepted it" in sent


def test_oauthbearer_reports_the_token_endpoint_and_expiry(staged):
    report = check(staged.options("OAUTH", subscribe=TOPIC))
    assert_healthy(report, {"tls_handshake": "no TLS", "throughput": "not set", "registry": "no schema.registry.url"})
    login = only(report, "sasl_login", OK).detail
    assert staged.idp.token_endpoint in login and repr(CLIENT_ID) in login and "valid for" in login
    refused = check(staged.options("OAUTH", **{"kafka.sasl.jaas.config":
        "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
        f'clientId="{CLIENT_ID}" clientSecret="{WRONG_SECRET}";'}))
    row = only(refused, "sasl_login", FAIL)
    assert "HTTP 401" in row.detail and "clientSecret" in row.fix
    # the mechanisms need no login: still reported; authentication is blocked by the login
    assert only(refused, "sasl_mechanisms", OK, "bootstrap")
    assert "sasl_login failed" in only(refused, "sasl_authenticate", SKIPPED, "bootstrap").detail


# -- the staged failures -------------------------------------------------------------------------------------------

def test_brokers_advertising_an_address_nobody_listens_on(staged):
    from confluent_kafka.admin import AdminClient

    report = check(staged.options("BADADV", subscribe=TOPIC))
    assert only(report, "connect", OK, "bootstrap")
    row = only(report, "connect", FAIL, "broker 1")
    assert f"127.0.0.1:{staged.dead_port}" in row.target and "advertised.listeners" in row.fix
    assert failures(report) == [("connect", row.target)]
    assert only(report, "topic", WARN).fix.startswith("Fix the failed connection steps of the leaders")
    # librdkafka reads the same metadata, and nothing answers at the address it names
    brokers = AdminClient({"bootstrap.servers": staged.bootstrap("BADADV")}).list_topics(timeout=30).brokers
    assert [(b.host, b.port) for b in brokers.values()] == [("127.0.0.1", staged.dead_port)]
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", staged.dead_port), timeout=5)


def _openssl_verdict(staged, listener: str) -> int:
    """The verify code Python's own ssl module (OpenSSL) gives the listener's certificate, for 127.0.0.1."""
    host, port = staged.bootstrap(listener).split(":")
    context = ssl.create_default_context(cafile=str(staged.certs.ca_cert))
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        with pytest.raises(ssl.SSLCertVerificationError) as raised:
            context.wrap_socket(sock, server_hostname=host)
    return raised.value.verify_code


def test_a_certificate_for_another_host_name(staged):
    report = check(staged.options("WRONGHOST"))
    row = only(report, "tls_hostname", FAIL, "bootstrap")
    assert "wrong-host.invalid" in row.detail and "'127.0.0.1'" in row.detail and "subjectAltName" in row.fix
    assert only(report, "tls_certificate", OK, "bootstrap")  # the chain itself is trusted and valid
    assert failures(report) == [("tls_hostname", row.target)]
    assert _openssl_verdict(staged, "WRONGHOST") == 64  # IP address mismatch


def test_an_expired_certificate(staged):
    report = check(staged.options("EXPIRED"))
    row = only(report, "tls_certificate", FAIL, "bootstrap")
    assert "expired 1.0 days ago" in row.detail and row.fix.startswith("Renew the broker's certificate")
    assert only(report, "tls_hostname", OK, "bootstrap")
    assert _openssl_verdict(staged, "EXPIRED") == 10  # X509_V_ERR_CERT_HAS_EXPIRED


def test_mutual_tls_without_a_client_certificate(staged):
    report = check(staged.options("MTLS", **{"kafka.ssl.keystore.location": None}))
    row = only(report, "tls_client_certificate", FAIL, "bootstrap")
    assert "requires a client certificate" in row.detail and "kafka.ssl.keystore.location" in row.fix
    assert "tls_client_certificate failed" in only(report, "api_versions", SKIPPED, "bootstrap").detail


def test_a_wrong_sasl_password(staged):
    from confluent_kafka import KafkaError, KafkaException, Producer

    jaas = ("org.apache.kafka.common.security.scram.ScramLoginModule required "
            f'username="{ALICE}" password="{WRONG_PASSWORD}";')
    report = check(staged.options("SASL_SSL", subscribe=TOPIC, **{"kafka.sasl.jaas.config": jaas}))
    row = only(report, "sasl_authenticate", FAIL, "bootstrap")
    assert "SASL_AUTHENTICATION_FAILED" in row.detail and "kafka.sasl.jaas.config" in row.fix
    assert only(report, "api_versions", OK, "bootstrap")  # learnt before authenticating
    assert "sasl_authenticate failed" in only(report, "topic", SKIPPED, f"topic {TOPIC}").detail
    errors = []  # librdkafka is refused too
    producer = Producer({"bootstrap.servers": staged.bootstrap("SASL_SSL"), "security.protocol": "SASL_SSL",
                         "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": ALICE, "sasl.password": WRONG_PASSWORD,
                         "ssl.ca.location": str(staged.certs.ca_cert), "error_cb": errors.append, "log_level": 0})
    with pytest.raises(KafkaException):
        producer.list_topics(timeout=10)
    producer.poll(1)
    assert any(e.code() == KafkaError._AUTHENTICATION for e in errors), errors
    del producer


def test_a_mechanism_the_listener_does_not_offer(staged):
    jaas = ("org.apache.kafka.common.security.scram.ScramLoginModule required "
            f'username="{ALICE}" password="{PASSWORD}";')
    report = check(staged.options("SASLPLAIN", **{"kafka.sasl.mechanism": "SCRAM-SHA-512",
                                                  "kafka.sasl.jaas.config": jaas}))
    row = only(report, "sasl_mechanisms", FAIL, "bootstrap")
    assert "offers PLAIN;" in row.detail and "kafka.sasl.mechanism" in row.fix
    assert "sasl_mechanisms failed" in only(report, "sasl_authenticate", SKIPPED, "bootstrap").detail


def test_a_principal_that_may_describe_but_not_read(staged):
    from confluent_kafka import Consumer, TopicPartition

    jaas = (f'org.apache.kafka.common.security.scram.ScramLoginModule required username="{BOB}" '
            f'password="{BOB_PASSWORD}";')
    report = check(staged.options("SASL_SSL", subscribe=f"{ACL_TOPIC},{TOPIC}", **{"kafka.sasl.jaas.config": jaas}))
    row = only(report, "topic_access", FAIL, f"topic {ACL_TOPIC}")
    assert f"principal '{BOB}' may DESCRIBE; not READ" in row.detail and "--operation Read" in row.fix
    assert only(report, "topic", OK, f"topic {ACL_TOPIC}")
    assert "may not describe" in only(report, "topic", FAIL, f"topic {TOPIC}").detail
    # librdkafka as bob: the topic is there, and reading it is refused
    consumer = Consumer({"bootstrap.servers": staged.bootstrap("SASL_SSL"), "security.protocol": "SASL_SSL",
                         "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": BOB, "sasl.password": BOB_PASSWORD,
                         "ssl.ca.location": str(staged.certs.ca_cert), "group.id": "chk", "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(ACL_TOPIC, 0, 0)])
        # bob may not use the group either: librdkafka may report that first (its coordinator lookup), then the fetch
        errors, deadline = [], time.monotonic() + 30
        while time.monotonic() < deadline and not any("TOPIC_AUTHORIZATION_FAILED" in e for e in errors):
            message = consumer.poll(2)
            assert message is None or message.error() is not None, "bob read a record he may not read"
            if message is not None:
                errors.append(str(message.error()))
        assert any("TOPIC_AUTHORIZATION_FAILED" in e for e in errors), errors
    finally:
        consumer.close()
    # alice (a super user) may read it
    allowed = check(staged.options("SASL_SSL", subscribe=ACL_TOPIC))
    assert "READ" in only(allowed, "topic_access", OK).detail


def test_a_schema_registry_that_refuses_the_credentials(staged):
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.error import SchemaRegistryError

    options = staged.options("PLAINTEXT", subscribe=TOPIC, **staged.registry_options(password=WRONG_PASSWORD))
    report = check(options)
    assert only(report, "registry", OK)
    row = only(report, "registry_auth", FAIL)
    assert "401" in row.detail and "user 'reader'" in row.detail and "basic.auth.user.info" in row.fix
    assert "registry_auth failed" in only(report, "registry_subject", SKIPPED).detail
    assert failures(report) == [("registry_auth", "schema registry")]  # the brokers' steps all passed
    with pytest.raises(SchemaRegistryError) as refused:
        SchemaRegistryClient({"url": staged.registry.url, "basic.auth.user.info": f"reader:{WRONG_PASSWORD}"}) \
            .get_subjects()
    assert refused.value.http_status_code == 401


# -- listeners of another kind than configured ------------------------------------------------------------------------

@pytest.mark.parametrize("listener, protocol, step, kind_text", [
    ("SSL", "PLAINTEXT", "tls_handshake", "kafka.security.protocol to SSL"),
    ("PLAINTEXT", "SSL", "tls_handshake", "TLS listener"),
    ("SASLPLAIN", "PLAINTEXT", "sasl_mechanisms", "kafka.security.protocol to SASL_PLAINTEXT"),
    ("PLAINTEXT", "SASL_PLAINTEXT", "sasl_mechanisms", "SASL listener"),
])
def test_a_listener_of_another_kind(staged, listener, protocol, step, kind_text):
    options = staged.options("SASLPLAIN" if protocol.startswith("SASL") else "SSL" if protocol == "SSL"
                             else "PLAINTEXT", **{"kafka.bootstrap.servers": staged.bootstrap(listener)})
    report = check(options)
    row = only(report, step, FAIL, "bootstrap")
    assert kind_text in row.fix, row


def test_a_truststore_missing_on_this_host_blocks_tls_and_not_the_registry(staged, tmp_path):
    missing = tmp_path / "gone" / "ca.pem"
    options = staged.options("SASL_SSL", subscribe=TOPIC, **{"kafka.ssl.truststore.location": str(missing)},
                             **staged.registry_options())
    report = check(options)
    row = only(report, "tls_files", FAIL)
    assert row.target == "this host" and str(missing) in row.detail and "every executor" in row.fix
    assert "tls_files failed on this host" in only(report, "tls_handshake", SKIPPED, "bootstrap").detail
    assert only(report, "registry_auth", OK) and only(report, "registry_subject", OK, f"subject {TOPIC}-value")


def test_topics_partitions_and_patterns(staged):
    report = check(staged.options("PLAINTEXT", assign=json.dumps({TOPIC: [0, 7]}), subscribePattern="nomatch.*",
                                  topic="not-there-yet"))
    assert "partition(s) 7" in only(report, "topic", FAIL, f"topic {TOPIC}").detail
    assert only(report, "topic", WARN, "subscribePattern").fix.startswith("Correct subscribePattern")
    created = only(report, "topic", WARN, "topic not-there-yet")
    assert "auto.create.topics.enable" in created.detail


def test_no_secret_appears_in_any_row(staged):
    """Every report of this module (wrong and right passwords, client secrets, registry credentials) and one more
    with every secret option set: none of their texts appears in a row or the report's JSON."""
    report = check(staged.options("SASL_SSL", subscribe=TOPIC, **{"kafka.ssl.key.password": "chk-Key-pa55",
                                                                    **staged.registry_options()}))
    assert report.ok
    secrets = [PASSWORD, BOB_PASSWORD, CLIENT_SECRET, REGISTRY_PASSWORD, WRONG_PASSWORD, WRONG_SECRET, "chk-Key-pa55"]
    assert len(REPORTS) >= 12
    for one in REPORTS:
        text = one.to_json() + one.text()
        for secret in secrets:
            assert secret not in text, f"a secret shows in a report:\n{one.text()}"
