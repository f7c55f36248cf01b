"""The OIDC client-credentials source from the options: endpoint, client id and secret, scope, TLS, timeouts."""

from __future__ import annotations

import hashlib
import os
import urllib.parse

from spark_kwire.client.config import ClientConfig, Secret, is_sensitive_key, reveal
from spark_kwire.client.errors import ConfigError
from spark_kwire.client.auth.jaas import JaasConfig
from spark_kwire.client.auth.oauth import TokenSource
from spark_kwire.client.auth.oauth.oidc import ClientCredentialsSource, FileTokenSource

__all__ = ["oidc_token_source"]

_ENDPOINT = "sasl.oauthbearer.token.endpoint.url"


def _get(config: ClientConfig, key: str) -> str | None:
    value = reveal(config.sasl.get(key))
    return value.strip() if value is not None and value.strip() else None


def _int(config: ClientConfig, key: str, default: int | None) -> int | None:
    raw = _get(config, key)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(key, raw, "a whole number of milliseconds") from None
    if value < 0:
        raise ConfigError(key, raw, "a whole number of milliseconds >= 0")
    return value


def _tls_for_endpoint(config: ClientConfig, jaas: JaasConfig | None):
    """SSL context for an https endpoint: the JAAS line's ssl.* options (as Java) or the client's, plus system CAs."""
    from spark_kwire.client.auth.tls import build_ssl_context

    jaas_ssl = {k: (Secret(v) if is_sensitive_key(k) else v) for k, v in (jaas.options.items() if jaas else ())
                if k.startswith("ssl.")}
    ssl_options = jaas_ssl or config.ssl
    context = build_ssl_context(config.replace(ssl=dict(ssl_options)), system_cas_too=True)
    trust_key = tuple(sorted((k, hashlib.sha256(reveal(v).encode()).hexdigest()) for k, v in ssl_options.items()))
    return context, trust_key


_RETRIEVERS = ("org.apache.kafka.common.security.oauthbearer.DefaultJwtRetriever",
               "org.apache.kafka.common.security.oauthbearer.ClientCredentialsJwtRetriever",
               "org.apache.kafka.common.security.oauthbearer.FileJwtRetriever")


def _check_grant(config: ClientConfig) -> None:
    """Kafka 4.1 also knows the JWT-bearer grant (KIP-1139); say so instead of silently using another one."""
    retriever = _get(config, "sasl.oauthbearer.jwt.retriever.class")
    if retriever and retriever.removeprefix("kafkashaded.") not in _RETRIEVERS:
        raise ConfigError("sasl.oauthbearer.jwt.retriever.class", retriever,
                          reason="spark-kwire retrieves tokens with the client-credentials grant or from a file "
                                 "(DefaultJwtRetriever, ClientCredentialsJwtRetriever, FileJwtRetriever); for other "
                                 "grants give a Python token provider in sasl.login.callback.handler.class")
    assertion = sorted(k for k in config.sasl if k.startswith("sasl.oauthbearer.assertion."))
    if assertion:
        raise ConfigError(assertion[0], Secret(""),
                          reason="the JWT-bearer grant (sasl.oauthbearer.assertion.*) is not supported by spark-kwire; "
                                 "use client credentials or a Python token provider")


def oidc_token_source(config: ClientConfig, jaas: JaasConfig | None, *, handler_given: bool) -> TokenSource:
    """A :class:`ClientCredentialsSource` (or :class:`FileTokenSource` for a ``file:`` URL) from the options."""
    _check_grant(config)
    endpoint = _get(config, _ENDPOINT)
    if endpoint is None:
        raise ConfigError(_ENDPOINT, None, reason="OIDC client credentials need the identity provider's token "
                                                  "endpoint, e.g. https://idp.example.com/oauth2/token")
    principal_claim = _get(config, "sasl.oauthbearer.sub.claim.name") or "sub"
    scheme = urllib.parse.urlsplit(endpoint).scheme.lower()
    if scheme == "file":
        path = urllib.parse.unquote(urllib.parse.urlsplit(endpoint).path)
        if not os.path.isfile(path):
            raise ConfigError(_ENDPOINT, endpoint, reason="no such file")
        return FileTokenSource(path, principal_claim)
    if scheme not in ("http", "https") or not urllib.parse.urlsplit(endpoint).hostname:
        raise ConfigError(_ENDPOINT, endpoint, "an http:// or https:// URL of the token endpoint, or file:/path")
    jaas_options = jaas.options if jaas is not None else {}

    client_id = _get(config, "sasl.oauthbearer.client.credentials.client.id") \
        or _get(config, "sasl.oauthbearer.client.id") or jaas_options.get("clientId")
    secret_text = _get(config, "sasl.oauthbearer.client.credentials.client.secret") \
        or _get(config, "sasl.oauthbearer.client.secret") or jaas_options.get("clientSecret")
    scope = _get(config, "sasl.oauthbearer.scope") or jaas_options.get("scope")
    if not client_id or not secret_text:
        missing = "client id" if not client_id else "client secret"
        raise ConfigError("sasl.jaas.config" if handler_given else "sasl.oauthbearer.client.credentials.client.id",
                          Secret(""), reason=f"OIDC client credentials need the {missing}: set clientId=\"...\" and "
                                             f"clientSecret=\"...\" in sasl.jaas.config (OAuthBearerLoginModule), or "
                                             f"sasl.oauthbearer.client.credentials.client.id and .client.secret")
    urlencode = (_get(config, "sasl.oauthbearer.header.urlencode") or "false").lower()
    if urlencode not in ("true", "false"):
        raise ConfigError("sasl.oauthbearer.header.urlencode", urlencode, "true, false")
    context, trust_key = _tls_for_endpoint(config, jaas) if scheme == "https" else (None, ())
    attempt_ms = config.request_timeout_ms
    for key in ("sasl.login.connect.timeout.ms", "sasl.login.read.timeout.ms"):
        value = _int(config, key, None)
        if value:
            attempt_ms = min(attempt_ms, value)
    return ClientCredentialsSource(
        endpoint, client_id.strip(), Secret(secret_text.strip()), scope.strip() if scope else None,
        ssl_context=context, attempt_timeout_s=attempt_ms / 1000.0,
        retry_backoff_ms=_int(config, "sasl.login.retry.backoff.ms", 100),
        retry_backoff_max_ms=_int(config, "sasl.login.retry.backoff.max.ms", 10_000),
        urlencode_header=urlencode == "true", principal_claim=principal_claim, trust_key=trust_key)
