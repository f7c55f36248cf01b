"""SASL for broker connections: a small mechanism interface, one module per mechanism, and the exchange.

A :class:`SaslMechanism` knows its name (sent in SaslHandshake) and starts exchanges: :meth:`~SaslMechanism.begin`
returns a :class:`SaslSession` and the client's first message; the session answers each server message until it
says it is done. :mod:`.exchange` runs SaslHandshake + SaslAuthenticate with a mechanism on a connection, and
the connection re-runs it when the broker's session lifetime runs out (KIP-368).

Mechanisms: ``PLAIN`` (:mod:`.plain`), ``SCRAM-SHA-256`` / ``SCRAM-SHA-512`` (:mod:`.scram`), ``OAUTHBEARER``
(:mod:`.oauthbearer`, tokens from :mod:`spark_kwire.client.auth.oauth`) and ``GSSAPI`` (:mod:`.gssapi`, Kerberos
credentials from :mod:`spark_kwire.client.auth.kerberos`); ``AWS_MSK_IAM`` is OAUTHBEARER with a token signed by the AWS
MSK IAM signer. :meth:`SaslMechanism.begin` takes the broker's host name (GSSAPI's service principal names it).
"""

from __future__ import annotations

from spark_kwire.client.auth.sasl.mechanism import AuthenticationError, SaslMechanism, SaslMechanismError, SaslSession
from spark_kwire.client.settings.logins import GssapiLogin, OAuthBearerLogin, PlainLogin, SaslLogin

__all__ = ["AuthenticationError", "SaslMechanismError", "SaslMechanism", "SaslSession", "sasl_mechanism",
           "SUPPORTED_SASL_MECHANISMS"]

SUPPORTED_SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER", "AWS_MSK_IAM", "GSSAPI")


def sasl_mechanism(login: SaslLogin, request_timeout_ms: int = 30_000) -> SaslMechanism:
    """The mechanism of a login (the settings' tagged union), with its credentials; ``request_timeout_ms`` bounds
    what waits on a KDC."""
    if isinstance(login, PlainLogin):
        from spark_kwire.client.auth.sasl.plain import PlainMechanism

        return PlainMechanism(login)
    if isinstance(login, OAuthBearerLogin):
        from spark_kwire.client.auth.sasl.oauthbearer import OAuthBearerMechanism

        return OAuthBearerMechanism.from_login(login)
    if isinstance(login, GssapiLogin):
        from spark_kwire.client.auth.sasl.gssapi import GssapiMechanism

        return GssapiMechanism.from_login(login, request_timeout_ms)
    from spark_kwire.client.auth.sasl.scram import ScramMechanism  # SCRAM, as a user or a delegation token

    return ScramMechanism(login)
