"""The Spark layer's exceptions, in one place. Each names what was wrong and what is accepted or how to go on.

Errors of the client layer (connections, brokers, producing) keep their own classes
(:mod:`spark_kwire.client.errors`) and reach the user as they are.
"""

from __future__ import annotations

from spark_kwire.client.errors import MetadataAuthorizationError
from spark_kwire.protocol.errors import KwireError

__all__ = ["KwireOptionError", "DataLossError", "KwireCommitError", "KwireWriteError", "MetadataAuthorizationError",
           "KwireSchemaError", "KwireRecordDecodeError"]


class KwireOptionError(KwireError, ValueError):
    """An option is missing, unknown or malformed; the message names it and what is accepted."""


class DataLossError(KwireError):
    """Requested offsets are no longer (or not yet) in the topic and failOnDataLoss is true."""


class KwireCommitError(KwireError):
    """Committing a micro-batch's end offsets to the consumer group of commitOffsetsToGroup failed."""


class KwireWriteError(KwireError):
    """A row cannot be written (null topic, partition out of range...)."""


class KwireSchemaError(KwireError):
    """A typed read or write cannot get or use its schema (subject or version not found, registry unreachable or
    refusing the credentials, a DataFrame that does not fit the schema); the message names which and where."""


class KwireRecordDecodeError(KwireError):
    """A record's key or value does not decode with its schema (mode=FAILFAST): the message names the topic,
    partition, offset, schema id and field."""
