"""Shared set-up of the OAUTHBEARER tests: a test identity provider (http and https, same signing key) and one
broker whose listeners validate its tokens.

Listeners: ``OAUTH`` (SASL_PLAINTEXT, JWTs checked against the provider's JWKS), ``REAUTH`` (the same with
``connections.max.reauth.ms`` of 3 s) and ``UNSECURED`` (Kafka's unsecured validator, for unsigned development
tokens); every broker also has its PLAINTEXT listener.
"""

from __future__ import annotations

import socket
import threading
import uuid

import pytest

from harness import KafkaCluster, Listener, generate_test_certificates
from harness.oauth_provider import KAFKA_LOGIN_MODULE, OAuthProvider
from spark_kwire.client.auth.oauth.refresh import forget_shared_tokens

CLIENT_ID = "kwire-app"
CLIENT_SECRET = "cl1ent-S3cret-" + uuid.uuid4().hex[:12]  # unique: grep-able in logs, errors and pickles
REAUTH_MS = 3000
JAVA_HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"


def start_providers(certs) -> tuple[OAuthProvider, OAuthProvider]:
    plain = OAuthProvider({CLIENT_ID: CLIENT_SECRET}).start()
    tls = OAuthProvider({CLIENT_ID: CLIENT_SECRET}, https=True, certs=certs, keys_from=plain,
                        issuer=plain.issuer).start()
    return plain, tls


def oauth_cluster(idp: OAuthProvider, https_idp: OAuthProvider | None = None) -> KafkaCluster:
    props = idp.broker_properties("OAUTH")
    props.update(idp.broker_properties("REAUTH", reauth_ms=REAUTH_MS))
    props["listener.name.unsecured.sasl.enabled.mechanisms"] = "OAUTHBEARER"
    props["listener.name.unsecured.oauthbearer.sasl.jaas.config"] = f"{KAFKA_LOGIN_MODULE} required ;"
    system = idp.broker_system_properties()
    if https_idp is not None:  # so that the Java client may use the https endpoint too
        system["org.apache.kafka.sasl.oauthbearer.allowed.urls"] += f",{https_idp.token_endpoint}"
    listeners = [Listener("OAUTH", "SASL_PLAINTEXT"), Listener("REAUTH", "SASL_PLAINTEXT"),
                 Listener("UNSECURED", "SASL_PLAINTEXT")]
    return KafkaCluster(1, listeners=listeners, extra_properties=props, system_properties=system)


def java_style_options(cluster: KafkaCluster, idp: OAuthProvider, listener: str = "OAUTH", *,
                       secret: str = CLIENT_SECRET, handler: str = JAVA_HANDLER, jaas_extra: str = "",
                       module: str = KAFKA_LOGIN_MODULE) -> dict:
    """Kafka client properties (no ``kafka.`` prefix) as Java / Spark users write OIDC client credentials."""
    return {
        "bootstrap.servers": cluster.bootstrap(listener),
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "OAUTHBEARER",
        "sasl.login.callback.handler.class": handler,
        "sasl.oauthbearer.token.endpoint.url": idp.token_endpoint,
        "sasl.jaas.config": f'{module} required clientId="{CLIENT_ID}" clientSecret="{secret}" scope="kafka"'
                            f'{jaas_extra};',
        "request.timeout.ms": "15000",
    }


class RecordingRelay:
    """A TCP relay in front of a listener that keeps every byte clients send (to read their SASL messages)."""

    def __init__(self, target_port: int) -> None:
        self.target = ("127.0.0.1", target_port)
        self.sent = bytearray()
        self.connections = 0
        self._lock = threading.Lock()
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self._stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._stop:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            with self._lock:
                self.connections += 1
            threading.Thread(target=self._pump, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, dest: socket.socket, record: bool) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                if record:
                    with self._lock:
                        self.sent += data
                dest.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, dest):
                try:
                    s.close()
                except OSError:
                    pass

    def oauthbearer_messages(self) -> list[bytes]:
        """Every OAUTHBEARER client-first message seen so far."""
        with self._lock:
            data = bytes(self.sent)
        found, start = [], 0
        while True:
            begin = data.find(b"n,,\x01auth=Bearer ", start)
            if begin < 0:
                return found
            end = data.find(b"\x01\x01", begin)
            found.append(data[begin:end + 2])
            start = end + 2

    def close(self) -> None:
        self._stop = True
        self._server.close()


# -- pytest fixtures (import them into a test module: each module gets its own broker) ----------------------------

@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return generate_test_certificates(tmp_path_factory.mktemp("certs"))


@pytest.fixture(scope="module")
def providers(certs):
    plain, tls = start_providers(certs)
    yield plain, tls
    plain.stop()
    tls.stop()


@pytest.fixture(scope="module")
def idp(providers):
    return providers[0]


@pytest.fixture(scope="module")
def oauth_kafka(providers):
    with oauth_cluster(*providers) as cluster:
        yield cluster


@pytest.fixture(autouse=True)
def fresh_tokens():
    """Each test starts without cached tokens."""
    forget_shared_tokens()
    yield
    forget_shared_tokens()


@pytest.fixture
def provider_defaults(providers):
    """The providers' defaults (an hour's tokens, issuing on) for each test."""
    for provider in providers:
        provider.token_lifetime_s = 3600
        provider.reject_with = None
    yield providers
