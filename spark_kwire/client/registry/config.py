"""The schema-registry client's configuration, from options named as confluent-kafka's ``SchemaRegistryClient``
names them (the data source passes its ``schema.registry.<key>`` options with the prefix removed).

* ``url``: one or more base URLs, comma-separated, tried in order (a dead one is skipped). A URL may carry
  ``user:password@`` (with ``basic.auth.credentials.source=URL``, or when nothing else gives credentials).
* ``basic.auth.user.info`` (``user:password``) and ``basic.auth.credentials.source`` (``USER_INFO``, ``URL``).
* ``bearer.auth.credentials.source``: ``STATIC_TOKEN`` with ``bearer.auth.token``; or ``OAUTHBEARER`` with
  ``bearer.auth.issuer.endpoint.url``, ``bearer.auth.client.id``, ``bearer.auth.client.secret`` and optionally
  ``bearer.auth.scope`` (OAuth 2 client credentials). ``bearer.auth.logical.cluster`` and
  ``bearer.auth.identity.pool.id`` (Confluent Cloud) are sent as the ``target-sr-cluster`` and
  ``Confluent-Identity-Pool-Id`` headers.
* TLS (PEM files): ``ssl.ca.location``, ``ssl.certificate.location`` (may hold the key too),
  ``ssl.key.location``, ``ssl.key.password``, ``ssl.endpoint.identification.algorithm`` (empty: no host-name
  check); Java's ``ssl.truststore.location`` / ``ssl.keystore.location`` when they are PEM files.
* ``timeout`` (seconds, default 10): the longest wait for a connection or for each read of one HTTP request;
  ``max.retries`` (3), ``retries.wait.ms`` (1000), ``retries.max.wait.ms`` (20000): rounds over every URL after
  the first, with full-jitter exponential backoff; ``total.timeout.ms`` (kwire's own, default 60000) bounds a whole
  call, retries included: no call waits longer.
* ``cache.capacity`` (1000): schemas kept per process; ``cache.latest.ttl.sec``: how long the latest version of a
  subject is remembered (unset: asked every time).

Unknown keys are refused with the closest known one; secrets are
:class:`~spark_kwire.client.settings.secret.Secret`.
"""

from __future__ import annotations

import difflib
import urllib.parse
from dataclasses import dataclass
from typing import Any, Mapping

from spark_kwire.client.settings.secret import Secret, is_sensitive_key, reveal
from spark_kwire.client.registry.errors import RegistryConfigError

__all__ = ["RegistryConfig", "KNOWN_OPTIONS"]

_SSL_KEYS = ("ssl.ca.location", "ssl.certificate.location", "ssl.key.location", "ssl.key.password",
             "ssl.endpoint.identification.algorithm", "ssl.truststore.location", "ssl.keystore.location")
KNOWN_OPTIONS = (
    "url", "basic.auth.user.info", "basic.auth.credentials.source", "bearer.auth.credentials.source",
    "bearer.auth.token", "bearer.auth.issuer.endpoint.url", "bearer.auth.client.id", "bearer.auth.client.secret",
    "bearer.auth.scope", "bearer.auth.logical.cluster", "bearer.auth.identity.pool.id", *_SSL_KEYS, "timeout",
    "total.timeout.ms", "max.retries", "retries.wait.ms", "retries.max.wait.ms", "cache.capacity",
    "cache.latest.ttl.sec",
)
_BASIC_SOURCES = ("USER_INFO", "URL")
_BEARER_SOURCES = ("STATIC_TOKEN", "OAUTHBEARER")
_NOT_SUPPORTED = {
    "proxy": "the client uses the HTTP_PROXY / HTTPS_PROXY / NO_PROXY environment variables",
}


def _text(key: str, value: Any) -> str:
    text = reveal(value).strip()
    if not text:
        raise RegistryConfigError(key, value, reason="must not be empty", show_value=not is_sensitive_key(key))
    return text


def _number(key: str, value: Any, kind, minimum) -> Any:
    if isinstance(value, bool):
        raise RegistryConfigError(key, value, f"a number >= {minimum}")
    try:
        number = kind(value) if isinstance(value, (int, float)) else kind(str(value).strip())
    except ValueError:
        raise RegistryConfigError(key, value, f"a {'whole ' if kind is int else ''}number >= {minimum}") from None
    if number < minimum:
        raise RegistryConfigError(key, value, f"a number >= {minimum}")
    return number


def _split_urls(value: Any) -> tuple[tuple[str, ...], tuple[Secret | None, ...]]:
    raw = reveal(value) if not isinstance(value, (list, tuple)) else ",".join(map(str, value))
    urls, user_infos = [], []
    for item in raw.split(","):
        item = item.strip().rstrip("/")
        if not item:
            continue
        parts = urllib.parse.urlsplit(item)
        if "@" not in item:
            shown = item
        elif parts.hostname:
            shown = urllib.parse.urlunsplit((parts.scheme, parts.hostname, parts.path, "", ""))
        else:
            shown = "(a URL with user info)"
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise RegistryConfigError("url", shown,
                                      "comma-separated http:// or https:// URLs, e.g. http://registry:8081")
        try:
            port = parts.port
        except ValueError:
            raise RegistryConfigError("url", shown, reason="the port is not a number") from None
        if parts.query or parts.fragment:
            raise RegistryConfigError("url", shown, reason="a registry URL has no query string or fragment")
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        netloc = f"{host}:{port}" if port else host
        urls.append(urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", "")))
        if parts.username is not None:
            user = urllib.parse.unquote(parts.username)
            password = urllib.parse.unquote(parts.password or "")
            user_infos.append(Secret(f"{user}:{password}"))
        else:
            user_infos.append(None)
    if not urls:
        raise RegistryConfigError("url", raw.strip(), "comma-separated http:// or https:// URLs, e.g. http://registry:8081")
    return tuple(urls), tuple(user_infos)


def _check_user_info(key: str, value: Secret) -> Secret:
    user, sep, _ = value.reveal().partition(":")
    if not sep or not user:
        raise RegistryConfigError(key, show_value=False, reason="must be user:password")
    return value


@dataclass(frozen=True)
class RegistryConfig:
    """Everything the registry client needs; immutable, hashable and picklable (secrets stay masked)."""

    urls: tuple[str, ...]
    url_user_infos: tuple[Secret | None, ...] = ()
    basic_source: str | None = None  # USER_INFO, URL or None (no basic auth)
    basic_user_info: Secret | None = None
    bearer_source: str | None = None  # STATIC_TOKEN, OAUTHBEARER or None
    bearer_token: Secret | None = None
    issuer_endpoint: str | None = None
    client_id: str | None = None
    client_secret: Secret | None = None
    scope: str | None = None
    logical_cluster: str | None = None
    identity_pool_id: str | None = None
    ssl: tuple[tuple[str, Any], ...] = ()  # ssl.* options, values str or Secret
    timeout_s: float = 10.0
    total_timeout_ms: int = 60_000
    max_retries: int = 3
    retries_wait_ms: int = 1_000
    retries_max_wait_ms: int = 20_000
    cache_capacity: int = 1_000
    cache_latest_ttl_s: float | None = None

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> "RegistryConfig":
        """Parse the options (see the module docstring); raises :class:`RegistryConfigError` naming the key."""
        opts = {str(k).strip(): v for k, v in dict(options or {}).items() if v is not None}
        for key in opts:
            if key not in KNOWN_OPTIONS:
                raise _unknown(key)
        if "url" not in opts:
            raise RegistryConfigError("url", show_value=False, reason="is required: the schema registry's base "
                                                                      "URL(s), e.g. http://registry:8081")
        urls, url_user_infos = _split_urls(opts["url"])
        values: dict[str, Any] = {"urls": urls, "url_user_infos": url_user_infos}
        values.update(_basic(opts, url_user_infos))
        values.update(_bearer(opts))
        if values.get("basic_source") and values.get("bearer_source"):
            raise RegistryConfigError("bearer.auth.credentials.source", opts["bearer.auth.credentials.source"],
                                      reason="basic and bearer authentication are both configured; keep one")
        for key in ("bearer.auth.logical.cluster", "bearer.auth.identity.pool.id"):
            if key in opts and not values.get("bearer_source"):
                raise RegistryConfigError(key, opts[key], reason="is sent with bearer tokens only: set "
                                                                 "bearer.auth.credentials.source too")
        ssl = []
        for key in _SSL_KEYS:
            if key in opts:
                raw = opts[key]
                text = reveal(raw).strip() if key == "ssl.endpoint.identification.algorithm" else _text(key, raw)
                ssl.append((key, Secret(text) if is_sensitive_key(key) else text))
        values["ssl"] = tuple(ssl)
        if "timeout" in opts:
            values["timeout_s"] = _number("timeout", opts["timeout"], float, 0.001)
        for key, name in (("total.timeout.ms", "total_timeout_ms"), ("max.retries", "max_retries"),
                          ("retries.wait.ms", "retries_wait_ms"), ("retries.max.wait.ms", "retries_max_wait_ms")):
            if key in opts:
                values[name] = _number(key, opts[key], int, 1 if key == "total.timeout.ms" else 0)
        if "cache.capacity" in opts:
            values["cache_capacity"] = _number("cache.capacity", opts["cache.capacity"], int, 1)
        if "cache.latest.ttl.sec" in opts:
            values["cache_latest_ttl_s"] = _number("cache.latest.ttl.sec", opts["cache.latest.ttl.sec"], float, 0)
        config = cls(**values)
        if config.retries_max_wait_ms < config.retries_wait_ms:
            raise RegistryConfigError("retries.max.wait.ms", config.retries_max_wait_ms,
                                      reason=f"must be >= retries.wait.ms ({config.retries_wait_ms})")
        return config

    @property
    def ssl_options(self) -> dict[str, Any]:
        return dict(self.ssl)

    def __repr__(self) -> str:
        auth = self.basic_source and f"basic {self.basic_source}" or self.bearer_source and \
            f"bearer {self.bearer_source}" or "none"
        return f"RegistryConfig(urls={list(self.urls)!r}, auth={auth!r}, timeout_s={self.timeout_s})"


def _unknown(key: str) -> RegistryConfigError:
    if key in _NOT_SUPPORTED:
        return RegistryConfigError(key, show_value=False, reason=f"is not supported: {_NOT_SUPPORTED[key]}")
    if key.startswith("schema.registry."):
        return RegistryConfigError(key, show_value=False, reason=f"is unknown; the client takes the keys without "
                                                                 f"the prefix: {key.removeprefix('schema.registry.')!r}")
    close = difflib.get_close_matches(key, KNOWN_OPTIONS, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return RegistryConfigError(key, show_value=False, reason=f"is unknown; {hint}known options: "
                                                             f"{', '.join(KNOWN_OPTIONS)}")


def _basic(opts: dict, url_user_infos: tuple[Secret | None, ...]) -> dict[str, Any]:
    user_info = opts.get("basic.auth.user.info")
    in_url = any(url_user_infos)
    source_raw = opts.get("basic.auth.credentials.source")
    source = reveal(source_raw).strip().upper() if source_raw is not None else None
    if source is not None and source not in _BASIC_SOURCES:
        hint = " (SASL_INHERIT: the registry client does not read the Kafka SASL settings; use USER_INFO)" \
            if source == "SASL_INHERIT" else ""
        raise RegistryConfigError("basic.auth.credentials.source", source_raw, ", ".join(_BASIC_SOURCES),
                                  reason=f"unknown credentials source{hint}")
    if source is None:
        if user_info is not None and in_url:
            raise RegistryConfigError("basic.auth.user.info", show_value=False,
                                      reason="credentials are given twice: in the URL and in basic.auth.user.info; "
                                             "remove one")
        source = "USER_INFO" if user_info is not None else "URL" if in_url else None
    if source == "USER_INFO":
        if user_info is None:
            raise RegistryConfigError("basic.auth.user.info", show_value=False,
                                      reason="is required with basic.auth.credentials.source=USER_INFO (user:password)")
        if in_url:
            raise RegistryConfigError("url", show_value=False,
                                      reason="carries user info but basic.auth.credentials.source=USER_INFO takes "
                                             "credentials from basic.auth.user.info; remove one")
        return {"basic_source": source,
                "basic_user_info": _check_user_info("basic.auth.user.info", Secret(_text("basic.auth.user.info",
                                                                                         user_info)))}
    if source == "URL":
        if user_info is not None:
            raise RegistryConfigError("basic.auth.user.info", show_value=False,
                                      reason="is set but basic.auth.credentials.source=URL takes credentials from the "
                                             "URL; remove one")
        if not all(url_user_infos):
            raise RegistryConfigError("url", show_value=False,
                                      reason="basic.auth.credentials.source=URL needs user:password@ in every URL")
        for info in url_user_infos:
            _check_user_info("url", info)
        return {"basic_source": source}
    return {}


def _bearer(opts: dict) -> dict[str, Any]:
    source_raw = opts.get("bearer.auth.credentials.source")
    bearer_keys = [k for k in opts if k.startswith("bearer.auth.") and k != "bearer.auth.credentials.source"]
    if source_raw is None:
        if bearer_keys:
            raise RegistryConfigError(bearer_keys[0], show_value=False,
                                      reason="needs bearer.auth.credentials.source (STATIC_TOKEN or OAUTHBEARER)")
        return {}
    source = reveal(source_raw).strip().upper()
    if source not in _BEARER_SOURCES:
        raise RegistryConfigError("bearer.auth.credentials.source", source_raw, ", ".join(_BEARER_SOURCES),
                                  reason="unknown bearer credentials source")
    wanted = {"STATIC_TOKEN": ("bearer.auth.token",),
              "OAUTHBEARER": ("bearer.auth.issuer.endpoint.url", "bearer.auth.client.id",
                              "bearer.auth.client.secret")}[source]
    allowed = set(wanted) | {"bearer.auth.logical.cluster", "bearer.auth.identity.pool.id"}
    if source == "OAUTHBEARER":
        allowed.add("bearer.auth.scope")
    for key in bearer_keys:
        if key not in allowed:
            raise RegistryConfigError(key, show_value=False,
                                      reason=f"is not used with bearer.auth.credentials.source={source}")
    for key in wanted:
        if key not in opts:
            raise RegistryConfigError(key, show_value=False,
                                      reason=f"is required with bearer.auth.credentials.source={source}")
    out: dict[str, Any] = {"bearer_source": source}
    for key, name in (("bearer.auth.logical.cluster", "logical_cluster"),
                      ("bearer.auth.identity.pool.id", "identity_pool_id")):
        if key in opts:
            value = opts[key]
            out[name] = ",".join(map(str, value)) if isinstance(value, (list, tuple)) else _text(key, value)
    if source == "STATIC_TOKEN":
        out["bearer_token"] = Secret(_text("bearer.auth.token", opts["bearer.auth.token"]))
        return out
    endpoint = _text("bearer.auth.issuer.endpoint.url", opts["bearer.auth.issuer.endpoint.url"])
    parts = urllib.parse.urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RegistryConfigError("bearer.auth.issuer.endpoint.url", endpoint,
                                  "an http:// or https:// URL of the token endpoint")
    out.update(issuer_endpoint=endpoint, client_id=_text("bearer.auth.client.id", opts["bearer.auth.client.id"]),
               client_secret=Secret(_text("bearer.auth.client.secret", opts["bearer.auth.client.secret"])))
    if "bearer.auth.scope" in opts:
        out["scope"] = _text("bearer.auth.scope", opts["bearer.auth.scope"])
    return out
