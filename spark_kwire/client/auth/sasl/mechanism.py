"""The SASL mechanism interface: a mechanism starts sessions that answer the server's messages."""

from __future__ import annotations

from abc import ABC, abstractmethod

from spark_kwire.client.auth.errors import AuthenticationError

__all__ = ["AuthenticationError", "SaslMechanismError", "SaslMechanism", "SaslSession"]


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
    def begin(self, host: str) -> tuple[SaslSession, bytes]:
        """Start an exchange with the broker at `host` (the host name the connection was opened to, which GSSAPI
        needs for the broker's service principal; the other mechanisms ignore it): the session and the client's
        first message."""
