"""kwire's per-query delegation-token options. (The ``kafka.*`` security settings that only make sense together,
SASL settings under a SASL protocol and the like, are checked by the client's settings, which ``spark_kwire.admin``
uses too: :func:`spark_kwire.client.settings.parse.check_together`.)

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
from spark_kwire.client.settings.parse import SASL_PROTOCOLS
from spark_kwire.spark.errors import KwireOptionError
from spark_kwire.spark.options.rules import given, value
from spark_kwire.spark.options.values import TOKEN_MECHANISMS

__all__ = ["TOKEN_MECHANISMS", "parse_delegation_token"]


def parse_delegation_token(opts: Mapping[str, str], kafka: ClientConfig) -> str | None:
    """The SCRAM mechanism tasks authenticate with through a delegation token (``delegationToken=true``), or
    None when tasks use the query's settings as they are. `opts` has lower-case keys."""
    if not value(opts, "delegationToken"):
        if given(opts, "delegationToken.mechanism"):
            raise KwireOptionError("Option 'delegationToken.mechanism' chooses how tasks authenticate with a "
                                   "delegation token and applies only with delegationToken=true.")
        return None
    mechanism = value(opts, "delegationToken.mechanism")
    protocol = kafka.security_protocol
    if protocol not in SASL_PROTOCOLS:
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
