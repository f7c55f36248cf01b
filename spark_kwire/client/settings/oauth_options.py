"""The OAUTHBEARER login (:class:`~.logins.OAuthBearerLogin`) from the options, read the way Java, Databricks and
librdkafka users write them. The token source, in order:

1. AWS MSK IAM: ``sasl.mechanism=AWS_MSK_IAM``, ``sasl.login.callback.handler.class=...IAMOAuthBearerLoginCallbackHandler``
   or ``sasl.oauthbearer.method=aws_msk_iam``; JAAS options ``awsProfileName``, ``awsRoleArn``,
   ``awsRoleSessionName``, ``awsDebugCreds``; the region ``kwire.aws.region``.
2. Entra ID through azure-identity: ``sasl.oauthbearer.method=azure`` (scope: ``sasl.oauthbearer.scope``).
3. A Python callable: ``sasl.login.callback.handler.class=package.module:function`` (called with
   ``sasl.oauthbearer.config``).
4. OIDC client credentials: ``sasl.login.callback.handler.class=`` Kafka's ``OAuthBearerLoginCallbackHandler``
   (also ``...oauthbearer.secured.OAuthBearerLoginCallbackHandler`` and ``kafkashaded.`` names), librdkafka's
   ``sasl.oauthbearer.method=oidc``, or simply a ``sasl.oauthbearer.token.endpoint.url`` (a ``file:`` URL reads the
   token from a file). The client id, secret and scope come from Kafka 4.1's
   ``sasl.oauthbearer.client.credentials.client.id`` / ``.client.secret`` and ``sasl.oauthbearer.scope`` (which
   win, as in Java), librdkafka's ``sasl.oauthbearer.client.id`` / ``.client.secret``, or ``clientId`` /
   ``clientSecret`` / ``scope`` in the ``OAuthBearerLoginModule`` JAAS line; TLS to an https endpoint from the JAAS
   line's ``ssl.*`` options (as Java) or the client's.
5. An unsecured token: ``unsecuredLoginStringClaim_sub="..."`` in the JAAS line.

SASL extensions: ``extension_<name>="value"`` in the JAAS line (Java), ``sasl.oauthbearer.extensions=a=1,b=2``
(librdkafka), ``unsecuredLoginExtension_<name>``. Refresh: ``sasl.login.refresh.*``.
"""

from __future__ import annotations

import importlib.util
import urllib.parse

from spark_kwire.client.errors import ConfigError
from spark_kwire.client.settings.jaas import JaasConfig
from spark_kwire.client.settings.logins import AwsMskIam, AzureEntra, OAuthBearerLogin, OidcClientCredentials, \
    OidcTokenFile, PythonTokenProvider, RefreshPolicy, TokenSourceSettings, UnsecuredToken, check_extensions
from spark_kwire.client.settings.secret import Secret, is_sensitive_key
from spark_kwire.client.settings.tls import TlsSettings

__all__ = ["oauth_login", "unsecured_token", "looks_like_python_reference", "JAVA_LOGIN_HANDLERS", "MSK_JAAS_OPTIONS"]

JAVA_LOGIN_HANDLERS = (
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
    "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler",
)
_MSK_LOGIN_HANDLER = "software.amazon.msk.auth.iam.IAMOAuthBearerLoginCallbackHandler"
_CLIENT_HANDLERS = (
    "org.apache.kafka.common.security.oauthbearer.internals.OAuthBearerSaslClientCallbackHandler",
    "software.amazon.msk.auth.iam.IAMClientCallbackHandler",
    _MSK_LOGIN_HANDLER,
)
MSK_JAAS_OPTIONS = ("awsProfileName", "awsRoleArn", "awsRoleSessionName", "awsDebugCreds")
_SHADING_PREFIXES = ("kafkashaded.", "shadedmskiam.")
_HANDLER = "sasl.login.callback.handler.class"
_ENDPOINT = "sasl.oauthbearer.token.endpoint.url"
_RETRIEVERS = ("org.apache.kafka.common.security.oauthbearer.DefaultJwtRetriever",
               "org.apache.kafka.common.security.oauthbearer.ClientCredentialsJwtRetriever",
               "org.apache.kafka.common.security.oauthbearer.FileJwtRetriever")


def _unshaded(name: str) -> str:
    for prefix in _SHADING_PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def looks_like_python_reference(value: str) -> bool:
    """``package.module:attribute`` is a Python reference; so is ``package.module.attribute`` when that module
    can be found here (otherwise a dotted name is taken for a Java class)."""
    module, sep, attr = value.partition(":")
    if sep:
        return bool(module.strip()) and bool(attr.strip())
    module, _, attr = value.rpartition(".")
    if not module or not attr:
        return False
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _jaas_error(reason: str) -> ConfigError:
    return ConfigError("sasl.jaas.config", Secret(""), reason=reason)  # the line may hold other secrets: not shown


def _extensions(values, jaas: JaasConfig | None) -> dict[str, str]:
    found: dict[str, str] = {}
    text = values.get("sasl.oauthbearer.extensions")
    if text:
        for item in text.split(","):
            name, sep, value = item.partition("=")
            if not sep or not name.strip():
                raise ConfigError("sasl.oauthbearer.extensions", text, "name=value,name=value")
            found[name.strip()] = value.strip()
    if jaas is not None:
        found.update({k[len("extension_"):]: v for k, v in jaas.options.items() if k.startswith("extension_")})
    return check_extensions(found, "sasl.jaas.config" if jaas is not None else "sasl.oauthbearer.extensions")


def _check_login_module(jaas: JaasConfig | None, expected: str, mechanism: str) -> None:
    if jaas is not None and not _unshaded(jaas.login_module).endswith(expected):
        raise _jaas_error(f"sasl.mechanism={mechanism} needs the login module ...{expected}, not {jaas.login_module}")


def _check_client_handler(values) -> None:
    handler = values.get("sasl.client.callback.handler.class")
    if handler and _unshaded(handler) not in _CLIENT_HANDLERS:
        raise ConfigError("sasl.client.callback.handler.class", handler,
                          reason="spark-kwire cannot run Java callback handlers; it understands "
                                 + ", ".join(_CLIENT_HANDLERS) + " (any kafkashaded. prefix)")


def _msk_iam(values, jaas: JaasConfig | None, hosts: tuple[str, ...]) -> AwsMskIam:
    if jaas is not None and not _unshaded(jaas.login_module).endswith(("IAMLoginModule", "OAuthBearerLoginModule")):
        raise _jaas_error(f"AWS MSK IAM needs software.amazon.msk.auth.iam.IAMLoginModule, not {jaas.login_module}")
    options = dict(jaas.options) if jaas is not None else {}
    unknown = sorted(set(options) - set(MSK_JAAS_OPTIONS))
    if unknown:
        raise ConfigError("sasl.jaas.config", "(IAMLoginModule options)",
                          reason=f"spark-kwire does not support the IAMLoginModule option(s) {', '.join(unknown)}; "
                                 f"it reads {', '.join(MSK_JAAS_OPTIONS)} (other credentials come from botocore's "
                                 f"default chain: environment, profile, instance or container role)")
    if options.get("awsProfileName") and options.get("awsRoleArn"):
        raise ConfigError("sasl.jaas.config", "(IAMLoginModule options)",
                          reason="set either awsProfileName or awsRoleArn, not both")
    return AwsMskIam(values.get("kwire.aws.region"), hosts, options.get("awsProfileName") or None,
                     options.get("awsRoleArn") or None, options.get("awsRoleSessionName") or None,
                     (options.get("awsDebugCreds") or "").strip().lower() == "true")


def _check_grant(values) -> None:
    """Kafka 4.1 also knows the JWT-bearer grant (KIP-1139); say so instead of silently using another one."""
    retriever = values.get("sasl.oauthbearer.jwt.retriever.class")
    if retriever and retriever.removeprefix("kafkashaded.") not in _RETRIEVERS:
        raise ConfigError("sasl.oauthbearer.jwt.retriever.class", retriever,
                          reason="spark-kwire retrieves tokens with the client-credentials grant or from a file "
                                 "(DefaultJwtRetriever, ClientCredentialsJwtRetriever, FileJwtRetriever); for other "
                                 "grants give a Python token provider in sasl.login.callback.handler.class")


def _endpoint_tls(values, jaas: JaasConfig | None, tls: TlsSettings) -> TlsSettings:
    """TLS to the identity provider: the JAAS line's ssl.* options (as Java) or the client's."""
    from spark_kwire.client.settings.tls_options import tls_of_mapping

    jaas_ssl = {k: (Secret(v) if is_sensitive_key(k) else v) for k, v in (jaas.options.items() if jaas else ())
                if k.startswith("ssl.")}
    return tls_of_mapping(jaas_ssl) if jaas_ssl else tls


def _oidc(values, jaas: JaasConfig | None, tls: TlsSettings, request_timeout_ms: int,
          handler_given: bool) -> TokenSourceSettings:
    _check_grant(values)
    endpoint = values.get(_ENDPOINT)
    if endpoint is None:
        raise ConfigError(_ENDPOINT, None, reason="OIDC client credentials need the identity provider's token "
                                                  "endpoint, e.g. https://idp.example.com/oauth2/token")
    principal_claim = values.get("sasl.oauthbearer.sub.claim.name", "sub")
    parts = urllib.parse.urlsplit(endpoint)
    scheme = parts.scheme.lower()
    if scheme == "file":
        return OidcTokenFile(endpoint, urllib.parse.unquote(parts.path), principal_claim)
    if scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(_ENDPOINT, endpoint, "an http:// or https:// URL of the token endpoint, or file:/path")
    options = jaas.options if jaas is not None else {}
    client_id = values.get("sasl.oauthbearer.client.credentials.client.id") \
        or values.get("sasl.oauthbearer.client.id") or options.get("clientId")
    secret = values.get("sasl.oauthbearer.client.credentials.client.secret") \
        or values.get("sasl.oauthbearer.client.secret") or options.get("clientSecret")
    scope = values.get("sasl.oauthbearer.scope") or options.get("scope")
    if not client_id or not secret:
        missing = "client id" if not client_id else "client secret"
        raise ConfigError("sasl.jaas.config" if handler_given else "sasl.oauthbearer.client.credentials.client.id",
                          Secret(""), reason=f"OIDC client credentials need the {missing}: set clientId=\"...\" and "
                                             f"clientSecret=\"...\" in sasl.jaas.config (OAuthBearerLoginModule), or "
                                             f"sasl.oauthbearer.client.credentials.client.id and .client.secret")
    attempt_ms = request_timeout_ms
    for key in ("sasl.login.connect.timeout.ms", "sasl.login.read.timeout.ms"):
        if values.get(key):
            attempt_ms = min(attempt_ms, values.get(key))
    return OidcClientCredentials(
        endpoint, client_id.strip(), Secret(secret.reveal().strip() if isinstance(secret, Secret) else secret.strip()),
        scope.strip() if scope else None, tls=_endpoint_tls(values, jaas, tls) if scheme == "https" else None,
        attempt_timeout_ms=attempt_ms, retry_backoff_ms=values.get("sasl.login.retry.backoff.ms", 100),
        retry_backoff_max_ms=values.get("sasl.login.retry.backoff.max.ms", 10_000),
        urlencode_header=values.get("sasl.oauthbearer.header.urlencode", False), principal_claim=principal_claim)


_STRING, _NUMBER, _LIST = "unsecuredLoginStringClaim_", "unsecuredLoginNumberClaim_", "unsecuredLoginListClaim_"
_EXTENSION = "unsecuredLoginExtension_"
_UNSECURED_KNOWN = {"unsecuredLoginLifetimeSeconds", "unsecuredLoginPrincipalClaimName",
                    "unsecuredLoginScopeClaimName"}


def unsecured_token(options: dict[str, str]) -> UnsecuredToken:
    """The unsecured token Kafka's ``unsecuredLogin*`` JAAS options describe (other options are skipped)."""
    claims: dict[str, object] = {}
    extensions: dict[str, str] = {}
    for key, value in options.items():
        if not key.startswith("unsecuredLogin"):
            continue
        if key.startswith(_STRING):
            claims[key[len(_STRING):]] = value
        elif key.startswith(_NUMBER):
            try:
                number = float(value)
            except ValueError:
                raise _jaas_error(f"{key} must be a number") from None
            claims[key[len(_NUMBER):]] = int(number) if number.is_integer() else number
        elif key.startswith(_LIST):
            separator, items = (value[:1], value[1:]) if value else (",", "")
            claims[key[len(_LIST):]] = tuple(item for item in items.split(separator) if item)
        elif key.startswith(_EXTENSION):
            extensions[key[len(_EXTENSION):]] = value
        elif key not in _UNSECURED_KNOWN:
            raise _jaas_error(f"unknown option {key} (known: {_STRING}<name>, {_NUMBER}<name>, {_LIST}<name>, "
                              f"{_EXTENSION}<name>, {', '.join(sorted(_UNSECURED_KNOWN))})")
    for reserved in ("iat", "exp"):
        if reserved in claims:
            raise _jaas_error(f"the claim {reserved!r} is set by the client; remove it")
    principal_claim = (options.get("unsecuredLoginPrincipalClaimName") or "sub").strip()
    subject = claims.get(principal_claim)
    if not isinstance(subject, str) or not subject.strip():
        raise _jaas_error(f"an unsecured token needs its principal: set {_STRING}{principal_claim}=\"<name>\"")
    try:
        lifetime_s = int(options.get("unsecuredLoginLifetimeSeconds") or 3600)
    except ValueError:
        raise _jaas_error("unsecuredLoginLifetimeSeconds must be a whole number of seconds") from None
    if lifetime_s <= 0:
        raise _jaas_error("unsecuredLoginLifetimeSeconds must be positive")
    return UnsecuredToken(tuple(claims.items()), tuple(extensions.items()), lifetime_s, principal_claim)


def _token_source(values, jaas, tls, request_timeout_ms, hosts) -> tuple[TokenSourceSettings, dict[str, str]]:
    _check_client_handler(values)
    handler = values.get(_HANDLER)
    method = values.get("sasl.oauthbearer.method")
    java_handler = _unshaded(handler) if handler else None
    mechanism = values.sasl_mechanism
    if mechanism == "AWS_MSK_IAM" or method == "aws_msk_iam" or java_handler == _MSK_LOGIN_HANDLER:
        return _msk_iam(values, jaas, hosts), {}
    _check_login_module(jaas, "OAuthBearerLoginModule", mechanism)
    extensions = _extensions(values, jaas)
    if method == "azure":
        return AzureEntra(values.get("sasl.oauthbearer.scope") or (jaas.get("scope") if jaas else None), hosts), \
            extensions
    if handler:
        if looks_like_python_reference(handler):
            return PythonTokenProvider(handler, _HANDLER, values.get("sasl.oauthbearer.config")), extensions
        if java_handler not in JAVA_LOGIN_HANDLERS:
            raise ConfigError(_HANDLER, handler,
                              reason="spark-kwire cannot run Java classes; give "
                                     f"{JAVA_LOGIN_HANDLERS[0]} (OIDC client credentials, any kafkashaded. prefix) "
                                     "or a Python token provider as package.module:function")
    if java_handler in JAVA_LOGIN_HANDLERS or method == "oidc" or values.get(_ENDPOINT):
        return _oidc(values, jaas, tls, request_timeout_ms, java_handler is not None), extensions
    if jaas is not None and any(k.startswith("unsecuredLogin") for k in jaas.options):
        token = unsecured_token(jaas.options)
        return token, {**dict(token.extensions), **extensions}
    raise ConfigError("sasl.mechanism", mechanism, reason=(
        "OAUTHBEARER needs a token source: for OIDC set sasl.login.callback.handler.class="
        f"{JAVA_LOGIN_HANDLERS[0]}, sasl.oauthbearer.token.endpoint.url and the client id and secret "
        "(clientId=\"...\" clientSecret=\"...\" in sasl.jaas.config); or give a Python token provider as "
        f"{_HANDLER}=package.module:function; or sasl.oauthbearer.method=azure; or sasl.mechanism=AWS_MSK_IAM; "
        "or, for local development, sasl.jaas.config=...OAuthBearerLoginModule required "
        "unsecuredLoginStringClaim_sub=\"<name>\";"))


def oauth_login(values, jaas: JaasConfig | None, tls: TlsSettings, *, request_timeout_ms: int,
                hosts: tuple[str, ...]) -> OAuthBearerLogin:
    """The login of ``sasl.mechanism=OAUTHBEARER`` or ``AWS_MSK_IAM``; raises :class:`ConfigError` naming the option."""
    source, extensions = _token_source(values, jaas, tls, request_timeout_ms, hosts)
    refresh = RefreshPolicy(values.get("sasl.login.refresh.window.factor", 0.8),
                            values.get("sasl.login.refresh.window.jitter", 0.05),
                            values.get("sasl.login.refresh.min.period.seconds", 60),
                            values.get("sasl.login.refresh.buffer.seconds", 300))
    return OAuthBearerLogin(values.sasl_mechanism, source, tuple(extensions.items()), refresh)
