"""Security options of a kwire read or write, checked together as a Spark user writes them (``kafka.*``), and
kwire's per-query delegation-token options.

Kafka's Java client ignores SASL settings on a connection that does not use SASL, and Kerberos settings under
another mechanism; kwire refuses them instead, so that a missing ``kafka.security.protocol`` shows at
``load()`` rather than as a broker closing the connection.

**Delegation tokens** (Spark's model: the driver obtains a token with its Kerberos login, tasks authenticate
with it through SCRAM, executors need no keytab). Spark configures them per cluster in the session
(``spark.kafka.clusters.<id>.*``), which a Python data source cannot read; kwire takes them per query:

* ``delegationToken`` (``true``/``false``, default false): stands for ``spark.security.credentials.kafka.enabled``
  plus a cluster whose ``auth.bootstrap.servers`` is the query's ``kafka.bootstrap.servers``;
* ``delegationToken.mechanism`` (``SCRAM-SHA-512`` default, or ``SCRAM-SHA-256``): Spark's
  ``spark.kafka.clusters.<id>.sasl.token.mechanism``.

The cluster's other settings are the query's ``kafka.*`` options (``security.protocol``,
``sasl.kerberos.service.name``, ``ssl.*``; Spark's ``spark.kafka.clusters.<id>.kafka.<name>`` is
``kafka.<name>``). What the planning side then does is :mod:`spark_kwire.spark.delegation`.
"""

from __future__ import annotations

from typing import Mapping

from spark_kwire.client.settings.config import ClientConfig
from spark_kwire.client.settings.logins import DelegationTokenLogin
from spark_kwire.client.settings.parse import OptionValues
from spark_kwire.spark.errors import KwireOptionError

__all__ = ["DELEGATION_TOKEN_OPTIONS", "TOKEN_MECHANISMS", "check_security_options", "parse_delegation_token"]

DELEGATION_TOKEN_OPTIONS = ["delegationToken", "delegationToken.mechanism"]
TOKEN_MECHANISMS = ("SCRAM-SHA-512", "SCRAM-SHA-256")
_SASL_PROTOCOLS = ("SASL_PLAINTEXT", "SASL_SSL")


def check_security_options(values: OptionValues) -> None:
    """Refuse SASL options that the connection would not use (``values``: the ``kafka.*`` options as the settings
    read them, before the logins are built)."""
    protocol = values.security_protocol
    sasl = values.given_with("sasl.")
    if sasl and protocol not in _SASL_PROTOCOLS:
        raise KwireOptionError(
            f"Option 'kafka.{sasl[0]}' configures SASL authentication, but 'kafka.security.protocol' is {protocol}"
            f"{' (the default)' if 'security.protocol' not in values.given else ''}, which does not use SASL: set "
            f"kafka.security.protocol to SASL_SSL (SASL over TLS) or SASL_PLAINTEXT, as the brokers' listener "
            f"expects, or remove the kafka.sasl.* options.")
    kerberos = values.given_with("sasl.kerberos.")
    if kerberos and values.sasl_mechanism != "GSSAPI":
        raise KwireOptionError(
            f"Option 'kafka.{kerberos[0]}' applies to Kerberos (kafka.sasl.mechanism=GSSAPI), but "
            f"kafka.sasl.mechanism is {values.sasl_mechanism}: remove it, or set kafka.sasl.mechanism=GSSAPI.")


def parse_delegation_token(opts: Mapping[str, str], kafka: ClientConfig) -> str | None:
    """The SCRAM mechanism tasks authenticate with through a delegation token (``delegationToken=true``), or
    None when tasks use the query's settings as they are. `opts` has lower-case keys."""
    raw = opts.get("delegationtoken")
    mechanism = opts.get("delegationtoken.mechanism")
    enabled = str(raw).strip().lower() if raw is not None else "false"
    if enabled not in ("true", "false"):
        raise KwireOptionError(f"Option 'delegationToken' must be 'true' or 'false', got {raw!r}.")
    if enabled == "false":
        if mechanism is not None:
            raise KwireOptionError("Option 'delegationToken.mechanism' chooses how tasks authenticate with a "
                                   "delegation token and applies only with delegationToken=true.")
        return None
    mechanism = (mechanism or TOKEN_MECHANISMS[0]).strip().upper()
    if mechanism not in TOKEN_MECHANISMS:
        raise KwireOptionError(f"Option 'delegationToken.mechanism' must be one of {', '.join(TOKEN_MECHANISMS)} "
                               f"(delegation tokens authenticate through SCRAM), got {mechanism!r}.")
    protocol = kafka.security_protocol
    if protocol not in _SASL_PROTOCOLS:
        raise KwireOptionError(
            f"Option 'delegationToken' needs kafka.security.protocol SASL_SSL or SASL_PLAINTEXT (it is {protocol}): "
            f"the driver obtains the token over its own SASL login (Kerberos: kafka.sasl.mechanism=GSSAPI with a "
            f"keytab or ticket cache), and tasks authenticate with the token through SASL/SCRAM on the same listener.")
    if isinstance(kafka.sasl, DelegationTokenLogin):
        raise KwireOptionError(
            "Option 'delegationToken' obtains a token with the driver's own login, but kafka.sasl.jaas.config already "
            "authenticates with a delegation token (tokenauth=true), and Kafka refuses token requests from "
            "token-authenticated connections: give the driver's Kerberos login (kafka.sasl.mechanism=GSSAPI with a "
            "Krb5LoginModule line, or none for the ticket cache), or drop delegationToken.")
    return mechanism
