"""Delegation tokens in Spark's model (``delegationToken=true``, options in :mod:`.sasl_options`).

The planning side (Spark's driver: a batch read's planning, every micro-batch's ``partitions``, the writer
made for every write job and micro-batch) logs in with the query's own options (Kerberos), and gets the token
of its cluster and principal from :func:`~spark_kwire.client.admin.token_keeper.held_delegation_token` (one per
process, renewed or replaced before it expires). Tasks receive the query's settings with the driver's login
replaced by the token's (:class:`~spark_kwire.client.settings.logins.DelegationTokenLogin`: SASL/SCRAM with its id
as user name, its HMAC as password, ``tokenauth=true``): they never touch Kerberos, so executors need no keytab,
ticket cache or krb5 config, and the driver's Kerberos settings do not travel to them.

How the token reaches tasks: a read's partitions carry it (:class:`TokenAuthenticated`), because Spark makes a
stream's task-side reader once, when the query starts, while it plans partitions for every micro-batch; a
write's options carry it, because Spark makes the writer again for every job and micro-batch. The HMAC travels
as a :class:`~spark_kwire.client.settings.secret.Secret` (masked in pickles, ``'***'`` in reprs and plans).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from pyspark.sql.datasource import InputPartition

from spark_kwire.client.admin.delegation_tokens import DelegationTokenError
from spark_kwire.client.admin.token_keeper import held_delegation_token
from spark_kwire.client.settings.config import ClientConfig
from spark_kwire.spark.shared_client import shared_client

__all__ = ["TokenAuthenticated", "token_task_options", "partitions_for_tasks", "write_options_for_tasks"]


@dataclass(frozen=True)
class TokenAuthenticated(InputPartition):
    """A planned read partition and the Kafka settings its task reads with (a delegation token's SCRAM login)."""
    partition: InputPartition
    kafka: ClientConfig = field(repr=False, hash=False, compare=False)

    @property
    def size(self) -> int:
        return getattr(self.partition, "size", 0)


def token_task_options(kafka: ClientConfig, mechanism: str) -> ClientConfig:
    """The settings tasks use: `kafka` with its login replaced by SCRAM `mechanism` as the delegation token this
    process holds for the cluster and the principal `kafka` logs in as."""
    client = shared_client(kafka)
    try:
        token = held_delegation_token(client)
    except DelegationTokenError as exc:
        servers = ",".join(f"{h}:{p}" for h, p in client.config.bootstrap_servers)
        raise DelegationTokenError(
            f"delegationToken=true: the driver could not obtain a Kafka delegation token from {servers} for its "
            f"tasks: {exc}", code=exc.code) from None
    return kafka.replace(sasl_mechanism=mechanism, sasl=token.login(mechanism))


def partitions_for_tasks(partitions: list, options) -> list:
    """`partitions` as planned, each carrying the token's options when the read uses a delegation token (obtained
    even when there is nothing to read, so that a cluster refusing tokens fails every query the same way)."""
    if not options.delegation_token:
        return partitions
    kafka = token_task_options(options.kafka, options.delegation_token)
    return [TokenAuthenticated(partition, kafka) for partition in partitions]


def write_options_for_tasks(options):
    """A write's options with the token's login instead of the driver's, when it uses a delegation token."""
    if not options.delegation_token:
        return options
    return dataclasses.replace(options, kafka=token_task_options(options.kafka, options.delegation_token))
