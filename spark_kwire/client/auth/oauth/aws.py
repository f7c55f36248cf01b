"""AWS MSK IAM over SASL/OAUTHBEARER: tokens signed by ``aws-msk-iam-sasl-signer-python`` (``spark-kwire[aws]``).

What Java and Databricks users write is accepted as is: ``sasl.mechanism=AWS_MSK_IAM`` with
``sasl.jaas.config=software.amazon.msk.auth.iam.IAMLoginModule required;`` (any ``kafkashaded.`` /
``shadedmskiam.`` prefix) and ``sasl.client.callback.handler.class=...IAMClientCallbackHandler``; or
``sasl.mechanism=OAUTHBEARER`` with ``sasl.login.callback.handler.class=...IAMOAuthBearerLoginCallbackHandler``.
kwire speaks OAUTHBEARER to the brokers with a token signed for ``kafka-cluster:Connect``, which MSK accepts on
its IAM listeners (port 9098, or 9198 for public access).

Credentials: botocore's default chain (environment, profile, container or instance role), or the JAAS options
``awsProfileName="..."`` or ``awsRoleArn="..."`` (with optional ``awsRoleSessionName``); ``awsDebugCreds=true``
logs the caller identity. The region: ``kwire.aws.region``, else the broker host name
(``b-1.cluster.abc.c2.kafka.us-east-1.amazonaws.com``), else ``AWS_REGION`` / ``AWS_DEFAULT_REGION``.
"""

from __future__ import annotations

import os
import re
from typing import Sequence

from spark_kwire.client.errors import ConfigError
from spark_kwire.client.auth.oauth import TokenError, TokenSource
from spark_kwire.client.auth.oauth.provider import CallableTokenSource
from spark_kwire.client.settings.logins import AwsMskIam

__all__ = ["msk_iam_token_source", "region_from_hosts"]
_MSK_HOST = re.compile(r"\.kafka(?:-serverless)?\.([a-z]{2}(?:-[a-z]+)+-\d+)\.amazonaws\.com(?:\.cn)?$")


def region_from_hosts(hosts: Sequence[str]) -> str | None:
    """The AWS region in an MSK broker host name, if any."""
    for host in hosts:
        match = _MSK_HOST.search(host.lower())
        if match:
            return match.group(1)
    return None


def _signer():
    try:
        from aws_msk_iam_sasl_signer import MSKAuthTokenProvider
    except ImportError:
        raise TokenError("AWS MSK IAM needs the package aws-msk-iam-sasl-signer-python: "
                         "pip install 'spark-kwire[aws]' (on the driver and the executors)",
                         source="AWS MSK IAM") from None
    return MSKAuthTokenProvider


def msk_iam_token_source(settings: AwsMskIam) -> TokenSource:
    """A :class:`TokenSource` signing MSK IAM tokens; raises :class:`ConfigError` for a missing region."""
    region = (settings.region or "").strip() or region_from_hosts(settings.hosts) or os.environ.get("AWS_REGION") \
        or os.environ.get("AWS_DEFAULT_REGION")
    if not region:
        raise ConfigError("kwire.aws.region", None,
                          reason="AWS MSK IAM needs the cluster's region: set kafka.kwire.aws.region (e.g. "
                                 "us-east-1) or AWS_REGION, or use the MSK broker host names in bootstrap.servers")
    profile, role_arn, session_name = settings.profile, settings.role_arn, settings.role_session_name
    debug = settings.debug_credentials

    def sign() -> tuple[str, float]:
        provider = _signer()
        if role_arn:
            args = (region, role_arn) + ((session_name,) if session_name else ())
            token, expiry_ms = provider.generate_auth_token_from_role_arn(*args)
        elif profile:
            token, expiry_ms = provider.generate_auth_token_from_profile(region, profile)
        else:
            token, expiry_ms = provider.generate_auth_token(region, aws_debug_creds=debug)
        return token, expiry_ms / 1000.0

    identity = f"role {role_arn}" if role_arn else f"profile {profile}" if profile else "default credentials"
    source = CallableTokenSource(f"aws_msk_iam:{region}:{role_arn or profile or ''}", option="sasl.mechanism",
                                 label=f"AWS MSK IAM signer ({region}, {identity})", func=_wrap_errors(sign, region))
    return source


def _wrap_errors(sign, region: str):
    def call() -> tuple[str, float]:
        try:
            return sign()
        except TokenError:
            raise
        except Exception as exc:  # botocore's NoCredentialsError, ClientError of STS...
            raise TokenError(f"AWS MSK IAM: signing a token for region {region} failed: {type(exc).__name__}: {exc}",
                             source="AWS MSK IAM") from None
    return call

