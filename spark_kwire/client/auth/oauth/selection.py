"""The token source a login's settings name (:data:`~spark_kwire.client.settings.logins.TokenSourceSettings`, chosen
from the options by :mod:`spark_kwire.client.settings.oauth_options`): OIDC client credentials or a token file
(:mod:`.oidc`), a Python callable (:mod:`.provider`), AWS MSK IAM (:mod:`.aws`), Entra ID (:mod:`.azure`) or an
unsecured token (:mod:`.unsecured`). What needs the process's environment (files, modules, the AWS region) is
checked here, where the client is built."""

from __future__ import annotations

import os

from spark_kwire.client.errors import ConfigError
from spark_kwire.client.auth.oauth import TokenSource
from spark_kwire.client.settings.logins import AwsMskIam, AzureEntra, OidcClientCredentials, OidcTokenFile, \
    PythonTokenProvider, TokenSourceSettings, UnsecuredToken

__all__ = ["token_source"]


def token_source(settings: TokenSourceSettings) -> TokenSource:
    """The :class:`TokenSource` of ``settings``; raises :class:`ConfigError` for what the environment lacks."""
    if isinstance(settings, OidcClientCredentials):
        from spark_kwire.client.auth.oauth.oidc import ClientCredentialsSource
        from spark_kwire.client.auth.tls import build_ssl_context

        tls = settings.tls
        return ClientCredentialsSource(
            settings.endpoint, settings.client_id, settings.client_secret, settings.scope,
            ssl_context=build_ssl_context(tls, system_cas_too=True) if tls is not None else None,
            attempt_timeout_s=settings.attempt_timeout_ms / 1000.0, retry_backoff_ms=settings.retry_backoff_ms,
            retry_backoff_max_ms=settings.retry_backoff_max_ms, urlencode_header=settings.urlencode_header,
            principal_claim=settings.principal_claim, trust_key=tls.fingerprint() if tls is not None else ())
    if isinstance(settings, OidcTokenFile):
        from spark_kwire.client.auth.oauth.oidc import FileTokenSource

        if not os.path.isfile(settings.path):
            raise ConfigError("sasl.oauthbearer.token.endpoint.url", settings.endpoint, reason="no such file")
        return FileTokenSource(settings.path, settings.principal_claim)
    if isinstance(settings, PythonTokenProvider):
        from spark_kwire.client.auth.oauth.provider import CallableTokenSource

        return CallableTokenSource(settings.reference, settings.option, settings.config)
    if isinstance(settings, AwsMskIam):
        from spark_kwire.client.auth.oauth.aws import msk_iam_token_source

        return msk_iam_token_source(settings)
    if isinstance(settings, AzureEntra):
        from spark_kwire.client.auth.oauth.azure import entra_token_source

        return entra_token_source(settings.scope, settings.hosts)
    if isinstance(settings, UnsecuredToken):
        from spark_kwire.client.auth.oauth.unsecured import UnsecuredTokenSource

        return UnsecuredTokenSource(settings)
    raise TypeError(f"not a token source's settings: {type(settings).__name__}")
