"""The error every way of authenticating raises (SASL mechanisms, OAuth token sources, Kerberos logins), here so
that none of them imports another for it."""

from __future__ import annotations

from spark_kwire.client.errors import ClientError

__all__ = ["AuthenticationError"]


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
