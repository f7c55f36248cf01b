"""The ``Authorization`` (and Confluent Cloud) headers of registry requests, and how to describe their source in
errors without showing a secret.

OAuth client credentials reuse kwire's OIDC token source (``spark_kwire.client.auth.oauth``): the client id and secret
go to the token endpoint in HTTP Basic, the token is shared by every registry client of the process with the same
credential and refreshed with Kafka's window rules.
"""

from __future__ import annotations

import base64

from spark_kwire.client.settings.secret import is_sensitive_key
from spark_kwire.client.registry.config import RegistryConfig
from spark_kwire.client.registry.errors import RegistryAuthError, RegistryConfigError

__all__ = ["Credentials", "credentials_for", "registry_ssl_context"]


def registry_ssl_context(config: RegistryConfig, *, system_cas_too: bool = False):
    """The client ``ssl.SSLContext`` of the registry's ``ssl.*`` options (kwire's TLS module reads them)."""
    from spark_kwire.client.errors import ConfigError
    from spark_kwire.client.auth.tls import build_ssl_context
    from spark_kwire.client.settings.tls_options import tls_of_mapping

    options = config.ssl_options
    if "ssl.certificate.location" in options and "ssl.key.location" not in options:
        options["ssl.keystore.location"] = options.pop("ssl.certificate.location")  # one PEM with the key
    try:
        return build_ssl_context(tls_of_mapping(options), system_cas_too=system_cas_too)
    except ConfigError as exc:
        detail = str(exc).split(f"for Kafka option {exc.key!r}", 1)[-1].lstrip(": ")
        raise RegistryConfigError(exc.key, exc.value, reason=detail or None,
                                  show_value=not is_sensitive_key(exc.key)) from None


class Credentials:
    """No credentials: requests go without an ``Authorization`` header."""

    def headers(self, url_index: int) -> dict[str, str]:
        return {}

    def describe(self) -> str:
        return ("no credentials (set basic.auth.user.info, user:password@ in the URL, or "
                "bearer.auth.credentials.source)")


class _Basic(Credentials):
    def __init__(self, config: RegistryConfig) -> None:
        self._source = config.basic_source
        self._infos = ([config.basic_user_info] * len(config.urls) if config.basic_source == "USER_INFO"
                       else list(config.url_user_infos))

    def headers(self, url_index: int) -> dict[str, str]:
        encoded = base64.b64encode(self._infos[url_index].reveal().encode("utf-8")).decode("ascii")
        return {"Authorization": f"Basic {encoded}"}

    def describe(self) -> str:
        users = sorted({info.reveal().partition(":")[0] for info in self._infos})
        where = "basic.auth.user.info" if self._source == "USER_INFO" else "the URL's user info"
        return f"HTTP Basic credentials from {where} (basic.auth.credentials.source={self._source}, user " \
               f"{', '.join(repr(u) for u in users)})"


class _Bearer(Credentials):
    def __init__(self, config: RegistryConfig) -> None:
        self._config = config

    def token(self) -> str:
        return self._config.bearer_token.reveal()

    def headers(self, url_index: int) -> dict[str, str]:
        out = {"Authorization": f"Bearer {self.token()}"}
        if self._config.logical_cluster:
            out["target-sr-cluster"] = self._config.logical_cluster
        if self._config.identity_pool_id:
            out["Confluent-Identity-Pool-Id"] = self._config.identity_pool_id
        return out

    def describe(self) -> str:
        return "a static bearer token from bearer.auth.token (bearer.auth.credentials.source=STATIC_TOKEN)"


class _OAuth(_Bearer):
    def __init__(self, config: RegistryConfig) -> None:
        super().__init__(config)
        from spark_kwire.client.auth.oauth.oidc import ClientCredentialsSource
        from spark_kwire.client.auth.oauth.refresh import RefreshPolicy, shared_token

        https = config.issuer_endpoint.lower().startswith("https:")
        source = ClientCredentialsSource(
            config.issuer_endpoint, config.client_id, config.client_secret, config.scope,
            ssl_context=registry_ssl_context(config, system_cas_too=True) if https else None,
            attempt_timeout_s=config.timeout_s, retry_backoff_ms=min(config.retries_wait_ms, 1000),
            retry_backoff_max_ms=min(config.total_timeout_ms, 10_000))
        self._source = source
        self._shared = shared_token(("schema-registry",) + source.cache_key(), source.fetch, RefreshPolicy(),
                                    f"schema registry, {source.description}")

    def token(self) -> str:
        from spark_kwire.client.auth.oauth import TokenError

        try:
            return self._shared.get().value.reveal()
        except TokenError as exc:
            raise RegistryAuthError(f"no token for the schema registry: {exc}") from None

    def describe(self) -> str:
        return (f"OAuth client credentials of client {self._config.client_id!r} from "
                f"{self._source.description} (bearer.auth.credentials.source=OAUTHBEARER)")


def credentials_for(config: RegistryConfig) -> Credentials:
    if config.basic_source:
        return _Basic(config)
    if config.bearer_source == "STATIC_TOKEN":
        return _Bearer(config)
    if config.bearer_source == "OAUTHBEARER":
        return _OAuth(config)
    return Credentials()
