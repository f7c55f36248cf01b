"""SASL/PLAIN (RFC 4616): one message ``authzid NUL authcid NUL passwd`` with an empty authzid."""

from __future__ import annotations

from spark_kwire.client.config import ClientConfig
from spark_kwire.client.auth.sasl.credentials import UserCredentials, UserPasswordMechanism, user_credentials
from spark_kwire.client.auth.sasl.mechanism import SaslSession

__all__ = ["PlainMechanism"]


class _PlainSession(SaslSession):
    def challenge(self, data: bytes) -> tuple[bool, bytes | None]:
        return True, None  # the broker's answer to the one message ends the exchange


class PlainMechanism(UserPasswordMechanism):
    name = label = "PLAIN"

    def __init__(self, credentials: UserCredentials, config: ClientConfig | None = None) -> None:
        self._credentials = credentials
        self._config = config

    @classmethod
    def from_config(cls, config: ClientConfig) -> "PlainMechanism":
        return cls(user_credentials(config), config)

    def begin(self, host: str) -> tuple[SaslSession, bytes]:
        c = self._credentials
        return _PlainSession(), b"\0" + c.username.encode("utf-8") + b"\0" + c.password.reveal().encode("utf-8")
