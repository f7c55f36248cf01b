"""Authentication and TLS of kwire's registry client against the test registry: HTTP Basic (options and URL), static
bearer tokens with Confluent Cloud's headers, OAuth client credentials from the harness's identity provider, HTTPS
with a CA file and with client certificates; 401 and 403 messages; secrets never shown."""

from __future__ import annotations

import logging
import pickle

import pytest

from harness.oauth_provider import OAuthProvider
from harness.schema_registry import SchemaRegistryServer
from spark_kwire.client.registry import (RegistryAuthError, RegistryClient, RegistryConfigError, RegistryTlsError,
                                         RegistryUnreachableError, Schema)
from tests.client.registry.conftest import SECRET_PASSWORD, SECRET_TOKEN

FAST = {"retries.wait.ms": "10", "retries.max.wait.ms": "50", "timeout": "5"}


def assert_secret_free(*texts) -> None:
    for text in texts:
        shown = text if isinstance(text, (str, bytes)) else repr(text)
        for secret in (SECRET_PASSWORD, SECRET_TOKEN):
            assert (secret.encode() if isinstance(shown, bytes) else secret) not in shown


@pytest.fixture
def secured():
    with SchemaRegistryServer(users={"alice": SECRET_PASSWORD, "mallory": SECRET_PASSWORD + "m"},
                              bearer_tokens={SECRET_TOKEN: "service-1"}, denied={"mallory"}) as server:
        yield server


def test_basic_auth_from_the_options_and_from_the_url(secured):
    by_option = RegistryClient({"url": secured.url, "basic.auth.user.info": f"alice:{SECRET_PASSWORD}", **FAST})
    assert by_option.register("s", Schema('"int"')) == 1
    host = secured.url.removeprefix("http://")
    by_url = RegistryClient({"url": f"http://alice:{SECRET_PASSWORD}@{host}", **FAST})
    explicit = RegistryClient({"url": f"http://alice:{SECRET_PASSWORD}@{host}", "basic.auth.credentials.source": "URL",
                               **FAST})
    assert by_url.versions("s") == explicit.versions("s") == [1]
    assert {r.principal for r in secured.requests} == {"alice"}
    assert_secret_free(repr(by_option), repr(by_url), pickle.dumps(by_option), pickle.dumps(by_url))


def test_401_names_the_credentials_source_never_the_secret(secured, caplog):
    caplog.set_level(logging.DEBUG)
    wrong = RegistryClient({"url": secured.url, "basic.auth.user.info": f"alice:{SECRET_PASSWORD}x", **FAST})
    with pytest.raises(RegistryAuthError) as caught:
        wrong.subjects()
    message = str(caught.value)
    assert caught.value.status == 401
    assert "refused the credentials" in message and "basic.auth.user.info" in message and "'alice'" in message
    nothing = RegistryClient({"url": secured.url, **FAST})
    with pytest.raises(RegistryAuthError, match="no credentials .*basic.auth.user.info"):
        nothing.subjects()
    assert_secret_free(message, pickle.dumps(caught.value), caplog.text)
    assert secured.count("GET", "/subjects") == 2  # refused credentials are not retried


def test_403_names_the_principal_source(secured):
    denied = RegistryClient({"url": secured.url, "basic.auth.user.info": f"mallory:{SECRET_PASSWORD}m", **FAST})
    with pytest.raises(RegistryAuthError) as caught:
        denied.subjects()
    assert (caught.value.status, caught.value.error_code) == (403, 40301)
    assert "denied the operation" in str(caught.value) and "'mallory'" in str(caught.value)
    assert_secret_free(str(caught.value))


def test_static_bearer_token_with_confluent_cloud_headers(secured):
    client = RegistryClient({"url": secured.url, "bearer.auth.credentials.source": "STATIC_TOKEN",
                             "bearer.auth.token": SECRET_TOKEN, "bearer.auth.logical.cluster": "lsrc-123",
                             "bearer.auth.identity.pool.id": "pool-1,pool-2", **FAST})
    assert client.subjects() == []
    request = secured.requests[-1]
    assert request.principal == "service-1"
    assert (request.headers["target-sr-cluster"], request.headers["confluent-identity-pool-id"]) == \
        ("lsrc-123", "pool-1,pool-2")
    assert request.headers["authorization"] == "Bearer ***"
    bad = RegistryClient({"url": secured.url, "bearer.auth.credentials.source": "STATIC_TOKEN",
                          "bearer.auth.token": SECRET_TOKEN + "-old", **FAST})
    with pytest.raises(RegistryAuthError, match="static bearer token from bearer.auth.token") as caught:
        bad.subjects()
    assert_secret_free(str(caught.value), repr(client), pickle.dumps(client))


def test_oauth_client_credentials_against_a_real_token_endpoint():
    from spark_kwire.client.auth.oauth.refresh import forget_shared_tokens

    forget_shared_tokens()
    with OAuthProvider({"registry-app": SECRET_PASSWORD}) as idp, SchemaRegistryServer(oauth=idp) as server:
        options = {"url": server.url, "bearer.auth.credentials.source": "OAUTHBEARER",
                   "bearer.auth.issuer.endpoint.url": idp.token_endpoint, "bearer.auth.client.id": "registry-app",
                   "bearer.auth.client.secret": SECRET_PASSWORD, "bearer.auth.scope": "schema_registry",
                   "bearer.auth.logical.cluster": "lsrc-9", **FAST}
        client = RegistryClient(options)
        assert client.register("s", Schema('"int"')) == 1
        assert RegistryClient(options).versions("s") == [1]  # another client of the process: the same token
        assert idp.tokens_issued == 1 and idp.issued[0].scope == "schema_registry"
        assert {r.principal for r in server.requests} == {"registry-app"}
        assert server.requests[-1].headers["target-sr-cluster"] == "lsrc-9"
        assert_secret_free(repr(client), pickle.dumps(client))

        forget_shared_tokens()
        wrong = RegistryClient({**options, "bearer.auth.client.secret": SECRET_PASSWORD + "x"})
        with pytest.raises(RegistryAuthError) as caught:
            wrong.subjects()
        message = str(caught.value)
        assert "no token for the schema registry" in message and "invalid_client" in message
        assert "'registry-app'" in message and idp.token_endpoint in message
        assert_secret_free(message, pickle.dumps(caught.value))
    forget_shared_tokens()


def test_https_with_a_ca_file(certs):
    with SchemaRegistryServer(certs=certs) as server:
        client = RegistryClient({"url": server.url, "ssl.ca.location": str(certs.ca_cert), **FAST})
        assert client.register("s", Schema('"int"')) == 1
        untrusting = RegistryClient({"url": server.url, "ssl.ca.location": str(certs.other_ca_cert), **FAST})
        with pytest.raises(RegistryTlsError, match="ssl.ca.location") as caught:
            untrusting.subjects()
        assert "certificate" in str(caught.value)
        system_cas = RegistryClient({"url": server.url, **FAST})  # the test CA is not a system CA
        with pytest.raises(RegistryTlsError):
            system_cas.subjects()
        by_name = server.url.replace("127.0.0.1", "localhost")
        assert RegistryClient({"url": by_name, "ssl.ca.location": str(certs.ca_cert), **FAST}).versions("s") == [1]
        java_name = RegistryClient({"url": server.url, "ssl.truststore.location": str(certs.ca_cert), **FAST})
        assert java_name.versions("s") == [1]


def test_host_name_checks_and_turning_them_off(certs):
    with SchemaRegistryServer(certs=certs, keystore=certs.wrong_host_keystore) as server:
        checked = RegistryClient({"url": server.url, "ssl.ca.location": str(certs.ca_cert), **FAST})
        with pytest.raises(RegistryTlsError, match="(?i)ip address|host"):
            checked.subjects()
        unchecked = RegistryClient({"url": server.url, "ssl.ca.location": str(certs.ca_cert),
                                    "ssl.endpoint.identification.algorithm": "", **FAST})
        assert unchecked.subjects() == []


def test_https_with_a_client_certificate(certs):
    with SchemaRegistryServer(certs=certs, client_certs=True) as server:
        base = {"url": server.url, "ssl.ca.location": str(certs.ca_cert), **FAST}
        separate = RegistryClient({**base, "ssl.certificate.location": str(certs.client_cert),
                                   "ssl.key.location": str(certs.client_key)})
        assert separate.subjects() == []
        bundled = RegistryClient({**base, "ssl.certificate.location": str(certs.client_keystore)})
        assert bundled.subjects() == []
        java_name = RegistryClient({**base, "ssl.keystore.location": str(certs.client_keystore)})
        assert java_name.subjects() == []
        encrypted = RegistryClient({**base, "ssl.certificate.location": str(certs.client_cert),
                                    "ssl.key.location": str(certs.client_key_encrypted),
                                    "ssl.key.password": certs.client_key_password})
        assert encrypted.subjects() == []
        with pytest.raises(RegistryConfigError, match="ssl.key.password"):
            RegistryClient({**base, "ssl.certificate.location": str(certs.client_cert),
                            "ssl.key.location": str(certs.client_key_encrypted)})
        # TLS 1.3: the registry checks the certificate after the client's handshake; the client sees its alert
        # (not retried) or, depending on timing, the closed connection (retried like a restarting registry)
        without = RegistryClient({**base, "max.retries": "1"})
        with pytest.raises((RegistryTlsError, RegistryUnreachableError), match="client certificate"):
            without.subjects()
