"""SASL for broker connections: a small mechanism interface, one module per mechanism, and the exchange.

A :class:`SaslMechanism` knows its name (sent in SaslHandshake) and starts exchanges: :meth:`~SaslMechanism.begin`
returns a :class:`SaslSession` and the client's first message; the session answers each server message until it
says it is done. :mod:`.exchange` runs SaslHandshake + SaslAuthenticate with a mechanism on a connection, and
the connection re-runs it when the broker's session lifetime runs out (KIP-368).

Mechanisms: ``PLAIN`` (:mod:`.plain`), ``SCRAM-SHA-256`` / ``SCRAM-SHA-512`` (:mod:`.scram`) and ``OAUTHBEARER``
(:mod:`.oauthbearer`, tokens from :mod:`spark_kwire.client.oauth`); ``AWS_MSK_IAM`` is OAUTHBEARER with a token
signed by the AWS MSK IAM signer.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from spark_kwire.client.config import ClientConfig
from spark_kwire.client.errors import ClientError, ConfigError

__all__ = ["AuthenticationError", "SaslMechanismError", "SaslMechanism", "SaslSession", "sasl_mechanism",
           "SUPPORTED_SASL_MECHANISMS"]

SUPPORTED_SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER", "AWS_MSK_IAM")


class AuthenticationError(ClientError):
    """SASL authentication with a broker failed (wrong credentials, mechanism not enabled...). Not retriable.

    ``mechanism`` and ``broker`` (host:port) say where; the message never contains a secret.
    """

    retriable = False

    def __init__(self, message: str, *, mechanism: str | None = None, broker: str | None = None,
                 code: int | None = None) -> None:
        self.mechanism = mechanism
        self.broker = broker
        self.code = code
        super().__init__(message)


class SaslMechanismError(Exception):
    """A step of an exchange failed on the client side (a bad server message...); the text is safe to show."""


class SaslSession(ABC):
    """One exchange in progress: answers the server's messages."""

    #: set by the session when the server explained a refusal before failing the exchange (e.g. OAUTHBEARER's JSON)
    server_reason: str | None = None
    #: who the exchange authenticates, when the session knows better than the mechanism (a token's subject)
    principal: str | None = None

    @abstractmethod
    def challenge(self, data: bytes) -> tuple[bool, bytes | None]:
        """Answer one server message: ``(done, next client message or None)``. Raises :class:`SaslMechanismError`."""


class SaslMechanism(ABC):
    """A SASL mechanism with its credentials. Picklable without revealing them (rebuilt from the config)."""

    #: the name sent in SaslHandshake
    name: str
    #: the name users configured (e.g. AWS_MSK_IAM, which speaks OAUTHBEARER), used in messages
    label: str

    @property
    @abstractmethod
    def principal(self) -> str:
        """Who authenticates, for messages (never a secret): a user name, a client id, a token provider."""

    @property
    def who(self) -> str:
        """``principal`` as a phrase for error messages, e.g. ``user 'alice'``."""
        return repr(self.principal)

    @abstractmethod
    def begin(self) -> tuple[SaslSession, bytes]:
        """Start an exchange: the session and the client's first message."""


def sasl_mechanism(config: ClientConfig) -> SaslMechanism:
    """The mechanism ``sasl.mechanism`` names, with its credentials from the config; raises :class:`ConfigError`."""
    name = config.sasl_mechanism
    if name == "PLAIN":
        from spark_kwire.client.sasl.plain import PlainMechanism

        return PlainMechanism.from_config(config)
    if name in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        from spark_kwire.client.sasl.scram import ScramMechanism

        return ScramMechanism.from_config(config)
    if name in ("OAUTHBEARER", "AWS_MSK_IAM"):
        from spark_kwire.client.sasl.oauthbearer import OAuthBearerMechanism

        return OAuthBearerMechanism.from_config(config)
    default = " (Kafka's default when sasl.mechanism is not set)" if name == "GSSAPI" else ""
    raise ConfigError("sasl.mechanism", name, ", ".join(SUPPORTED_SASL_MECHANISMS),
                      reason=f"spark-kwire does not implement {name}{default}; set sasl.mechanism to one it supports")
