"""Security hooks for broker connections: TLS (:mod:`.tls`) and SASL (:mod:`.sasl`, tokens from :mod:`.oauth`).

The client layer calls :func:`security_hooks` once per :class:`~spark_kwire.client.core.kafka_client.KafkaClient` and passes
the two hooks to every :class:`~spark_kwire.client.core.connection.BrokerConnection`:

* ``transport_factory(sock, host) -> sock-like``: wraps the connected TCP socket in TLS (``SSL`` and
  ``SASL_SSL``) and completes the handshake, verifying the broker's certificate and host name.
* ``authenticate(conn, reauthentication=False)``: runs after ApiVersions on a fresh connection, and again when
  the broker's session lifetime runs out (the connection decides when): SaslHandshake v1 and SaslAuthenticate
  with PLAIN, SCRAM-SHA-256/512, OAUTHBEARER, AWS_MSK_IAM or GSSAPI (``SASL_PLAINTEXT`` and ``SASL_SSL``).

``security.protocol`` is ``PLAINTEXT`` (default), ``SSL``, ``SASL_PLAINTEXT`` or ``SASL_SSL``. The hooks take the
typed parts of the settings (``config.tls``, ``config.sasl``), which :mod:`spark_kwire.client.settings` built from
the options. Secrets (passwords, client secrets, tokens, private keys) stay in
:class:`~spark_kwire.client.settings.secret.Secret` until the moment they are sent; no log line, exception,
``repr`` or pickle shows them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from spark_kwire.client.errors import ConfigError
from spark_kwire.client.settings.config import ClientConfig
from spark_kwire.client.auth.sasl import SUPPORTED_SASL_MECHANISMS, AuthenticationError
from spark_kwire.client.auth.sasl.exchange import SaslAuthenticator
from spark_kwire.client.auth.sasl.scram import ScramClient, ScramError
from spark_kwire.client.auth.tls import TlsError, TlsTransport, build_ssl_context

TransportFactory = Callable[[Any, str], Any]
Authenticator = Callable[..., Any]

__all__ = [
    "SecurityHooks", "security_hooks", "TransportFactory", "Authenticator",
    "AuthenticationError", "TlsError", "build_ssl_context",
    "TlsTransport", "SaslAuthenticator", "ScramClient", "ScramError", "SUPPORTED_SASL_MECHANISMS",
]


@dataclass(frozen=True)
class SecurityHooks:
    transport_factory: Optional[TransportFactory] = None
    authenticate: Optional[Authenticator] = None


def security_hooks(config: ClientConfig) -> SecurityHooks:
    """The transport/authentication hooks for ``config.security_protocol``.

    Everything that can be checked without a broker is checked here (files exist and are PEM, the mechanism
    is supported, credentials or a token source are configured), so a bad setting fails when the client is built.
    """
    protocol = config.security_protocol
    if protocol == "PLAINTEXT":
        return SecurityHooks()
    if protocol not in ("SSL", "SASL_PLAINTEXT", "SASL_SSL"):
        raise ConfigError("security.protocol", protocol, "PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL")
    authenticate = None
    if protocol.startswith("SASL_"):
        if config.sasl is None:
            raise ConfigError("sasl.mechanism", config.sasl_mechanism,
                              reason=f"security.protocol={protocol} needs a SASL login, and this config has none "
                                     f"(a config made from the options has the login sasl.mechanism names)")
        authenticate = SaslAuthenticator(config.sasl, config.request_timeout_ms)
    transport = TlsTransport(config.tls) if protocol.endswith("SSL") else None
    return SecurityHooks(transport, authenticate)
