"""AWS MSK IAM and Microsoft Entra ID (Event Hubs) tokens.

Offline, against the libraries themselves: the MSK token kwire sends is the signer's presigned
``kafka-cluster:Connect`` URL for the right region and credentials; the Entra scope comes from the Event Hubs
host. End to end, through the same code paths, against the local OAUTHBEARER broker: the MSK signer's function
replaced by one returning locally valid JWTs (the broker cannot check AWS signatures), and azure-identity's own
``DefaultAzureCredential`` asking the test identity provider (over https) for the token.
"""

from __future__ import annotations

import base64
import sys
import time
import urllib.parse
import uuid

import pyarrow as pa
import pytest

from spark_kwire.client.admin.admin import Admin
from spark_kwire.client.consumer.fetcher import fetch_range
from spark_kwire.client import ClientConfig, ConfigError, KafkaClient, Producer
from spark_kwire.client.auth.oauth import TokenError
from spark_kwire.client.auth.oauth.azure import event_hubs_scope, reset_credential
from spark_kwire.client.auth.sasl.oauthbearer import OAuthBearerMechanism
from tests.client.auth.oauth_fixtures import (CLIENT_ID, CLIENT_SECRET, certs, fresh_tokens, idp,  # noqa: F401
                                         oauth_kafka, providers)

MSK_HOST = "b-1.demo.abc123.c2.kafka.eu-west-1.amazonaws.com:9098"
IAM_JAAS = "shadedmskiam.software.amazon.msk.auth.iam.IAMLoginModule required;"
IAM_CLIENT_HANDLER = "shadedmskiam.software.amazon.msk.auth.iam.IAMClientCallbackHandler"


def _msk_options(bootstrap: str = MSK_HOST, **extra) -> dict:
    """What Databricks' and AWS's documentation tell Spark users to write (without the kafka. prefix)."""
    return {"bootstrap.servers": bootstrap, "security.protocol": "SASL_SSL", "sasl.mechanism": "AWS_MSK_IAM",
            "sasl.jaas.config": IAM_JAAS, "sasl.client.callback.handler.class": IAM_CLIENT_HANDLER, **extra}


@pytest.fixture
def fake_aws_credentials(monkeypatch, tmp_path):
    """Static credentials through botocore's environment provider; no profile files, no instance metadata."""
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ROLE_ARN",
                 "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDKWIRETEST0000001")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "kwire/secret/access/key/for/tests/only00")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def _decode_msk_token(token: str) -> urllib.parse.SplitResult:
    url = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode("utf-8")
    return urllib.parse.urlsplit(url)


def _mechanism(opts: dict) -> OAuthBearerMechanism:
    return OAuthBearerMechanism.from_login(ClientConfig.from_kafka_options(opts).sasl)


# -- AWS MSK IAM, offline ----------------------------------------------------------------------------------------

def test_msk_token_is_the_signers_presigned_connect_url(fake_aws_credentials):
    from aws_msk_iam_sasl_signer import MSKAuthTokenProvider

    mechanism = _mechanism(_msk_options())
    assert mechanism.name == "OAUTHBEARER" and mechanism.label == "AWS_MSK_IAM"
    token = mechanism.shared_token().get()
    ours = _decode_msk_token(token.value.reveal())
    theirs = _decode_msk_token(MSKAuthTokenProvider.generate_auth_token("eu-west-1")[0])
    for url in (ours, theirs):
        query = dict(urllib.parse.parse_qsl(url.query))
        assert (url.scheme, url.netloc, url.path) == ("https", "kafka.eu-west-1.amazonaws.com", "/")
        assert query["Action"] == "kafka-cluster:Connect"
        assert query["X-Amz-Algorithm"] == "AWS4-HMAC-SHA256" and query["X-Amz-Expires"] == "900"
        key_id, day, region, service, kind = query["X-Amz-Credential"].split("/")
        assert (key_id, region, service, kind) == ("AKIDKWIRETEST0000001", "eu-west-1", "kafka-cluster", "aws4_request")
        assert len(query["X-Amz-Signature"]) == 64 and query["User-Agent"].startswith("aws-msk-iam-sasl-signer-python/")
    assert sorted(dict(urllib.parse.parse_qsl(ours.query))) == sorted(dict(urllib.parse.parse_qsl(theirs.query)))
    assert 850 < token.expires_at - time.time() <= 900
    assert "kwire/secret" not in repr(token) and "kwire/secret" not in repr(mechanism)


def test_msk_region_from_option_host_or_environment(fake_aws_credentials, monkeypatch):
    def region(opts):
        token = _mechanism(opts).shared_token().get()
        return dict(urllib.parse.parse_qsl(_decode_msk_token(token.value.reveal()).query))["X-Amz-Credential"].split("/")[2]

    assert region(_msk_options()) == "eu-west-1"
    assert region(_msk_options(**{"kwire.aws.region": "ap-southeast-2"})) == "ap-southeast-2"
    with pytest.raises(ConfigError, match=r"kwire.aws.region.*AWS_REGION"):
        _mechanism(_msk_options("broker.internal:9098"))
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-west-2")
    assert region(_msk_options("broker.internal:9098")) == "us-west-2"


def test_msk_options_errors_and_missing_extra(fake_aws_credentials, monkeypatch):
    with pytest.raises(ConfigError, match="awsStsRegion"):
        _mechanism(_msk_options(**{"sasl.jaas.config": IAM_JAAS[:-1] + ' awsStsRegion="us-east-1";'}))
    with pytest.raises(ConfigError, match="either awsProfileName or awsRoleArn"):
        _mechanism(_msk_options(**{"sasl.jaas.config": IAM_JAAS[:-1] + ' awsProfileName="p" awsRoleArn="arn:x";'}))
    with pytest.raises(ConfigError, match="IAMLoginModule, not .*ScramLoginModule"):
        _mechanism(_msk_options(**{"sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
                                                       "required;"}))
    monkeypatch.setitem(sys.modules, "aws_msk_iam_sasl_signer", None)
    with pytest.raises(TokenError, match=r"pip install 'spark-kwire\[aws\]'"):
        _mechanism(_msk_options()).shared_token().get()


# -- AWS MSK IAM, end to end ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("form", ["AWS_MSK_IAM", "OAUTHBEARER"])
def test_msk_iam_end_to_end_through_the_signer_path(oauth_kafka, idp, monkeypatch, form):
    from aws_msk_iam_sasl_signer import MSKAuthTokenProvider

    regions = []

    def sign(region, aws_debug_creds=False):  # stands in for AWS: the local broker checks JWTs, not SigV4
        regions.append(region)
        return idp.mint("arn:aws:sts::123456789012:assumed-role/etl/kwire", lifetime_s=900), \
            (time.time() + 900) * 1000

    monkeypatch.setattr(MSKAuthTokenProvider, "generate_auth_token", sign)
    opts = _msk_options(oauth_kafka.bootstrap("OAUTH"), **{"security.protocol": "SASL_PLAINTEXT",
                                                           "kwire.aws.region": "us-east-1"})
    if form == "OAUTHBEARER":  # aws-msk-iam-auth 2.x's OAUTHBEARER form
        opts.update({"sasl.mechanism": "OAUTHBEARER", "sasl.jaas.config": "org.apache.kafka.common.security."
                     "oauthbearer.OAuthBearerLoginModule required;",
                     "sasl.login.callback.handler.class": "software.amazon.msk.auth.iam.IAMOAuthBearerLoginCallbackHandler",
                     "sasl.client.callback.handler.class": "software.amazon.msk.auth.iam.IAMOAuthBearerLoginCallbackHandler"})
    with KafkaClient(opts) as client:
        topic = f"msk-{uuid.uuid4().hex[:8]}"
        Admin(client).create_topics([(topic, 1, 1)])
        with Producer(client) as producer:
            producer.send_batch(topic, 0, pa.array([b"a", b"b"], pa.binary()))
            producer.flush()
        assert sum(b.record_count for b in fetch_range(client, topic, 0, 0, 2)) == 2
        assert client.any_connection().sasl_session.principal.endswith("role/etl/kwire")
    assert regions == ["us-east-1"]


# -- Microsoft Entra ID --------------------------------------------------------------------------------------------

def test_event_hubs_scope_from_the_bootstrap_host():
    assert event_hubs_scope(["mynamespace.servicebus.windows.net"]) == \
        "https://mynamespace.servicebus.windows.net/.default"
    assert event_hubs_scope(["ns-2.servicebus.chinacloudapi.cn"]) == "https://ns-2.servicebus.chinacloudapi.cn/.default"
    assert event_hubs_scope(["broker.internal", "example.com"]) is None
    opts = {"bootstrap.servers": "mynamespace.servicebus.windows.net:9093", "security.protocol": "SASL_SSL",
            "sasl.mechanism": "OAUTHBEARER", "sasl.oauthbearer.method": "azure"}
    assert _mechanism(opts).source.description == "Entra ID token for https://mynamespace.servicebus.windows.net/.default"
    with pytest.raises(ConfigError, match="sasl.oauthbearer.scope"):
        _mechanism({**opts, "bootstrap.servers": "broker.internal:9093"})


def test_entra_without_azure_identity_names_the_extra(monkeypatch):
    reset_credential()
    monkeypatch.setitem(sys.modules, "azure.identity", None)
    opts = {"bootstrap.servers": "mynamespace.servicebus.windows.net:9093", "security.protocol": "SASL_SSL",
            "sasl.mechanism": "OAUTHBEARER", "sasl.oauthbearer.method": "azure"}
    with pytest.raises(TokenError, match=r"pip install 'spark-kwire\[azure\]'"):
        _mechanism(opts).shared_token().get()


def test_entra_end_to_end_through_azure_identity(oauth_kafka, providers, certs, monkeypatch):
    """DefaultAzureCredential (its EnvironmentCredential, i.e. MSAL's client-credentials flow) gets the token from
    the https test provider, as it would from login.microsoftonline.com; the broker validates it."""
    _, tls_idp = providers
    monkeypatch.setenv("AZURE_CLIENT_ID", CLIENT_ID)
    monkeypatch.setenv("AZURE_CLIENT_SECRET", CLIENT_SECRET)
    monkeypatch.setenv("AZURE_TENANT_ID", "kwire-tenant")
    monkeypatch.setenv("AZURE_AUTHORITY_HOST", tls_idp.url)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(certs.ca_cert))
    reset_credential()
    scope = "https://kwire-ns.servicebus.windows.net/.default"
    before = tls_idp.tokens_issued
    try:
        opts = {"bootstrap.servers": oauth_kafka.bootstrap("OAUTH"), "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "OAUTHBEARER", "sasl.oauthbearer.method": "azure", "sasl.oauthbearer.scope": scope}
        with KafkaClient(opts) as client:
            topic = f"entra-{uuid.uuid4().hex[:8]}"
            Admin(client).create_topics([(topic, 1, 1)])
            assert topic in client.list_topics()
            assert client.any_connection().sasl_session.principal == CLIENT_ID
    finally:
        reset_credential()
    assert tls_idp.tokens_issued == before + 1
    issued = tls_idp.issued[-1]
    assert issued.scope == scope and issued.auth == "post"
