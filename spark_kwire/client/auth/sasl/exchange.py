"""The SASL exchange on a broker connection: SaslHandshake v1, then SaslAuthenticate until the mechanism is done.

:class:`SaslAuthenticator` is the connection's ``authenticate`` hook. It returns a :class:`SaslOutcome` whose
``session_lifetime_ms`` (SaslAuthenticate v1+, the broker's ``connections.max.reauth.ms`` or the token's
remaining life) tells the connection when to run it again (KIP-368); re-authentication is the same exchange
on the same connection.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from spark_kwire.client.auth.sasl import AuthenticationError, SaslMechanism, SaslMechanismError, sasl_mechanism
from spark_kwire.client.settings.logins import SaslLogin
from spark_kwire.protocol import messages as m
from spark_kwire.protocol.errors import error_info

__all__ = ["SaslAuthenticator", "SaslOutcome"]

log = logging.getLogger("spark_kwire.client.auth.security")

_UNSUPPORTED_SASL_MECHANISM = 33
_ILLEGAL_SASL_STATE = 34


@dataclass(frozen=True)
class SaslOutcome:
    """A successful exchange: who authenticated and for how long the broker accepts the session."""
    mechanism: str  # as configured (AWS_MSK_IAM, not the OAUTHBEARER it speaks)
    principal: str
    session_lifetime_ms: int  # 0: no limit
    sent_at: float  # time.monotonic() when the last SaslAuthenticate request was sent


class SaslAuthenticator:
    """The ``authenticate(conn, reauthentication=False) -> SaslOutcome`` hook for SASL_PLAINTEXT / SASL_SSL, with the
    login of the settings (``request_timeout_ms`` bounds what waits on a KDC)."""

    def __init__(self, login: SaslLogin, request_timeout_ms: int = 30_000) -> None:
        self._login = login
        self._request_timeout_ms = request_timeout_ms
        self.mechanism_impl: SaslMechanism = sasl_mechanism(login, request_timeout_ms)
        self.mechanism = self.mechanism_impl.label

    @property
    def username(self) -> str:
        return self.mechanism_impl.principal

    def __repr__(self) -> str:
        return f"SaslAuthenticator({self.mechanism}, {self.mechanism_impl.who})"

    def __reduce__(self):  # rebuilt from the login, whose secrets pickle masked
        return (SaslAuthenticator, (self._login, self._request_timeout_ms))

    def __call__(self, conn, reauthentication: bool = False) -> SaslOutcome:
        address = getattr(conn, "address", "?")
        mech = self.mechanism_impl
        label = mech.label
        what = "re-authentication" if reauthentication else "authentication"

        def failure(detail: str, code: int | None = None) -> AuthenticationError:
            return AuthenticationError(f"SASL {label} {what} as {mech.who} with broker at {address} failed: {detail}",
                                       mechanism=label, broker=address, code=code)

        if conn.version_for(m.SASL_HANDSHAKE) < 1:
            raise failure("the broker supports only SaslHandshake v0 (Kafka < 1.0), which spark-kwire does not speak")
        response = conn.request(m.SASL_HANDSHAKE, {"mechanism": mech.name}, 1)
        code = response.get("error_code", 0)
        if code:
            enabled = list(response.get("mechanisms") or [])
            if code == _UNSUPPORTED_SASL_MECHANISM:
                speaks = f" (spark-kwire speaks {label} as {mech.name})" if label != mech.name else ""
                detail = (f"the broker's listener does not enable SASL mechanism {mech.name}{speaks} (enabled: "
                          f"{', '.join(enabled) or 'none'}); set sasl.mechanism to one of those")
            elif code == _ILLEGAL_SASL_STATE:
                detail = ("the broker refused the SASL handshake (ILLEGAL_SASL_STATE): is this a SASL listener? "
                          "check security.protocol and the port")
            else:
                detail = f"SaslHandshake failed with {error_info(code).name}"
            raise failure(detail, code)
        version = conn.version_for(m.SASL_AUTHENTICATE)
        try:
            session, message = mech.begin(conn.host)
        except SaslMechanismError as exc:
            raise failure(str(exc)) from None
        while True:
            sent_at = time.monotonic()
            response = conn.request(m.SASL_AUTHENTICATE, {"auth_bytes": message}, version)
            code = response.get("error_code", 0)
            if code:
                reason = session.server_reason or response.get("error_message") or error_info(code).description
                raise failure(f"{error_info(code).name}: {reason}", code)
            try:
                done, message = session.challenge(bytes(response.get("auth_bytes") or b""))
            except SaslMechanismError as exc:
                raise failure(str(exc)) from None
            if done:
                break
            if message is None:
                raise failure("the exchange ended early")
        lifetime = int(response.get("session_lifetime_ms") or 0)
        principal = session.principal or mech.principal
        log.debug("SASL %s %s as %r with broker at %s succeeded (session lifetime %s)", label, what, principal,
                  address, f"{lifetime} ms" if lifetime else "unlimited")
        return SaslOutcome(label, principal, lifetime, sent_at)
