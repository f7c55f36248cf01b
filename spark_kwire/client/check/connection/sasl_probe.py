"""Step 3 of a connection: SASL. The mechanisms a listener offers, and why an authentication failed.

The client's own authentication hook (:class:`~spark_kwire.client.auth.sasl.exchange.SaslAuthenticator`) runs the
exchange that counts; :class:`RecordingAuthenticator` wraps it to keep what it does not report: the broker's API
versions at the moment authentication starts (known even when authentication then fails), the mechanisms the
broker's SaslHandshake answer lists, and the outcome. :func:`offered_mechanisms` asks a listener for its
mechanisms without authenticating (no credential is sent), and :func:`sasl_failure` gives a failure's kind.
"""

from __future__ import annotations

from spark_kwire.client.auth.kerberos.errors import KerberosError
from spark_kwire.client.auth.oauth import TokenError
from spark_kwire.client.auth.sasl.mechanism import AuthenticationError
from spark_kwire.client.check.rows import SASL_AUTHENTICATE, SASL_LOGIN, SASL_MECHANISMS
from spark_kwire.protocol import messages as m

__all__ = ["RecordingAuthenticator", "offered_mechanisms", "sasl_failure", "kerberos_kind", "token_kind",
           "UNSUPPORTED_SASL_MECHANISM", "ILLEGAL_SASL_STATE"]

UNSUPPORTED_SASL_MECHANISM, ILLEGAL_SASL_STATE, SASL_AUTHENTICATION_FAILED = 33, 34, 58

_KERBEROS_KINDS = {"no_key_in_keytab": "kerberos_no_key_in_keytab", "wrong_key": "kerberos_wrong_key",
                   "unknown_principal": "kerberos_unknown_principal", "kdc_unreachable": "kerberos_kdc_unreachable",
                   "kdc_timeout": "kerberos_kdc_unreachable", "clock_skew": "kerberos_clock_skew",
                   "unknown_service": "kerberos_unknown_service", "no_ticket": "kerberos_no_ticket",
                   "ticket_expired": "kerberos_no_ticket", "no_realm": "kerberos_no_realm"}


def kerberos_kind(exc: KerberosError) -> str:
    return _KERBEROS_KINDS.get(exc.kind, "kerberos_failed")


def token_kind(exc: TokenError) -> str:
    """The kind of a failure to get an OAuth token."""
    text = str(exc)
    if exc.status in (400, 401, 403) or exc.error in ("invalid_client", "unauthorized_client", "access_denied"):
        return "oauth_client_refused"
    if "TLS" in text or "certificate" in text:
        return "oauth_endpoint_tls"
    if "cannot reach" in text or "no answer within" in text:
        return "oauth_endpoint_unreachable"
    return "oauth_token_failed"


class _RecordingConnection:
    """The connection as the authenticator sees it, keeping the SaslHandshake answer."""

    def __init__(self, conn, recorder: "RecordingAuthenticator") -> None:
        self._conn = conn
        self._recorder = recorder

    def __getattr__(self, name):
        return getattr(self._conn, name)

    def request(self, api, body, version=None, **kwargs):
        response = self._conn.request(api, body, version, **kwargs)
        if api is m.SASL_HANDSHAKE:
            self._recorder.handshake_code = response.get("error_code", 0)
            self._recorder.mechanisms = tuple(response.get("mechanisms") or ())
        return response


class RecordingAuthenticator:
    """Wraps a connection's ``authenticate`` hook; keeps the API versions, the offered mechanisms, the outcome and
    the error of the exchange it runs."""

    def __init__(self, authenticate) -> None:
        self.authenticate = authenticate
        self.api_versions: dict | None = None
        self.handshake_code: int | None = None
        self.mechanisms: tuple[str, ...] | None = None
        self.outcome = None
        self.error: BaseException | None = None

    def __call__(self, conn, reauthentication: bool = False):
        self.api_versions = conn.api_versions
        try:
            self.outcome = self.authenticate(_RecordingConnection(conn, self), reauthentication=reauthentication)
        except BaseException as exc:
            self.error = exc
            raise
        return self.outcome


def offered_mechanisms(conn, mechanism: str) -> tuple[int, tuple[str, ...]]:
    """(error code, mechanisms) of SaslHandshake v1 for ``mechanism`` on a connection that has not authenticated:
    0 or UNSUPPORTED_SASL_MECHANISM (33) with the listener's mechanisms, ILLEGAL_SASL_STATE (34) when the listener
    is not a SASL one. The connection must be closed afterwards (the broker then waits for SaslAuthenticate)."""
    response = conn.request(m.SASL_HANDSHAKE, {"mechanism": mechanism}, 1)
    return int(response.get("error_code", 0)), tuple(response.get("mechanisms") or ())


def sasl_failure(exc: BaseException) -> tuple[str, str] | None:
    """(step, kind) of a failure of the SASL exchange or of the login it needed, None when it is not one."""
    if isinstance(exc, KerberosError):
        return (SASL_AUTHENTICATE if "service ticket" in str(exc) else SASL_LOGIN), kerberos_kind(exc)
    if isinstance(exc, TokenError):
        return SASL_LOGIN, token_kind(exc)
    if isinstance(exc, AuthenticationError):
        if exc.code == UNSUPPORTED_SASL_MECHANISM:
            return SASL_MECHANISMS, "sasl_mechanism_not_offered"
        if exc.code == ILLEGAL_SASL_STATE:
            return SASL_MECHANISMS, "not_sasl_listener"
        if exc.mechanism in ("OAUTHBEARER", "AWS_MSK_IAM") and exc.code == SASL_AUTHENTICATION_FAILED:
            return SASL_AUTHENTICATE, "oauth_token_refused"
        if exc.code == SASL_AUTHENTICATION_FAILED:
            return SASL_AUTHENTICATE, "sasl_credentials_refused"
        return SASL_AUTHENTICATE, "sasl_failed"
    return None
