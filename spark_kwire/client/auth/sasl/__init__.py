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

from spark_kwire.client.config import ClientConfig
from spark_kwire.client.errors import ConfigError
from spark_kwire.client.auth.sasl.mechanism import AuthenticationError, SaslMechanism, SaslMechanismError, SaslSession

__all__ = ["AuthenticationError", "SaslMechanismError", "SaslMechanism", "SaslSession", "sasl_mechanism",
           "SUPPORTED_SASL_MECHANISMS"]

SUPPORTED_SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER", "AWS_MSK_IAM", "GSSAPI")


def sasl_mechanism(config: ClientConfig) -> SaslMechanism:
    """The mechanism ``sasl.mechanism`` names, with its credentials from the config; raises :class:`ConfigError`."""
    name = config.sasl_mechanism
    if name == "PLAIN":
        from spark_kwire.client.auth.sasl.plain import PlainMechanism

        return PlainMechanism.from_config(config)
    if name in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        from spark_kwire.client.auth.sasl.scram import ScramMechanism

        return ScramMechanism.from_config(config)
    if name in ("OAUTHBEARER", "AWS_MSK_IAM"):
        from spark_kwire.client.auth.sasl.oauthbearer import OAuthBearerMechanism

        return OAuthBearerMechanism.from_config(config)
    if name == "GSSAPI":
        from spark_kwire.client.auth.sasl.gssapi import GssapiMechanism

        return GssapiMechanism.from_config(config)
    raise ConfigError("sasl.mechanism", name, ", ".join(SUPPORTED_SASL_MECHANISMS),
                      reason=f"spark-kwire does not implement {name}; set sasl.mechanism to one it supports")
