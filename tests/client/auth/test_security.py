"""TLS and SASL against a real broker: SASL_SSL / SASL_PLAINTEXT with PLAIN and SCRAM-SHA-256/512, mutual TLS,
clear non-retried failures (wrong password, untrusted certificate, host name mismatch), re-authentication, and
secrets that never show in logs, errors or reprs.

One broker for the module, with one listener per case (each listener's settings are prefixed with its name):

* ``SASL_SSL`` / ``SASL_PLAINTEXT``: PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512;
* ``REAUTH`` (SASL_PLAINTEXT): PLAIN and SCRAM-SHA-256 only, sessions of 3 s (``connections.max.reauth.ms``);
* ``MTLS`` (SSL): client certificate required; ``WRONGHOST`` (SSL): a certificate naming another host.
"""

from __future__ import annotations

import logging
import pickle
import time
import uuid

import pyarrow as pa
import pytest

from spark_kwire.client import Admin, ClientConfig, ConfigError, KafkaClient, Producer, fetch_range
from spark_kwire.client.errors import is_retriable_error
from spark_kwire.client.auth.security import (AuthenticationError, ScramClient, TlsError,
                                         security_hooks)
from spark_kwire.client.settings.jaas import parse_jaas_config
from spark_kwire.client.settings.secret import Secret
from harness import KafkaCluster, Listener, generate_test_certificates

USER = "alice"
PASSWORD = "kw1re-Pa55-" + uuid.uuid4().hex[:10]  # unique: grep-able in logs and messages
MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
REAUTH_MS = 3000


# -- fixtures ------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return generate_test_certificates(tmp_path_factory.mktemp("certs"))


@pytest.fixture(scope="module")
def secure_kafka(certs):
    props: dict[str, str] = {}

    def sasl(listener: str, mechanisms: list[str]) -> None:
        props[f"listener.name.{listener}.sasl.enabled.mechanisms"] = ",".join(mechanisms)
        props[f"listener.name.{listener}.plain.sasl.jaas.config"] = (
            f'org.apache.kafka.common.security.plain.PlainLoginModule required user_{USER}="{PASSWORD}";')
        for mech in ("scram-sha-256", "scram-sha-512"):
            props[f"listener.name.{listener}.{mech}.sasl.jaas.config"] = \
                "org.apache.kafka.common.security.scram.ScramLoginModule required;"

    def tls(listener: str, keystore, client_auth: str | None = None) -> None:
        props[f"listener.name.{listener}.ssl.keystore.type"] = "PEM"
        props[f"listener.name.{listener}.ssl.keystore.location"] = str(keystore)
        props[f"listener.name.{listener}.ssl.truststore.type"] = "PEM"
        props[f"listener.name.{listener}.ssl.truststore.location"] = str(certs.ca_cert)
        if client_auth:
            props[f"listener.name.{listener}.ssl.client.auth"] = client_auth

    sasl("sasl_ssl", MECHANISMS)
    tls("sasl_ssl", certs.broker_keystore)
    sasl("sasl_plaintext", MECHANISMS)
    sasl("reauth", ["PLAIN", "SCRAM-SHA-256"])
    for mech in ("plain", "scram-sha-256"):
        props[f"listener.name.reauth.{mech}.connections.max.reauth.ms"] = str(REAUTH_MS)
    tls("mtls", certs.broker_keystore, "required")
    tls("wronghost", certs.wrong_host_keystore)
    listeners = [Listener("SASL_SSL", "SASL_SSL"), Listener("SASL_PLAINTEXT", "SASL_PLAINTEXT"),
                 Listener("REAUTH", "SASL_PLAINTEXT"), Listener("MTLS", "SSL"), Listener("WRONGHOST", "SSL")]
    scram = [(mech, USER, PASSWORD) for mech in ("SCRAM-SHA-256", "SCRAM-SHA-512")]
    cluster = KafkaCluster(1, listeners=listeners, extra_properties=props, scram_users=scram)
    if cluster.cluster_id.startswith("-"):  # StorageTool would read "-t -xyz" as an option (1 run in 64)
        cluster.cluster_id = "k" + cluster.cluster_id[1:]
    with cluster:
        yield cluster


def _jaas(mechanism: str, password: str = PASSWORD, module: str | None = None) -> str:
    if module is None:
        module = ("org.apache.kafka.common.security.plain.PlainLoginModule" if mechanism == "PLAIN"
                  else "org.apache.kafka.common.security.scram.ScramLoginModule")
    return f'{module} required username="{USER}" password="{password}";'


def _sasl_options(cluster, listener: str, mechanism: str, certs=None, **extra) -> dict:
    opts = {
        "bootstrap.servers": cluster.bootstrap(listener),
        "security.protocol": "SASL_SSL" if listener == "SASL_SSL" else "SASL_PLAINTEXT",
        "sasl.mechanism": mechanism,
        "sasl.jaas.config": _jaas(mechanism),
        "request.timeout.ms": "15000",
    }
    if certs is not None:
        opts["ssl.truststore.location"] = str(certs.ca_cert)
    opts.update(extra)
    return opts


def _roundtrip(client: KafkaClient, n: int = 50) -> None:
    """Create a topic, produce ``n`` records and fetch them back."""
    topic = f"sec-{uuid.uuid4().hex[:10]}"
    Admin(client).create_topics([(topic, 1, 1)])
    assert topic in client.list_topics()
    values = pa.array([f"value-{i}".encode() for i in range(n)], pa.binary())
    with Producer(client) as producer:
        producer.send_batch(topic, 0, values)
        acks = producer.flush()
    assert acks[(topic, 0)].records == n
    got = []
    for batch in fetch_range(client, topic, 0, 0, n):
        got.extend(batch.value.to_pylist())
    assert got == values.to_pylist()


# -- unit: JAAS and SCRAM ------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, username, password", [
    ('org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="s3cr3t";',
     "alice", "s3cr3t"),
    ("kafkashaded.org.apache.kafka.common.security.scram.ScramLoginModule required username='alice' "
     "password='s3cr3t';", "alice", "s3cr3t"),
    ('com.example.Custom$Login  REQUIRED\n  username = "al\\"ice"\n  password="p\\\\a\\"ss;w=o,rd" ;  ',
     'al"ice', 'p\\a"ss;w=o,rd'),
    ("x.Y required username='it\\'s' password=\"a'b\"", "it's", "a'b"),
    ("org.apache.kafka.common.security.plain.PlainLoginModule optional username=bare password=w0rd;",
     "bare", "w0rd"),
])
def test_jaas_config_parsing(text, username, password):
    jaas = parse_jaas_config(Secret(text))
    assert jaas.get("username") == username
    assert jaas.get("password") == password
    assert password not in repr(jaas) and "***" in repr(jaas)
    with pytest.raises(TypeError):
        pickle.dumps(jaas)


@pytest.mark.parametrize("text", [
    "",
    'username="alice" password="hunter2-secret"',
    'org.Foo username="alice" password="hunter2-secret";',
    'org.Foo required username="alice" password="hunter2-secret',
    'org.Foo required username="alice" password;',
    'org.Foo required username="alice"; org.Bar required password="hunter2-secret";',
])
def test_jaas_config_errors_do_not_show_the_text(text):
    with pytest.raises(ConfigError) as info:
        parse_jaas_config(Secret(text))
    assert "hunter2" not in str(info.value) and "sasl.jaas.config" in str(info.value)


def test_jaas_config_without_password_is_a_config_error():
    opts = {"bootstrap.servers": "127.0.0.1:1", "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
            "sasl.jaas.config": 'org.Foo required username="alice";'}
    with pytest.raises(ConfigError, match="no password"):
        KafkaClient(opts)


def test_scram_sha256_rfc7677_vector():
    client = ScramClient("SCRAM-SHA-256", "user", Secret("pencil"), nonce="rOprNGfwEbeRWgbNEkqO")
    assert client.first_message() == b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
    final = client.respond(b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
    assert final == (b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                     b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
    assert client.respond(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=") is None and client.complete


@pytest.mark.parametrize("server_first, server_final, match", [
    (b"r=abcXYZ,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4095", None, "minimum 4096"),
    (b"r=zzzXYZ,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", None, "nonce"),
    (b"r=abcXYZ,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=",
     "server signature does not verify"),
    (b"r=abcXYZ,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", b"e=invalid-proof", "rejected"),
])
def test_scram_client_rejects_bad_servers(server_first, server_final, match):
    from spark_kwire.client.auth.security import ScramError

    client = ScramClient("SCRAM-SHA-512", "u=,x", Secret("pw"), nonce="abc")
    assert client.first_message() == b"n,,n=u=3D=2Cx,r=abc"
    with pytest.raises(ScramError, match=match):
        client.respond(server_first)
        client.respond(server_final)
    assert not client.complete


def test_unknown_mechanism_names_the_accepted_ones():
    with pytest.raises(ConfigError) as info:
        ClientConfig.from_kafka_options({"bootstrap.servers": "127.0.0.1:1", "security.protocol": "SASL_SSL",
                                         "sasl.mechanism": "NTLM", "sasl.jaas.config": _jaas("PLAIN")})
    assert "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER, AWS_MSK_IAM, GSSAPI" in str(info.value)


def test_gssapi_with_a_password_login_module_names_the_kerberos_one():
    """GSSAPI (Kafka's default mechanism) with a PLAIN JAAS line: the error says which login module GSSAPI needs,
    and shows nothing of the line (its password)."""
    with pytest.raises(ConfigError) as info:  # the settings read the JAAS line once, when they are built
        security_hooks(ClientConfig.from_kafka_options({"bootstrap.servers": "127.0.0.1:1",
                                                        "security.protocol": "SASL_SSL",
                                                        "sasl.jaas.config": _jaas("PLAIN")}))
    text = str(info.value)
    assert "needs a Kerberos login module" in text and "Krb5LoginModule" in text and "set sasl.mechanism" in text
    assert "PlainLoginModule" in text and PASSWORD not in text


def test_jks_and_pkcs12_stores_are_refused_with_conversion_advice(tmp_path, certs):
    jks = tmp_path / "truststore.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed" + b"\0" * 60)
    p12 = tmp_path / "keystore.p12"
    p12.write_bytes(b"\x30\x82\x0a\x00" + b"\0" * 60)
    base = {"bootstrap.servers": "127.0.0.1:1", "security.protocol": "SSL"}
    with pytest.raises(ConfigError, match=r"JKS.*keytool -exportcert -rfc.*openssl pkcs12"):
        KafkaClient({**base, "ssl.truststore.location": str(jks), "ssl.truststore.type": "JKS"})
    with pytest.raises(ConfigError, match=r"PKCS12.*openssl pkcs12 -in keystore.p12"):
        KafkaClient({**base, "ssl.truststore.location": str(certs.ca_cert), "ssl.keystore.location": str(p12)})
    with pytest.raises(ConfigError, match="no such file"):
        KafkaClient({**base, "ssl.ca.location": str(tmp_path / "missing.pem")})
    with pytest.raises(ConfigError, match="ssl.key.password"):
        KafkaClient({**base, "ssl.certificate.location": str(certs.client_cert),
                     "ssl.key.location": str(certs.client_key_encrypted), "ssl.key.password": "wrong"})


def _read_properties(path) -> dict[str, str]:
    props = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith(("#", "!")):
            key, _, value = line.partition("=")
            props[key.strip()] = value.strip()
    return props


@pytest.mark.parametrize("name", ["client-plaintext", "client-ssl", "client-sasl-ssl-scram", "client-sasl-plain"])
def test_example_client_settings_files_are_valid(name, certs):
    from harness import REPO_ROOT

    props = _read_properties(REPO_ROOT / "conf" / f"{name}.properties")
    assert props["security.protocol"] in ("PLAINTEXT", "SSL", "SASL_SSL")
    filled = {}
    for key, value in props.items():
        value = {"/path/to/ca.pem": str(certs.ca_cert), "/path/to/client.pem": str(certs.client_keystore),
                 "<KEY-PASSWORD>": "unused-for-an-unencrypted-key"}.get(value, value)
        filled[key] = value.replace("<USERNAME>", USER).replace("<PASSWORD>", PASSWORD)
    config = ClientConfig.from_kafka_options(filled)
    assert not config.ignored, config.ignored  # every name is one the client knows (unknown ones are refused)
    hooks = security_hooks(config)
    assert (hooks.transport_factory is not None) == config.security_protocol.endswith("SSL")
    if hooks.authenticate is not None:
        assert hooks.authenticate.username == USER and PASSWORD not in repr(config)


# -- SASL against the broker ---------------------------------------------------------------------------------

@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_sasl_ssl(secure_kafka, certs, mechanism):
    with KafkaClient(_sasl_options(secure_kafka, "SASL_SSL", mechanism, certs)) as client:
        _roundtrip(client)
        conn = client.any_connection()
        assert conn.sasl_session.mechanism == mechanism and conn.sasl_session.lifetime_ms == 0


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_sasl_plaintext(secure_kafka, mechanism):
    # Databricks' shaded login-module name and plain sasl.username/sasl.password both work.
    shaded = _sasl_options(secure_kafka, "SASL_PLAINTEXT", mechanism,
                           **{"sasl.jaas.config": _jaas(mechanism, module="kafkashaded.org.apache.kafka.common."
                                                                           "security.scram.ScramLoginModule")})
    with KafkaClient(shaded) as client:
        _roundtrip(client)
    plain = _sasl_options(secure_kafka, "SASL_PLAINTEXT", mechanism, **{"sasl.username": USER,
                                                                        "sasl.password": PASSWORD})
    del plain["sasl.jaas.config"]
    with KafkaClient(plain) as client:
        assert isinstance(client.list_topics(), list)


@pytest.mark.parametrize("listener, mechanism", [("SASL_SSL", "PLAIN"), ("SASL_SSL", "SCRAM-SHA-256"),
                                                 ("SASL_PLAINTEXT", "SCRAM-SHA-512")])
def test_wrong_password_fails_fast_naming_mechanism_and_broker(secure_kafka, certs, listener, mechanism):
    wrong = "not-the-" + PASSWORD
    opts = _sasl_options(secure_kafka, listener, mechanism, certs, **{"sasl.jaas.config": _jaas(mechanism, wrong)})
    start = time.monotonic()
    with pytest.raises(AuthenticationError) as info:
        with KafkaClient(opts) as client:
            client.list_topics()
    assert time.monotonic() - start < 10
    text = str(info.value)
    assert mechanism in text and secure_kafka.bootstrap(listener) in text and USER in text
    assert wrong not in text and PASSWORD not in text and PASSWORD not in repr(info.value)
    assert not is_retriable_error(info.value)
    assert PASSWORD not in str(pickle.loads(pickle.dumps(info.value)))


def test_mechanism_not_enabled_on_listener(secure_kafka):
    opts = _sasl_options(secure_kafka, "REAUTH", "SCRAM-SHA-512")
    with pytest.raises(AuthenticationError, match=r"does not enable SASL mechanism SCRAM-SHA-512.*PLAIN, SCRAM-SHA-256"):
        with KafkaClient(opts) as client:
            client.list_topics()


def test_reauthentication_keeps_a_busy_connection_working(secure_kafka):
    """Sessions last 3 s on the REAUTH listener: the same connection re-authenticates and keeps working."""
    opts = _sasl_options(secure_kafka, "REAUTH", "SCRAM-SHA-256")
    with KafkaClient(opts) as client:
        topic = f"reauth-{uuid.uuid4().hex[:8]}"
        Admin(client).create_topics([(topic, 1, 1)])
        conn = client.connection(next(iter(client.brokers)))
        connected_at = conn.connected_at
        assert conn.sasl_session.lifetime_ms == REAUTH_MS
        produced = 0
        with Producer(client) as producer:
            deadline = time.monotonic() + 2.5 * REAUTH_MS / 1000
            while time.monotonic() < deadline:
                producer.send_batch(topic, 0, pa.array([b"x%d" % produced], pa.binary()))
                producer.flush()
                produced += 1
                assert len(list(fetch_range(client, topic, 0, produced - 1, produced))) == 1
                time.sleep(0.05)
        assert conn.sasl_session.reauth_count >= 2
        # idle past the session's end: the next request re-authenticates first instead of being cut off
        time.sleep(REAUTH_MS / 1000 + 0.5)
        assert sum(b.record_count for b in fetch_range(client, topic, 0, 0, produced)) == produced
        assert conn.sasl_session.reauth_count >= 3
        assert client.connection(conn.node_id) is conn and conn.connected_at == connected_at


# -- TLS -----------------------------------------------------------------------------------------------------

def test_mutual_tls_with_pem_keystore(secure_kafka, certs):
    opts = {"bootstrap.servers": secure_kafka.bootstrap("MTLS"), "security.protocol": "SSL",
            "ssl.truststore.location": str(certs.ca_cert), "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(certs.client_keystore)}
    with KafkaClient(opts) as client:
        _roundtrip(client)


def test_mutual_tls_with_librdkafka_names_and_encrypted_key(secure_kafka, certs):
    opts = {"bootstrap.servers": secure_kafka.bootstrap("MTLS"), "security.protocol": "ssl",
            "ssl.ca.location": str(certs.ca_cert), "ssl.certificate.location": str(certs.client_cert),
            "ssl.key.location": str(certs.client_key_encrypted), "ssl.key.password": certs.client_key_password}
    with KafkaClient(opts) as client:
        assert isinstance(client.list_topics(), list)


def test_mutual_tls_with_inline_pem(secure_kafka, certs):
    key = certs.client_key.read_text()
    opts = {"bootstrap.servers": secure_kafka.bootstrap("MTLS"), "security.protocol": "SSL",
            "ssl.truststore.type": "PEM", "ssl.truststore.certificates": certs.ca_cert.read_text(),
            "ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": certs.client_cert.read_text(),
            # a one-line key, as it may come out of a properties file
            "ssl.keystore.key": " ".join(key.split("\n"))}
    config = ClientConfig.from_kafka_options(opts)
    assert "PRIVATE KEY" not in repr(config)
    with KafkaClient(config) as client:
        assert isinstance(client.list_topics(), list)


def test_mutual_tls_without_client_certificate_fails_fast(secure_kafka, certs):
    opts = {"bootstrap.servers": secure_kafka.bootstrap("MTLS"), "security.protocol": "SSL",
            "ssl.truststore.location": str(certs.ca_cert)}
    start = time.monotonic()
    with pytest.raises(TlsError, match="client certificate") as info:
        with KafkaClient(opts) as client:
            client.list_topics()
    assert time.monotonic() - start < 10 and "127.0.0.1" in str(info.value)


def test_untrusted_certificate_fails_naming_the_host(secure_kafka, certs):
    for opts in ({"ssl.truststore.location": str(certs.other_ca_cert)}, {}):  # other CA; system CAs
        opts.update({"bootstrap.servers": secure_kafka.bootstrap("SASL_SSL"), "security.protocol": "SASL_SSL",
                     "sasl.mechanism": "PLAIN", "sasl.jaas.config": _jaas("PLAIN")})
        start = time.monotonic()
        with pytest.raises(TlsError) as info:
            with KafkaClient(opts) as client:
                client.list_topics()
        assert time.monotonic() - start < 10
        assert secure_kafka.bootstrap("SASL_SSL") in str(info.value) and "not trusted" in str(info.value)
        assert not is_retriable_error(info.value) and PASSWORD not in str(info.value)


def test_hostname_mismatch_is_detected_unless_disabled(secure_kafka, certs):
    opts = {"bootstrap.servers": secure_kafka.bootstrap("WRONGHOST"), "security.protocol": "SSL",
            "ssl.truststore.location": str(certs.ca_cert)}
    with pytest.raises(TlsError, match=r"does not match.*127\.0\.0\.1.*ssl\.endpoint\.identification\.algorithm"):
        with KafkaClient(opts) as client:
            client.list_topics()
    # the chain is still verified with the check off: it is only the host name that is not compared
    with KafkaClient({**opts, "ssl.endpoint.identification.algorithm": ""}) as client:
        assert isinstance(client.list_topics(), list)
    with pytest.raises(TlsError, match="not trusted"):
        with KafkaClient({**opts, "ssl.endpoint.identification.algorithm": "",
                          "ssl.truststore.location": str(certs.other_ca_cert)}) as client:
            client.list_topics()


def test_tls_client_on_plaintext_listener_says_so(secure_kafka, certs):
    opts = {"bootstrap.servers": secure_kafka.bootstrap("PLAINTEXT"), "security.protocol": "SSL",
            "ssl.truststore.location": str(certs.ca_cert), "request.timeout.ms": "2000"}
    start = time.monotonic()
    with pytest.raises(Exception, match="TLS listener") as info:
        with KafkaClient(opts) as client:
            client.list_topics()
    assert time.monotonic() - start < 10, info.value


def test_plaintext_client_on_tls_listener_is_not_a_hang(secure_kafka, certs):
    opts = {"bootstrap.servers": secure_kafka.bootstrap("SASL_SSL"), "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN", "sasl.jaas.config": _jaas("PLAIN"), "request.timeout.ms": "3000"}
    start = time.monotonic()
    with pytest.raises(Exception):
        with KafkaClient(opts) as client:
            client.list_topics()
    assert time.monotonic() - start < 10


# -- secrets -------------------------------------------------------------------------------------------------

def test_secrets_never_show_in_logs_errors_or_reprs(secure_kafka, certs, caplog):
    caplog.set_level(logging.DEBUG, logger="spark_kwire")
    key_pem = certs.client_key.read_text()
    key_body = key_pem.splitlines()[1]  # a line of the private key's base64
    seen: list[str] = []

    good = _sasl_options(secure_kafka, "SASL_SSL", "SCRAM-SHA-512", certs)
    config = ClientConfig.from_kafka_options({**good, "ssl.keystore.key": key_pem,
                                              "ssl.keystore.certificate.chain": certs.client_cert.read_text()})
    with KafkaClient(config) as client:
        client.list_topics()
        conn = client.any_connection()
        seen += [repr(config), str(config), repr(client), repr(client.hooks), repr(conn), repr(conn.sasl_session),
                 str(pickle.dumps(config)), repr(pickle.loads(pickle.dumps(client.hooks)))]
    plain = ClientConfig.from_kafka_options({**good, "sasl.username": USER, "sasl.password": PASSWORD})
    seen += [repr(plain), str(pickle.dumps(plain))]
    failures = [
        _sasl_options(secure_kafka, "SASL_SSL", "PLAIN", certs, **{"sasl.jaas.config": _jaas("PLAIN", PASSWORD + "x")}),
        _sasl_options(secure_kafka, "SASL_PLAINTEXT", "SCRAM-SHA-256",
                      **{"sasl.jaas.config": _jaas("SCRAM-SHA-256", PASSWORD + "x")}),
        _sasl_options(secure_kafka, "SASL_SSL", "PLAIN", **{"ssl.truststore.location": str(certs.other_ca_cert)}),
        _sasl_options(secure_kafka, "SASL_SSL", "PLAIN", **{"sasl.jaas.config": f'Bad "{PASSWORD}"'}),
        _sasl_options(secure_kafka, "SASL_SSL", "GSSAPI"),
        {**good, "ssl.keystore.key": key_pem},  # a key without a certificate chain
    ]
    for opts in failures:
        with pytest.raises(Exception) as info:
            with KafkaClient(opts) as client:
                client.list_topics()
        seen += [str(info.value), repr(info.value), repr(info.value.__cause__), repr(info.value.__context__)]
    seen += [r.getMessage() for r in caplog.records] + [caplog.text]
    assert any("SCRAM-SHA-512 authentication as 'alice'" in r.getMessage() for r in caplog.records)
    for text in seen:
        assert PASSWORD not in text
        assert key_body not in text
