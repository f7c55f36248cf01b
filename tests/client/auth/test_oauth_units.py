"""OAUTHBEARER pieces without a broker: Kafka's refresh-window arithmetic, the client's first message, one fetch per
process under concurrency, riding out a failed refresh, and secrets kept out of reprs and pickles."""

from __future__ import annotations

import pickle
import threading
import time

import pytest

from spark_kwire.client import ClientConfig, ConfigError
from spark_kwire.client.settings.oauth_options import unsecured_token
from spark_kwire.client.settings.secret import Secret
from spark_kwire.client.auth.oauth import OAuthToken, TokenError, jwt_claims
from spark_kwire.client.auth.oauth.refresh import RefreshPolicy, SharedToken
from spark_kwire.client.auth.oauth.unsecured import UnsecuredTokenSource
from spark_kwire.client.auth.sasl.oauthbearer import client_first_message
from spark_kwire.client.auth.security import security_hooks

NOW = 1_800_000_000.0


def _token(lifetime: float, issued_ago: float = 0.0) -> OAuthToken:
    return OAuthToken(Secret("t"), NOW - issued_ago + lifetime, "p", NOW - issued_ago)


@pytest.mark.parametrize("lifetime, issued_ago, low, high", [
    (3600, 0, 0.80 * 3600, 0.85 * 3600),  # the window: 80% + up to 5% jitter of the lifetime
    (1000, 0, 700, 700),  # capped at buffer.seconds (300) before expiry
    (3600, 3000, 60, 300),  # never sooner than min.period.seconds (60) from now, nor inside the buffer
    (10, 0, 8.0, 8.5),  # less life than min.period + buffer: the same fraction of what remains
    (3600, 3700, 0, 0),  # already expired: now
])
def test_refresh_time_follows_kafkas_window_semantics(lifetime, issued_ago, low, high):
    policy = RefreshPolicy()
    for _ in range(200):
        delay = policy.refresh_at(_token(lifetime, issued_ago), NOW) - NOW
        assert low - 1e-6 <= delay <= high + 1e-6, delay


def test_refresh_settings_are_read_and_checked():
    base = {"bootstrap.servers": "h:1", "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
            "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
                                "unsecuredLoginStringClaim_sub=u;"}
    policy = ClientConfig.from_kafka_options({
        **base, "sasl.login.refresh.window.factor": "0.5", "sasl.login.refresh.window.jitter": "0",
        "sasl.login.refresh.min.period.seconds": "0", "sasl.login.refresh.buffer.seconds": "0"}).sasl.refresh
    assert policy == RefreshPolicy(0.5, 0.0, 0, 0)
    assert policy.refresh_at(_token(100), NOW) == NOW + 50
    for key, value in (("sasl.login.refresh.window.factor", "0.3"), ("sasl.login.refresh.buffer.seconds", "x"),
                       ("sasl.login.refresh.min.period.seconds", "901")):
        with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
            ClientConfig.from_kafka_options({**base, key: value})


def test_client_first_message_layout():
    # RFC 7628 section 3.1 with Kafka's extensions (KIP-342), as Kafka's OAuthBearerClientInitialResponse writes it
    assert client_first_message("abc.def.ghi", {}) == b"n,,\x01auth=Bearer abc.def.ghi\x01\x01"
    assert client_first_message("T", {"logicalCluster": "lkc-1", "identityPoolId": "pool-2"}) == \
        b"n,,\x01auth=Bearer T\x01logicalCluster=lkc-1\x01identityPoolId=pool-2\x01\x01"


def test_unsecured_token_claims_and_jwt_reading():
    source = UnsecuredTokenSource(unsecured_token({
        "unsecuredLoginStringClaim_sub": "dev", "unsecuredLoginNumberClaim_n": "7",
        "unsecuredLoginListClaim_scope": " a b", "unsecuredLoginLifetimeSeconds": "60",
        "unsecuredLoginExtension_traceId": "x1"}))
    token = source.fetch()
    text = token.value.reveal()
    assert text.endswith(".") and text.count(".") == 2
    claims = jwt_claims(text + "sig")
    assert claims["sub"] == "dev" and claims["n"] == 7 and claims["scope"] == ["a", "b"]
    assert 59 <= claims["exp"] - claims["iat"] <= 61 and token.extensions == {"traceId": "x1"}
    assert jwt_claims("opaque-token") is None and jwt_claims("a.!!!.c") is None


def test_one_fetch_per_process_under_concurrency():
    fetches = []

    def fetch():
        fetches.append(1)
        time.sleep(0.2)
        return OAuthToken(Secret("tok"), time.time() + 3600, "p", time.time())

    shared = SharedToken(fetch, RefreshPolicy(), "test")
    threads = [threading.Thread(target=shared.get) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(fetches) == 1 and shared.fetches == 1


def test_failed_refresh_keeps_a_valid_token_and_fails_once_expired():
    state = {"fail": False, "lifetime": 4.0}

    def fetch():
        if state["fail"]:
            raise TokenError("identity provider down")
        return OAuthToken(Secret("tok"), time.time() + state["lifetime"], "p", time.time())

    shared = SharedToken(fetch, RefreshPolicy(0.5, 0.0, 0, 0), "test")
    first = shared.get()
    time.sleep(2.2)  # past the refresh point (half the lifetime)
    state["fail"] = True
    assert shared.get() is first  # the refresh failed, the token is still valid
    time.sleep(2.0)  # now expired
    with pytest.raises(TokenError, match="identity provider down"):
        shared.get()


def test_tokens_and_client_secrets_stay_out_of_reprs_and_pickles():
    secret = "S3cr3t-for-repr-check"
    token = OAuthToken(Secret("eyJ.token.value"), time.time() + 60, "p")
    assert "eyJ" not in repr(token) and "eyJ" not in str(token)
    with pytest.raises(TypeError):
        pickle.dumps(token)
    opts = {"bootstrap.servers": "h:1", "security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER",
            "sasl.login.callback.handler.class": "org.apache.kafka.common.security.oauthbearer."
                                                 "OAuthBearerLoginCallbackHandler",
            "sasl.oauthbearer.token.endpoint.url": "https://idp.example.com/oauth2/token",
            "sasl.jaas.config": f'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required '
                                f'clientId="app" clientSecret="{secret}";',
            "sasl.oauthbearer.client.credentials.client.secret": secret,
            "sasl.oauthbearer.config": f"client_secret={secret}"}
    config = ClientConfig.from_kafka_options(opts)
    hooks = security_hooks(config)
    seen = [repr(config), str(pickle.dumps(config)), repr(hooks), repr(hooks.authenticate),
            repr(hooks.authenticate.mechanism_impl), str(pickle.dumps(hooks.authenticate)),
            repr(pickle.loads(pickle.dumps(hooks.authenticate)))]
    for text in seen:
        assert secret not in text


def _read_properties(path) -> dict[str, str]:
    props = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith(("#", "!")):
            key, _, value = line.partition("=")
            props[key.strip()] = value.strip()
    return props


@pytest.mark.parametrize("name, mechanism, source", [
    ("client-oauthbearer-oidc", "OAUTHBEARER", "ClientCredentialsSource"),
    ("client-confluent-cloud-oidc", "OAUTHBEARER", "ClientCredentialsSource"),
    ("client-confluent-cloud-api-key", "PLAIN", None),
    ("client-msk-iam", "AWS_MSK_IAM", "CallableTokenSource"),
    ("client-eventhubs-entra", "OAUTHBEARER", "ClientCredentialsSource"),
    ("client-eventhubs-connection-string", "PLAIN", None),
    ("client-oauthbearer-unsecured", "OAUTHBEARER", "UnsecuredTokenSource"),
])
def test_cloud_example_settings_files_are_valid(name, mechanism, source):
    from harness import REPO_ROOT

    props = _read_properties(REPO_ROOT / "conf" / f"{name}.properties")
    filled = {k: v.replace("<CLIENT-SECRET>", "cs-123").replace("<API-SECRET>", "as-123").replace("<NAMESPACE>", "myns")
              for k, v in props.items()}
    config = ClientConfig.from_kafka_options(filled)
    assert not config.ignored, config.ignored  # every name is one the client knows (unknown ones are refused)
    authenticator = security_hooks(config).authenticate
    assert authenticator.mechanism == mechanism
    impl = authenticator.mechanism_impl
    if source is not None:
        assert type(impl.source).__name__ == source
    if name == "client-confluent-cloud-oidc":
        assert impl.extensions == {"logicalCluster": "lkc-xxxxx", "identityPoolId": "pool-xxxx"}
    if name == "client-eventhubs-connection-string":
        assert impl.principal == "$ConnectionString"
    if name == "client-eventhubs-entra":  # the kwire form the file describes: azure-identity, scope from the host
        kwire_form = {k: v for k, v in filled.items() if not k.startswith(("sasl.login", "sasl.oauthbearer",
                                                                            "sasl.jaas"))}
        kwire_form["sasl.oauthbearer.method"] = "azure"
        impl = security_hooks(ClientConfig.from_kafka_options(kwire_form)).authenticate.mechanism_impl
        assert impl.source.description == "Entra ID token for https://myns.servicebus.windows.net/.default"
    assert "cs-123" not in repr(config) and "as-123" not in repr(config)
