"""The SASL login (:data:`~.logins.SaslLogin`) of a ``SASL_PLAINTEXT`` / ``SASL_SSL`` client, from ``sasl.mechanism``
and the options of that mechanism, the JAAS line parsed once (:func:`~.parse.parse_options` did it).

PLAIN and SCRAM take the user name and password from ``sasl.jaas.config`` (``username="..." password="..."``, any
login module) or from librdkafka's ``sasl.username`` + ``sasl.password``; ``tokenauth=true`` makes a SCRAM login a
delegation token's. OAUTHBEARER and AWS_MSK_IAM: :mod:`.oauth_options`; GSSAPI: :mod:`.kerberos_options`.
"""

from __future__ import annotations

from spark_kwire.client.errors import ConfigError
from spark_kwire.client.settings.jaas import JaasConfig
from spark_kwire.client.settings.kerberos_options import kerberos_settings
from spark_kwire.client.settings.logins import DelegationTokenLogin, GssapiLogin, PlainLogin, SaslLogin, ScramLogin
from spark_kwire.client.settings.oauth_options import oauth_login
from spark_kwire.client.settings.secret import Secret
from spark_kwire.client.settings.tls import TlsSettings

__all__ = ["sasl_login", "user_login"]


def user_login(mechanism: str, username: str, password: Secret, *, token: bool = False,
               source: str = "sasl.jaas.config") -> SaslLogin:
    """The login of a user name and password (PLAIN, SCRAM), or of a delegation token (SCRAM with ``token``)."""
    if mechanism == "PLAIN":
        return PlainLogin(username, password, source)
    if token:
        return DelegationTokenLogin(mechanism, username, password, source)
    return ScramLogin(mechanism, username, password, source)


def _password_login(values, mechanism: str, jaas: JaasConfig | None) -> SaslLogin:
    username, password = values.get("sasl.username"), values.get("sasl.password")
    if jaas is not None:
        token = (jaas.get("tokenauth") or "").lower() == "true"
        user, pw = jaas.get("username"), jaas.get("password")
        if user is not None and pw is not None:
            return user_login(mechanism, user, Secret(pw), token=token)
        if username and password is not None:
            return user_login(mechanism, username, password, token=token, source="sasl.username")
        missing = "username" if user is None else "password"
        raise ConfigError("sasl.jaas.config", Secret(""),
                          reason=f"the login module has no {missing}=\"...\" option (needed for {mechanism})")
    if username is not None or password is not None:
        if not username:
            raise ConfigError("sasl.username", username, reason="sasl.password is set but sasl.username is not")
        if password is None:
            raise ConfigError("sasl.password", None, reason="sasl.username is set but sasl.password is not")
        return user_login(mechanism, username, password, source="sasl.username")
    raise ConfigError("sasl.jaas.config", None,
                      reason=f"security.protocol={values.security_protocol} needs credentials: set "
                             f"sasl.jaas.config (e.g. org.apache.kafka.common.security.scram.ScramLoginModule "
                             f"required username=\"...\" password=\"...\";) or sasl.username and sasl.password")


def sasl_login(values, tls: TlsSettings, *, request_timeout_ms: int, hosts: tuple[str, ...]) -> SaslLogin:
    """The login ``sasl.mechanism`` names, from the options read by :func:`~.parse.parse_options`; raises
    :class:`ConfigError` naming the option that is missing or wrong."""
    mechanism = values.sasl_mechanism
    jaas = values.get("sasl.jaas.config")
    if mechanism in ("OAUTHBEARER", "AWS_MSK_IAM"):
        return oauth_login(values, jaas, tls, request_timeout_ms=request_timeout_ms, hosts=hosts)
    if mechanism == "GSSAPI":
        return GssapiLogin(kerberos_settings(values, jaas))
    return _password_login(values, mechanism, jaas)
