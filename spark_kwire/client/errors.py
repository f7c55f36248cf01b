"""Exceptions raised by the client layer.

Every exception subclasses :class:`spark_kwire.protocol.errors.KwireError`. Broker error codes surface
as :class:`KafkaApiError` (from the protocol layer) carrying topic/partition/broker context; the classes
here cover what the client itself detects. Each exception has a ``retriable`` attribute and pickles
with its message intact (Spark ships exceptions from executors to the driver).
"""

from __future__ import annotations

from spark_kwire.protocol.errors import KafkaApiError, KwireError

__all__ = [
    "KwireError",
    "KafkaApiError",
    "ClientError",
    "ConfigError",
    "BrokerConnectionError",
    "RequestTimeoutError",
    "UnsupportedVersionError",
    "UnknownTopicError",
    "OffsetOutOfRangeError",
    "ProduceError",
    "FetchStalledError",
    "RetriesExhaustedError",
    "UnknownNameError",
    "MetadataAuthorizationError",
    "is_retriable_error",
]


class ClientError(KwireError):
    """Base of the client layer's own exceptions.

    Subclasses keep their constructor arguments in ``self._args`` so that pickling rebuilds them.
    """

    retriable = False

    def __reduce__(self):
        return (_rebuild, (type(self), str(self), self.__dict__.copy()))


def _rebuild(cls, message, state):
    obj = cls.__new__(cls)
    Exception.__init__(obj, message)
    obj.__dict__.update(state)
    return obj


class ConfigError(ClientError, ValueError):
    """A Kafka client property has a value the client cannot use."""

    def __init__(self, key: str, value, accepted: str | None = None, reason: str | None = None) -> None:
        self.key = key
        self.value = value
        self.accepted = accepted
        text = f"invalid value {value!r} for Kafka option {key!r}"
        if reason:
            text += f": {reason}"
        if accepted:
            text += f" (accepted: {accepted})"
        super().__init__(text)


class BrokerConnectionError(ClientError, ConnectionError):
    """The TCP/TLS connection to a broker failed, closed, or broke mid-frame. Retriable."""

    retriable = True

    def __init__(self, address: str, message: str, *, node_id: int | None = None) -> None:
        self.address = address
        self.node_id = node_id
        who = f"broker {node_id} at {address}" if node_id is not None and node_id >= 0 else f"broker at {address}"
        super().__init__(f"{who}: {message}")


class RequestTimeoutError(BrokerConnectionError, TimeoutError):
    """No (complete) answer from a broker within the allowed time. Retriable; the connection is closed."""


class UnsupportedVersionError(ClientError):
    """The broker and this client have no version of an API in common."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


class UnknownTopicError(ClientError):
    """The topic does not exist (according to fresh cluster metadata)."""

    def __init__(self, topic: str, existing: list[str] | None = None, *, partition: int | None = None) -> None:
        self.topic = topic
        self.partition = partition
        self.existing = list(existing or [])
        what = f"topic {topic!r}" if partition is None else f"partition {partition} of topic {topic!r}"
        text = f"{what} does not exist"
        if self.existing:
            shown = ", ".join(repr(t) for t in self.existing[:5])
            more = f" and {len(self.existing) - 5} more" if len(self.existing) > 5 else ""
            text += f"; existing topics include {shown}{more}"
        elif existing is not None:
            text += "; the cluster has no topics"
        super().__init__(text)


class OffsetOutOfRangeError(ClientError):
    """A fetch asked for an offset outside the partition's log [log_start_offset, log_end_offset].

    ``log_start_offset`` / ``log_end_offset`` are the partition's current bounds (-1 when they could not
    be looked up). The Spark layer decides with failOnDataLoss whether to fail or skip ahead.
    """

    def __init__(self, topic: str, partition: int, offset: int, log_start_offset: int, log_end_offset: int,
                 broker: int | None = None) -> None:
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.log_start_offset = log_start_offset
        self.log_end_offset = log_end_offset
        self.broker = broker
        super().__init__(
            f"offset {offset} is out of range for topic {topic!r} partition {partition}: the log currently "
            f"holds offsets [{log_start_offset}, {log_end_offset}) (records before {log_start_offset} were "
            f"deleted by retention/compaction, or the requested offset is beyond the end)"
        )


class ProduceError(ClientError):
    """Records could not be written (non-retriable broker error, or the delivery budget ran out).

    Nothing in the failed batch may be assumed written; earlier acknowledged batches stay written.
    ``acknowledged`` is ``{(topic, partition): records}`` acknowledged by the brokers before the failure
    (since the producer's last successful ``flush()``), ``acknowledged_records`` their sum; records not
    counted there were not acknowledged (some of them may still have been written: at-least-once).
    ``broker`` is the leader's node id (None when no leader was known), ``broker_address`` its host:port.
    """

    def __init__(self, topic: str, partition: int, message: str, *, broker: int | None = None,
                 error: BaseException | None = None, code: int | None = None, broker_address: str | None = None,
                 acknowledged: dict | None = None) -> None:
        self.topic = topic
        self.partition = partition
        self.broker = broker
        self.broker_address = broker_address
        self.code = code if code is not None else getattr(error, "code", None)
        self.error = error
        self.error_name = getattr(error, "name", None) if error is not None else None
        self.acknowledged = dict(acknowledged or {})
        self.acknowledged_records = sum(self.acknowledged.values())
        where = f"topic {topic!r} partition {partition}"
        if broker is not None and broker >= 0:
            where += f" (leader broker {broker}" + (f" at {broker_address})" if broker_address else ")")
        elif broker_address:
            where += f" (broker at {broker_address})"
        else:
            where += " (no leader known)"
        text = f"producing to {where} failed: {message}"
        if error is not None:
            text += f"; last error: {error}"
        if acknowledged is not None:
            text += (f". Acknowledged before the failure: {self.acknowledged_records} record(s) in "
                     f"{sum(1 for v in self.acknowledged.values() if v)} partition(s); records not acknowledged "
                     f"may or may not have been written")
        super().__init__(text)

    def __reduce__(self):
        state = self.__dict__.copy()
        error = state.get("error")
        if error is not None:  # keep the pickle safe even if the cause does not pickle
            try:
                import pickle
                pickle.dumps(error)
            except Exception:
                state["error"] = None
        return (_rebuild, (type(self), str(self), state))


class FetchStalledError(ClientError):
    """A fetch made no progress although the partition has data at the offset (retried until the budget ends)."""

    retriable = True

    def __init__(self, topic: str, partition: int, offset: int, detail: str) -> None:
        self.topic = topic
        self.partition = partition
        self.offset = offset
        super().__init__(f"fetching {topic!r} partition {partition} made no progress at offset {offset}: {detail}")


class RetriesExhaustedError(ClientError):
    """A retriable error kept happening until the time/attempt budget ran out. ``last_error`` is the cause."""

    def __init__(self, what: str, attempts: int, elapsed_s: float, last_error: BaseException) -> None:
        self.what = what
        self.attempts = attempts
        self.elapsed_s = elapsed_s
        self.last_error = last_error
        super().__init__(f"{what} failed after {attempts} attempt(s) over {elapsed_s:.1f}s: {last_error}")


class UnknownNameError(ClientError, ValueError):
    """A topic or group selected by its exact name (e.g. for a cluster table) does not exist."""


class MetadataAuthorizationError(ClientError):
    """The principal may not see what a cluster-table read asked for; names the error, the resource and the ACL."""


def is_retriable_error(exc: BaseException) -> bool:
    """True for errors worth retrying after a metadata refresh and a backoff."""
    return bool(getattr(exc, "retriable", False)) and isinstance(exc, KwireError)
