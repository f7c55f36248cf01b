"""Which token source the options ask for, read the way Java, Databricks and librdkafka users write them.

In order:

1. AWS MSK IAM: ``sasl.mechanism=AWS_MSK_IAM``, ``sasl.login.callback.handler.class=...IAMOAuthBearerLoginCallbackHandler``
   or ``sasl.oauthbearer.method=aws_msk_iam`` (:mod:`.aws`).
2. Entra ID through azure-identity: ``sasl.oauthbearer.method=azure`` (:mod:`.azure`).
3. A Python callable: ``sasl.login.callback.handler.class=package.module:function`` (:mod:`.provider`).
4. OIDC client credentials: ``sasl.login.callback.handler.class=`` Kafka's ``OAuthBearerLoginCallbackHandler``
   (also ``...oauthbearer.secured.OAuthBearerLoginCallbackHandler`` and ``kafkashaded.`` names), librdkafka's
   ``sasl.oauthbearer.method=oidc``, or simply a ``sasl.oauthbearer.token.endpoint.url`` (:mod:`.oidc`). The
   client id, secret and scope come from Kafka 4.1's ``sasl.oauthbearer.client.credentials.client.id`` /
   ``.client.secret`` and ``sasl.oauthbearer.scope`` (which win, as in Java), librdkafka's
   ``sasl.oauthbearer.client.id`` / ``.client.secret``, or ``clientId`` / ``clientSecret`` / ``scope`` in the
   ``OAuthBearerLoginModule`` JAAS line.
5. An unsecured token: ``unsecuredLoginStringClaim_sub="..."`` in the JAAS line (:mod:`.unsecured`).

SASL extensions: ``extension_<name>="value"`` in the JAAS line (Java), ``sasl.oauthbearer.extensions=a=1,b=2``
(librdkafka), ``unsecuredLoginExtension_<name>``, and whatever a provider callable returns.
"""

from __future__ import annotations

import re

from spark_kwire.client.config import ClientConfig, Secret, reveal
from spark_kwire.client.errors import ConfigError
from spark_kwire.client.auth.jaas import JaasConfig, parse_jaas_config
from spark_kwire.client.auth.oauth import TokenSource

__all__ = ["select_token_source", "validate_extensions", "JAVA_LOGIN_HANDLERS"]

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
_SHADING_PREFIXES = ("kafkashaded.", "shadedmskiam.")
_METHODS = ("oidc", "azure", "aws_msk_iam", "default")
_EXTENSION_NAME = re.compile(r"[A-Za-z]+")
_EXTENSION_VALUE = re.compile(r"[\x21-\x7E \t\r\n]+")
_HANDLER = "sasl.login.callback.handler.class"


def _unshaded(name: str) -> str:
    for prefix in _SHADING_PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def _option(config: ClientConfig, *keys: str) -> tuple[str | None, str | None]:
    for key in keys:
        value = reveal(config.sasl.get(key))
        if value is not None and value.strip():
            return key, value.strip()
    return None, None


def _secret_option(config: ClientConfig, *keys: str) -> tuple[str | None, Secret | None]:
    for key in keys:
        value = config.sasl.get(key)
        if value is not None and reveal(value).strip():
            return key, Secret(reveal(value).strip())
    return None, None


def validate_extensions(extensions: dict[str, str], where: str) -> dict[str, str]:
    """Check names (letters only, not ``auth``) and values (printable ASCII) as RFC 7628 / Kafka require."""
    for name, value in extensions.items():
        if not _EXTENSION_NAME.fullmatch(name) or name == "auth":
            raise ConfigError(where, name, reason=f"SASL extension name {name!r} must be letters only and not 'auth'")
        if not _EXTENSION_VALUE.fullmatch(value):
            raise ConfigError(where, name, reason=f"the value of SASL extension {name!r} must be printable ASCII")
    return extensions


def _extensions(config: ClientConfig, jaas: JaasConfig | None) -> dict[str, str]:
    found: dict[str, str] = {}
    key, text = _option(config, "sasl.oauthbearer.extensions")
    if text:
        for item in text.split(","):
            name, sep, value = item.partition("=")
            if not sep or not name.strip():
                raise ConfigError(key, text, "name=value,name=value")
            found[name.strip()] = value.strip()
    if jaas is not None:
        found.update({k[len("extension_"):]: v for k, v in jaas.options.items() if k.startswith("extension_")})
    return validate_extensions(found, "sasl.jaas.config" if jaas is not None else "sasl.oauthbearer.extensions")


def _hosts(config: ClientConfig) -> list[str]:
    return [host for host, _ in config.bootstrap_servers]


def _check_login_module(jaas: JaasConfig | None, expected: str, mechanism: str) -> None:
    if jaas is not None and not _unshaded(jaas.login_module).endswith(expected):
        raise ConfigError("sasl.jaas.config", Secret(""),
                          reason=f"sasl.mechanism={mechanism} needs the login module ...{expected}, not "
                                 f"{jaas.login_module}")


def _check_client_handler(config: ClientConfig) -> None:
    key, handler = _option(config, "sasl.client.callback.handler.class")
    if handler and _unshaded(handler) not in _CLIENT_HANDLERS:
        raise ConfigError(key, handler, reason="spark-kwire cannot run Java callback handlers; it understands "
                                               + ", ".join(_CLIENT_HANDLERS) + " (any kafkashaded. prefix)")


def select_token_source(config: ClientConfig) -> tuple[TokenSource, dict[str, str]]:
    """The token source and the configured SASL extensions; raises :class:`ConfigError` naming the option."""
    jaas = parse_jaas_config(config.sasl_jaas_config) if config.sasl_jaas_config is not None and \
        config.sasl_jaas_config.reveal().strip() else None
    _check_client_handler(config)
    _, handler = _option(config, _HANDLER)
    method_key, method = _option(config, "sasl.oauthbearer.method")
    method = method.lower() if method else None
    if method is not None and method not in _METHODS:
        raise ConfigError(method_key, method, ", ".join(_METHODS))
    java_handler = _unshaded(handler) if handler else None

    if config.sasl_mechanism == "AWS_MSK_IAM" or method == "aws_msk_iam" or java_handler == _MSK_LOGIN_HANDLER:
        from spark_kwire.client.auth.oauth.aws import msk_iam_token_source

        if jaas is not None and not _unshaded(jaas.login_module).endswith(("IAMLoginModule",
                                                                          "OAuthBearerLoginModule")):
            raise ConfigError("sasl.jaas.config", Secret(""),
                              reason=f"AWS MSK IAM needs software.amazon.msk.auth.iam.IAMLoginModule, not "
                                     f"{jaas.login_module}")
        options = {k: v for k, v in jaas.options.items()} if jaas is not None else {}
        region = reveal(config.extra.get("kwire.aws.region"))
        return msk_iam_token_source(region, _hosts(config), options), {}

    _check_login_module(jaas, "OAuthBearerLoginModule", config.sasl_mechanism)
    extensions = _extensions(config, jaas)
    if method == "azure":
        from spark_kwire.client.auth.oauth.azure import entra_token_source

        _, scope = _option(config, "sasl.oauthbearer.scope")
        return entra_token_source(scope or (jaas.get("scope") if jaas else None), _hosts(config)), extensions

    if handler:
        from spark_kwire.client.auth.oauth.provider import CallableTokenSource, looks_like_python_reference

        if looks_like_python_reference(handler):
            _, config_string = _secret_option(config, "sasl.oauthbearer.config")
            return CallableTokenSource(handler, _HANDLER, config_string), extensions
        if java_handler not in JAVA_LOGIN_HANDLERS:
            raise ConfigError(_HANDLER, handler,
                              reason="spark-kwire cannot run Java classes; give "
                                     f"{JAVA_LOGIN_HANDLERS[0]} (OIDC client credentials, any kafkashaded. prefix) "
                                     "or a Python token provider as package.module:function")
    _, endpoint = _option(config, "sasl.oauthbearer.token.endpoint.url")
    if java_handler in JAVA_LOGIN_HANDLERS or method == "oidc" or endpoint:
        from spark_kwire.client.auth.oauth.oidc_config import oidc_token_source

        return oidc_token_source(config, jaas, handler_given=java_handler is not None), extensions

    if jaas is not None and any(k.startswith("unsecuredLogin") for k in jaas.options):
        from spark_kwire.client.auth.oauth.unsecured import UnsecuredTokenSource

        source = UnsecuredTokenSource(jaas.options)
        return source, {**source.extensions, **extensions}
    raise ConfigError("sasl.mechanism", config.sasl_mechanism, reason=(
        "OAUTHBEARER needs a token source: for OIDC set sasl.login.callback.handler.class="
        f"{JAVA_LOGIN_HANDLERS[0]}, sasl.oauthbearer.token.endpoint.url and the client id and secret "
        "(clientId=\"...\" clientSecret=\"...\" in sasl.jaas.config); or give a Python token provider as "
        f"{_HANDLER}=package.module:function; or sasl.oauthbearer.method=azure; or sasl.mechanism=AWS_MSK_IAM; "
        "or, for local development, sasl.jaas.config=...OAuthBearerLoginModule required "
        "unsecuredLoginStringClaim_sub=\"<name>\";"))
