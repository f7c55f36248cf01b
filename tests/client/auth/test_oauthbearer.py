"""SASL/OAUTHBEARER against a real broker that validates RS256 JWTs from a real OAuth 2 server on loopback.

Client credentials configured as Java / Spark users write them (and Kafka 4.1's and librdkafka's names), an https
token endpoint, SASL extensions on the wire compared with librdkafka's, tokens that live a few seconds on a
listener that makes sessions re-authenticate every 3 s, a wrong secret, an unreachable endpoint, tokens the broker
refuses, Python token providers, unsecured development tokens, and librdkafka's OIDC login on the same broker.
"""

from __future__ import annotations

import logging
import pickle
import time
import uuid

import pyarrow as pa
import pytest

from spark_kwire.client.admin.admin import Admin
from spark_kwire.client.consumer.fetcher import fetch_range
from spark_kwire.client import ClientConfig, ConfigError, KafkaClient, Producer
from spark_kwire.client.errors import is_retriable_error
from spark_kwire.client.auth.oauth import TokenError
from spark_kwire.client.auth.oauth.refresh import forget_shared_tokens
from spark_kwire.client.auth.security import AuthenticationError, security_hooks
from tests import oauth_providers
from tests.client.auth.oauth_fixtures import (CLIENT_ID, CLIENT_SECRET, JAVA_HANDLER, REAUTH_MS, RecordingRelay,  # noqa: F401
                                         certs, fresh_tokens, idp, java_style_options, oauth_kafka,
                                         provider_defaults, providers)


@pytest.fixture(autouse=True)
def _defaults(provider_defaults):
    yield


def _roundtrip(client: KafkaClient, n: int = 20) -> str:
    topic = f"oauth-{uuid.uuid4().hex[:10]}"
    Admin(client).create_topics([(topic, 1, 1)])
    values = pa.array([f"v{i}".encode() for i in range(n)], pa.binary())
    with Producer(client) as producer:
        producer.send_batch(topic, 0, values)
        assert producer.flush()[(topic, 0)].records == n
    got = [v for batch in fetch_range(client, topic, 0, 0, n) for v in batch.value.to_pylist()]
    assert got == values.to_pylist()
    return topic


# -- client credentials ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("handler", [
    JAVA_HANDLER,
    "kafkashaded.org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
    "kafkashaded.org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler",
])
def test_client_credentials_as_java_users_write_them(oauth_kafka, idp, handler):
    before = idp.tokens_issued
    opts = java_style_options(oauth_kafka, idp, handler=handler,
                              module="kafkashaded.org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule")
    with KafkaClient(opts) as client, KafkaClient(opts) as second:
        _roundtrip(client)
        assert isinstance(second.list_topics(), list)
        session = client.any_connection().sasl_session
        assert session.mechanism == "OAUTHBEARER" and session.principal == CLIENT_ID
    # two clients, several connections, one process: one token
    assert idp.tokens_issued - before == 1
    issued = idp.issued[-1]
    assert issued.client_id == CLIENT_ID and issued.scope == "kafka" and issued.auth == "basic"


def test_kafka_41_and_librdkafka_option_names(oauth_kafka, idp):
    base = {k: v for k, v in java_style_options(oauth_kafka, idp).items() if k != "sasl.jaas.config"}
    kafka41 = {**base, "sasl.oauthbearer.client.credentials.client.id": CLIENT_ID,
               "sasl.oauthbearer.client.credentials.client.secret": CLIENT_SECRET, "sasl.oauthbearer.scope": "s41"}
    librdkafka = {k: v for k, v in base.items() if k != "sasl.login.callback.handler.class"}
    librdkafka.update({"sasl.oauthbearer.method": "oidc", "sasl.oauthbearer.client.id": CLIENT_ID,
                       "sasl.oauthbearer.client.secret": CLIENT_SECRET, "sasl.oauthbearer.scope": "rdk"})
    # Kafka 4.1's options win over the JAAS line, as in Java
    overriding = {**java_style_options(oauth_kafka, idp, secret="stale-secret"),
                  "sasl.oauthbearer.client.credentials.client.secret": CLIENT_SECRET}
    for opts, scope in ((kafka41, "s41"), (librdkafka, "rdk"), (overriding, "kafka")):
        forget_shared_tokens()
        with KafkaClient(opts) as client:
            assert isinstance(client.list_topics(), list)
        assert idp.issued[-1].scope == scope


def test_https_token_endpoint_trusts_the_configured_ca(oauth_kafka, providers, certs):
    _, tls_idp = providers
    opts = java_style_options(oauth_kafka, tls_idp)
    with pytest.raises(TokenError, match=r"not trusted.*ssl.truststore.location") as info:
        with KafkaClient(opts) as client:
            client.list_topics()
    assert tls_idp.url.split("//")[1] in str(info.value)
    for trust in ({"ssl.truststore.location": str(certs.ca_cert)}, {"ssl.ca.location": str(certs.ca_cert)}):
        forget_shared_tokens()
        with KafkaClient({**opts, **trust}) as client:
            _roundtrip(client, 5)
    # Java reads the token endpoint's TLS settings from the JAAS line
    forget_shared_tokens()
    jaas_trust = java_style_options(oauth_kafka, tls_idp, jaas_extra=f' ssl.truststore.location="{certs.ca_cert}" '
                                                                      f'ssl.truststore.type="PEM"')
    with KafkaClient(jaas_trust) as client:
        assert isinstance(client.list_topics(), list)


def test_extensions_on_the_wire_match_librdkafka(oauth_kafka, idp):
    """Confluent Cloud's logicalCluster / identityPoolId: kwire sends them as librdkafka does."""
    from confluent_kafka.admin import AdminClient

    relay = RecordingRelay(int(oauth_kafka.bootstrap("OAUTH").rsplit(":", 1)[1]))
    try:
        opts = java_style_options(oauth_kafka, idp, jaas_extra=' extension_logicalCluster="lkc-abc12" '
                                                                'extension_identityPoolId="pool-Xy9"')
        opts["bootstrap.servers"] = f"127.0.0.1:{relay.port}"
        with KafkaClient(opts) as client:
            client.list_topics()
        ours = relay.oauthbearer_messages()
        assert ours, "kwire sent no OAUTHBEARER message through the relay"
        admin = AdminClient({
            "bootstrap.servers": f"127.0.0.1:{relay.port}", "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanisms": "OAUTHBEARER", "sasl.oauthbearer.method": "oidc",
            "sasl.oauthbearer.client.id": CLIENT_ID, "sasl.oauthbearer.client.secret": CLIENT_SECRET,
            "sasl.oauthbearer.token.endpoint.url": idp.token_endpoint, "sasl.oauthbearer.scope": "kafka",
            "sasl.oauthbearer.extensions": "logicalCluster=lkc-abc12,identityPoolId=pool-Xy9"})
        admin.list_topics(timeout=30)
        theirs = relay.oauthbearer_messages()[len(ours):]
        assert theirs, "librdkafka sent no OAUTHBEARER message through the relay"
    finally:
        relay.close()

    def shape(message: bytes) -> tuple:
        fields = message.split(b"\x01")
        assert fields[0] == b"n,," and fields[-2:] == [b"", b""] and fields[1].startswith(b"auth=Bearer ")
        return fields[0], sorted(fields[2:-2])

    assert shape(ours[0]) == shape(theirs[0]) == (b"n,,", [b"identityPoolId=pool-Xy9", b"logicalCluster=lkc-abc12"])


def test_short_lived_tokens_and_sessions_reauthenticate_without_reconnecting(oauth_kafka, idp):
    """Tokens of 6 s, sessions of 3 s: 16 s of traffic re-authenticate the same connection again and again,
    with a token fetched per token lifetime (not per connection or re-authentication)."""
    idp.token_lifetime_s = 6
    before = idp.tokens_issued
    with KafkaClient(java_style_options(oauth_kafka, idp, "REAUTH")) as client:
        topic = f"oauth-reauth-{uuid.uuid4().hex[:8]}"
        Admin(client).create_topics([(topic, 1, 1)])
        conn = client.connection(next(iter(client.brokers)))
        connected_at = conn.connected_at
        produced = 0
        deadline = time.monotonic() + 16
        with Producer(client) as producer:
            while time.monotonic() < deadline:
                producer.send_batch(topic, 0, pa.array([b"x%d" % produced], pa.binary()))
                producer.flush()
                produced += 1
                assert sum(b.record_count for b in fetch_range(client, topic, 0, produced - 1, produced)) == 1
                time.sleep(0.05)
        assert sum(b.record_count for b in fetch_range(client, topic, 0, 0, produced)) == produced
        assert conn.sasl_session.reauth_count >= 4, conn.sasl_session
        assert 0 < conn.sasl_session.lifetime_ms <= REAUTH_MS
        assert client.connection(conn.node_id) is conn and conn.connected_at == connected_at
    fetched = idp.tokens_issued - before
    assert 3 <= fetched <= 8, f"{fetched} tokens for 16 s of 6-s tokens"


def test_identity_provider_outage_keeps_the_valid_token(oauth_kafka, idp, caplog):
    idp.token_lifetime_s = 8
    with KafkaClient(java_style_options(oauth_kafka, idp, "REAUTH")) as client:
        client.list_topics()
        idp.reject_with = 503
        time.sleep(REAUTH_MS / 1000 + 0.5)  # past the session: the next request re-authenticates
        assert isinstance(client.list_topics(), list)  # the refresh fails, the token is still valid
        idp.reject_with = None
        conn = client.any_connection()
        assert conn.sasl_session.reauth_count >= 1


# -- failures ----------------------------------------------------------------------------------------------------

def test_wrong_client_secret_fails_fast_and_clearly(oauth_kafka, idp, caplog):
    caplog.set_level(logging.DEBUG, logger="spark_kwire")
    wrong = "wrong-" + CLIENT_SECRET
    opts = java_style_options(oauth_kafka, idp, secret=wrong)
    start = time.monotonic()
    with pytest.raises(AuthenticationError) as info:
        with KafkaClient(opts) as client:
            client.list_topics()
    assert time.monotonic() - start < 5
    text = str(info.value)
    assert isinstance(info.value, TokenError) and info.value.status == 401 and info.value.error == "invalid_client"
    assert idp.token_endpoint in text and "invalid_client" in text and CLIENT_ID in text
    assert not is_retriable_error(info.value)
    seen = [text, repr(info.value), str(pickle.loads(pickle.dumps(info.value))), caplog.text,
            repr(ClientConfig.from_kafka_options(opts)), str(pickle.dumps(ClientConfig.from_kafka_options(opts)))]
    for item in seen:
        assert wrong not in item and CLIENT_SECRET not in item


def test_unreachable_token_endpoint_is_a_clear_bounded_error(oauth_kafka, idp):
    opts = java_style_options(oauth_kafka, idp)
    opts.update({"sasl.oauthbearer.token.endpoint.url": "http://127.0.0.1:9/oauth2/token",
                 "sasl.login.retry.backoff.max.ms": "1500"})
    start = time.monotonic()
    with pytest.raises(TokenError, match=r"127\.0\.0\.1:9/oauth2/token.*cannot reach the token endpoint") as info:
        with KafkaClient(opts) as client:
            client.list_topics()
    assert time.monotonic() - start < 10, info.value
    idp.reject_with = 500  # a server error is retried within the same budget, then reported with its status
    with pytest.raises(TokenError, match=r"HTTP 500 temporarily_unavailable"):
        with KafkaClient({**java_style_options(oauth_kafka, idp), "sasl.login.retry.backoff.max.ms": "800"}) as client:
            client.list_topics()


def test_broker_refusing_the_token_gives_its_reason(oauth_kafka, idp):
    token = idp.mint("mallory", foreign_key=True)
    oauth_providers.current.update(token=token, expiry=time.time() + 600)
    opts = {**java_style_options(oauth_kafka, idp), "sasl.login.callback.handler.class": "tests.oauth_providers:static"}
    with pytest.raises(AuthenticationError) as info:
        with KafkaClient(opts) as client:
            client.list_topics()
    text = str(info.value)
    assert "SASL_AUTHENTICATION_FAILED" in text and "invalid_token" in text and "tests.oauth_providers:static" in text
    assert token not in text and token.split(".")[2] not in text and not is_retriable_error(info.value)


def test_oauthbearer_misconfigurations_name_what_to_set():
    base = {"bootstrap.servers": "127.0.0.1:1", "security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER"}
    cases = [
        ({}, r"OAUTHBEARER needs a token source.*OAuthBearerLoginCallbackHandler.*package.module:function"),
        ({"sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" '
                              'password="hunter2";'}, "OAuthBearerLoginModule, not .*PlainLoginModule"),
        ({"sasl.login.callback.handler.class": "com.example.MyJavaHandler"}, "cannot run Java classes"),
        ({"sasl.login.callback.handler.class": JAVA_HANDLER}, "sasl.oauthbearer.token.endpoint.url"),
        ({"sasl.login.callback.handler.class": JAVA_HANDLER, "sasl.oauthbearer.token.endpoint.url": "https://i/t",
          "sasl.jaas.config": 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required '
                              'clientId="a";'}, "client secret"),
        ({"sasl.oauthbearer.method": "magic"}, "oidc, azure, aws_msk_iam"),
        ({"sasl.oauthbearer.token.endpoint.url": "ftp://idp/token", "sasl.oauthbearer.client.id": "a",
          "sasl.oauthbearer.client.secret": "hunter2"}, "http:// or https://"),
        ({"sasl.oauthbearer.method": "oidc", "sasl.oauthbearer.token.endpoint.url": "https://i/t",
          "sasl.oauthbearer.client.id": "a", "sasl.oauthbearer.client.secret": "hunter2",
          "sasl.oauthbearer.extensions": "auth=x"}, "extension name 'auth'"),
        ({"sasl.client.callback.handler.class": "com.example.Other"}, "cannot run Java callback handlers"),
        ({"sasl.oauthbearer.token.endpoint.url": "https://i/t", "sasl.oauthbearer.client.id": "a",
          "sasl.oauthbearer.client.secret": "hunter2", "sasl.oauthbearer.assertion.file": "/a.jwt"},
         "JWT-bearer grant"),
        ({"sasl.oauthbearer.token.endpoint.url": "https://i/t", "sasl.oauthbearer.client.id": "a",
          "sasl.oauthbearer.client.secret": "hunter2",
          "sasl.oauthbearer.jwt.retriever.class": "org.apache.kafka.common.security.oauthbearer.JwtBearerJwtRetriever"},
         "client-credentials grant or from a file"),
        ({"sasl.jaas.config": 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required '
                              'unsecuredLoginStringClaim_foo="x";'}, "unsecuredLoginStringClaim_sub"),
    ]
    for extra, match in cases:
        with pytest.raises(ConfigError, match=match) as info:
            security_hooks(ClientConfig.from_kafka_options({**base, **extra}))
        assert "hunter2" not in str(info.value)


# -- Python token providers --------------------------------------------------------------------------------------

def test_provider_callable_shapes(oauth_kafka, idp):
    oauth_providers.current.update(token=idp.mint("provided-user", lifetime_s=600), expiry=time.time() + 600)
    base = {k: v for k, v in java_style_options(oauth_kafka, idp).items() if k != "sasl.jaas.config"}
    for reference, principal in (("tests.oauth_providers:static", "provided-user"),
                                 ("tests.oauth_providers.static", "provided-user"),  # dotted, like a class name
                                 ("tests.oauth_providers:with_extensions", "from-provider"),
                                 ("tests.oauth_providers:AccessTokenLike", "provided-user")):
        forget_shared_tokens()
        calls = oauth_providers.calls
        with KafkaClient({**base, "sasl.login.callback.handler.class": reference}) as client:
            assert isinstance(client.list_topics(), list)
            assert client.any_connection().sasl_session.principal == principal
        if reference.endswith("static"):
            assert oauth_providers.calls == calls + 1  # once for several connections


@pytest.mark.parametrize("reference, match", [
    ("tests.no_such_module:token", "cannot import module 'tests.no_such_module'.*driver and on every executor"),
    ("tests.oauth_providers:missing", "has no attribute 'missing'"),
    ("tests.oauth_providers:not_callable", "is not callable"),
    ("tests.oauth_providers:broken", "raised RuntimeError: the vault is sealed"),
    ("tests.oauth_providers:wrong_shape", r"returned a str; expected \(token, expiry"),
    ("tests.oauth_providers:in_milliseconds", "looks like milliseconds"),
])
def test_provider_errors_name_the_option_and_the_reference(oauth_kafka, idp, reference, match):
    oauth_providers.current.update(token=idp.mint(), expiry=time.time() + 600)
    opts = {**java_style_options(oauth_kafka, idp), "sasl.login.callback.handler.class": reference}
    with pytest.raises(TokenError, match=match) as info:
        with KafkaClient(opts) as client:
            client.list_topics()
    assert f"sasl.login.callback.handler.class={reference}" in str(info.value)
    assert not is_retriable_error(info.value)


# -- unsecured development tokens, librdkafka ---------------------------------------------------------------------

def test_unsecured_token_for_local_development(oauth_kafka):
    opts = {"bootstrap.servers": oauth_kafka.bootstrap("UNSECURED"), "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.jaas.config": 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required '
                                'unsecuredLoginStringClaim_sub="dev-alice" unsecuredLoginLifetimeSeconds="120" '
                                'unsecuredLoginListClaim_scope=",read,write";'}
    with KafkaClient(opts) as client:
        _roundtrip(client, 5)
        session = client.any_connection().sasl_session
        assert session.principal == "dev-alice" and 0 < session.lifetime_ms <= 120_000
    # the broker that validates signatures refuses it
    with pytest.raises(AuthenticationError, match="invalid_token"):
        with KafkaClient({**opts, "bootstrap.servers": oauth_kafka.bootstrap("OAUTH")}) as client:
            client.list_topics()


def test_librdkafka_oidc_and_kwire_share_a_topic(oauth_kafka, idp):
    import confluent_kafka

    rdk = {"bootstrap.servers": oauth_kafka.bootstrap("OAUTH"), "security.protocol": "SASL_PLAINTEXT",
           "sasl.mechanisms": "OAUTHBEARER", "sasl.oauthbearer.method": "oidc",
           "sasl.oauthbearer.client.id": CLIENT_ID, "sasl.oauthbearer.client.secret": CLIENT_SECRET,
           "sasl.oauthbearer.token.endpoint.url": idp.token_endpoint, "sasl.oauthbearer.scope": "kafka"}
    with KafkaClient(java_style_options(oauth_kafka, idp)) as client:
        topic = f"oauth-rdk-{uuid.uuid4().hex[:8]}"
        Admin(client).create_topics([(topic, 1, 1)])
        producer = confluent_kafka.Producer(rdk)
        for i in range(30):
            producer.produce(topic, value=f"rdk-{i}".encode(), partition=0)
        assert producer.flush(30) == 0
        got = [v.decode() for b in fetch_range(client, topic, 0, 0, 30) for v in b.value.to_pylist()]
        assert got == [f"rdk-{i}" for i in range(30)]
        with Producer(client) as ours:
            ours.send_batch(topic, 0, pa.array([f"kw-{i}".encode() for i in range(10)], pa.binary()))
            ours.flush()
    consumer = confluent_kafka.Consumer({**rdk, "group.id": f"g-{uuid.uuid4().hex[:6]}",
                                         "auto.offset.reset": "earliest"})
    consumer.assign([confluent_kafka.TopicPartition(topic, 0, 30)])
    seen = []
    deadline = time.monotonic() + 60
    while len(seen) < 10 and time.monotonic() < deadline:
        message = consumer.poll(1.0)
        if message is not None and message.error() is None:
            seen.append(message.value().decode())
    consumer.close()
    assert seen == [f"kw-{i}" for i in range(10)]


def test_token_from_a_file_url(oauth_kafka, idp, tmp_path):
    """Kafka's FileJwtRetriever form: a file:/path endpoint URL, read again at every refresh."""
    path = tmp_path / "token.jwt"
    path.write_text(idp.mint("file-user", lifetime_s=600) + "\n")
    opts = {**java_style_options(oauth_kafka, idp), "sasl.oauthbearer.token.endpoint.url": f"file:{path}"}
    del opts["sasl.jaas.config"]
    with KafkaClient(opts) as client:
        assert isinstance(client.list_topics(), list)
        assert client.any_connection().sasl_session.principal == "file-user"
    with pytest.raises(ConfigError, match="no such file"):
        KafkaClient({**opts, "sasl.oauthbearer.token.endpoint.url": f"file:{tmp_path / 'missing.jwt'}"})
