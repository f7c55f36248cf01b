"""SASL/PLAIN (RFC 4616): one message ``authzid NUL authcid NUL passwd`` with an empty authzid."""

from __future__ import annotations

from spark_kwire.client.auth.sasl.credentials import UserPasswordMechanism
from spark_kwire.client.auth.sasl.mechanism import SaslSession

__all__ = ["PlainMechanism"]


class _PlainSession(SaslSession):
    def challenge(self, data: bytes) -> tuple[bool, bytes | None]:
        return True, None  # the broker's answer to the one message ends the exchange


class PlainMechanism(UserPasswordMechanism):
    def begin(self, host: str) -> tuple[SaslSession, bytes]:
        return _PlainSession(), b"\0" + self.principal.encode("utf-8") + b"\0" + \
            self.password.reveal().encode("utf-8")
