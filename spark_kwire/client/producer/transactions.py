"""Kafka transactions (KIP-98, KIP-890): a transactional producer identity, and ending a transaction from
another process.

:class:`TransactionManager` owns one transactional id. ``begin()`` finds the transaction coordinator
(FindCoordinator, key type 1) and gets a producer id and epoch (InitProducerId with the transactional id).
That call also fences every earlier holder of the id: the coordinator aborts a transaction they left open,
and their later requests fail with PRODUCER_FENCED. ``producer()`` gives a
:class:`~spark_kwire.client.producer.producer.Producer` whose batches are transactional; before a partition's first
batch is sent it is added to the transaction (AddPartitionsToTxn; under transactions v2, Produce v12+ adds it
implicitly). ``send_offsets`` puts a consumer-group offset commit into the transaction (AddOffsetsToTxn +
TxnOffsetCommit). ``end(commit)`` sends EndTxn.

A transaction can also be ended by someone else who knows its :class:`TransactionHandle` (transactional id,
producer id, epoch): :func:`end_transaction` is what a Spark driver calls to commit what its tasks wrote. It
is idempotent: ending a transaction again the same way succeeds; committing one that was aborted (or
aborting one that was committed) raises :class:`TransactionStateError`.

Transactions v2 (the broker's ``transaction.version`` >= 2, seen as EndTxn v5 in ApiVersions): every EndTxn
bumps the epoch, and the response carries the producer id and epoch to use next (a new producer id when the
epoch would overflow). The handle records which version the transaction used.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

from spark_kwire.client.core.coordinators import GROUP, TRANSACTION, find_coordinator
from spark_kwire.client.errors import ClientError, KwireError, RetriesExhaustedError, UnsupportedVersionError
from spark_kwire.client.producer.idempotence import IdempotenceState
from spark_kwire.protocol import messages as m
from spark_kwire.protocol.errors import KafkaApiError, error_for

__all__ = ["TransactionHandle", "TransactionManager", "TransactionError", "TransactionFencedError",
           "TransactionStateError", "end_transaction", "find_transaction_coordinator", "COORDINATOR_ERRORS"]

log = logging.getLogger(__name__)

COORDINATOR_LOAD_IN_PROGRESS = 14
COORDINATOR_NOT_AVAILABLE = 15
NOT_COORDINATOR = 16
INVALID_PRODUCER_EPOCH = 47
INVALID_TXN_STATE = 48
INVALID_TRANSACTION_TIMEOUT = 50
CONCURRENT_TRANSACTIONS = 51
TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53
GROUP_AUTHORIZATION_FAILED = 30
PRODUCER_FENCED = 90
COORDINATOR_ERRORS = (COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR)
_COORDINATOR_BUSY = (COORDINATOR_LOAD_IN_PROGRESS, CONCURRENT_TRANSACTIONS)
_FENCED = (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH)

TopicPartition = tuple[str, int]


class TransactionError(ClientError):
    """A transactional request failed; the message names the transactional id and what to do."""


class TransactionFencedError(TransactionError):
    """Another producer took over the transactional id (a later InitProducerId): this one may not go on."""


class TransactionStateError(TransactionError):
    """The transaction is not in a state that allows what was asked (e.g. committing one that was aborted,
    for instance by the coordinator after ``transaction.timeout.ms``)."""


@dataclass(frozen=True)
class TransactionHandle:
    """What another process needs to end a transaction: see :func:`end_transaction`."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    transaction_version: int  # 2: transactions v2 (KIP-890), EndTxn bumps the epoch; 1 otherwise


def _explain(code: int, transactional_id: str, what: str, error_message: str | None = None) -> KwireError:
    """The error for ``code``, in words that say what happened to the transaction and what to do."""
    detail = f" (broker said: {error_message})" if error_message else ""
    if code == TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
        return TransactionError(
            f"{what}: not authorized to use transactional id {transactional_id!r}{detail}. Exactly-once writes need "
            f"the ACL WRITE (and DESCRIBE) on resource TransactionalId {transactional_id!r} (a prefixed ACL on the "
            f"transactionalIdPrefix covers every task), e.g. kafka-acls --add --allow-principal User:<you> "
            f"--operation Write --transactional-id {transactional_id.rsplit('-', 1)[0]} --resource-pattern-type prefixed")
    if code == GROUP_AUTHORIZATION_FAILED:
        return TransactionError(f"{what}: not authorized to commit offsets to the group of transactional id "
                                f"{transactional_id!r}{detail}; grant READ on that consumer group")
    if code in _FENCED:
        return TransactionFencedError(
            f"{what}: transactional id {transactional_id!r} was taken over by a newer producer (a later InitProducerId "
            f"with the same id: a retried or speculative attempt of the same task, a restarted query, or another "
            f"query using the same transactionalIdPrefix); this producer is fenced and its open transaction was "
            f"aborted{detail}")
    if code == INVALID_TXN_STATE:
        return TransactionStateError(
            f"{what}: transaction of {transactional_id!r} is not in a state that allows it{detail}; it was probably "
            f"aborted already, e.g. by the coordinator after transaction.timeout.ms, or ended the other way")
    if code == INVALID_TRANSACTION_TIMEOUT:
        return TransactionError(
            f"{what}: the transaction timeout is larger than the brokers allow (their transaction.max.timeout.ms, "
            f"15 minutes by default){detail}; lower kafka.transaction.timeout.ms")
    return error_for(code, error_message=f"{what} for transactional id {transactional_id!r}"
                                         + (f": {error_message}" if error_message else ""))


def find_transaction_coordinator(client, transactional_id: str) -> int:
    """Node id of the transaction coordinator of ``transactional_id`` (FindCoordinator, key type 1)."""
    def explain(code: int, message: str | None) -> KwireError:
        return _explain(code, transactional_id, "finding the transaction coordinator", message)

    try:
        return find_coordinator(client, transactional_id, TRANSACTION, explain=explain)
    except UnsupportedVersionError as exc:
        raise _no_transactions(exc) from exc
    except RetriesExhaustedError as exc:
        if getattr(exc.last_error, "code", None) == COORDINATOR_NOT_AVAILABLE:
            raise TransactionError(
                f"no transaction coordinator became available for {transactional_id!r} ({exc}); the cluster "
                f"cannot run transactions until its transaction state topic (__transaction_state) exists: "
                f"check the brokers' transaction.state.log.replication.factor (default 3) against the number "
                f"of brokers, and transaction.state.log.min.isr") from exc
        raise


def _no_transactions(cause: BaseException) -> TransactionError:
    return TransactionError(
        f"this Kafka cluster does not support transactions ({cause}); exactly-once writes need brokers of Kafka "
        f"0.11 or later with the transaction state topic available (deliveryGuarantee=at-least-once works without)")


class _Coordinated:
    """Requests to the transaction coordinator of one transactional id, re-finding it when it moves."""

    def __init__(self, client, transactional_id: str, budget_ms: int | None = None) -> None:
        self.client = client
        self.transactional_id = transactional_id
        self.budget_ms = budget_ms if budget_ms is not None else client.api_budget_ms
        self._coordinator: int | None = None

    def coordinator(self, refresh: bool = False) -> int:
        if refresh or self._coordinator is None:
            self._coordinator = find_transaction_coordinator(self.client, self.transactional_id)
        return self._coordinator

    def call(self, what: str, api, body: dict, errors: Callable[[dict], Iterable[tuple]] = None,
             max_version: int | None = None) -> dict:
        """Send ``body`` to the coordinator (at most ``max_version``) and raise the first error ``errors(response)``
        yields as ``(code, what failed[, broker's message])`` (by default the response's top-level error code).
        Coordinator moves, loading, CONCURRENT_TRANSACTIONS and connection loss are retried within the budget."""
        errors = errors or (lambda response: [(response.get("error_code", 0), what)])
        budget = self.client.retry_budget(f"{what} ({self.transactional_id})", self.budget_ms)
        refresh = False
        while True:
            try:
                conn = self.client.connection(self.coordinator(refresh))
                try:
                    version = conn.version_for(api, max_version)
                except UnsupportedVersionError as exc:
                    raise _no_transactions(exc) from exc
                response = conn.request(api, body, version)
                for code, failed, *message in errors(response):
                    if code:
                        raise _explain(code, self.transactional_id, failed, message[0] if message else None)
                return response
            except KwireError as exc:
                # look the coordinator up again unless it answered that it is busy: it may have moved or died
                refresh = not (isinstance(exc, KafkaApiError) and exc.code in _COORDINATOR_BUSY)
                budget.failed(exc)


class _GroupCoordinator(_Coordinated):
    """The same retries, addressed to a consumer group's coordinator (TxnOffsetCommit goes there)."""

    def __init__(self, client, transactional_id: str, group: str) -> None:
        super().__init__(client, transactional_id)
        self.group = group

    def coordinator(self, refresh: bool = False) -> int:
        if refresh or self._coordinator is None:
            self._coordinator = find_coordinator(self.client, self.group, GROUP)
        return self._coordinator


def _transaction_version(client, coordinator: int) -> int:
    return 2 if client.connection(coordinator).supports(m.END_TXN, 5) else 1


class TransactionManager:
    """A transactional producer identity: see the module docstring. Not thread-safe."""

    def __init__(self, client, transactional_id: str, *, transaction_timeout_ms: int | None = None) -> None:
        if not transactional_id:
            raise ValueError("a transactional id must not be empty")
        self.client = client
        self.transactional_id = transactional_id
        self.transaction_timeout_ms = int(transaction_timeout_ms or client.config.transaction_timeout_ms)
        self.state = IdempotenceState(True)
        self.state.transactional_id = transactional_id
        self.transaction_version = 1
        self._coordinated = _Coordinated(client, transactional_id)
        self._partitions: set[TopicPartition] = set()
        self._groups: set[str] = set()

    # -- identity --------------------------------------------------------------------------------------
    @property
    def producer_id(self) -> int:
        return self.state.producer_id

    @property
    def producer_epoch(self) -> int:
        return self.state.producer_epoch

    @property
    def handle(self) -> TransactionHandle:
        """(transactional id, producer id, epoch, version) of the current transaction."""
        return TransactionHandle(self.transactional_id, self.producer_id, self.producer_epoch,
                                 self.transaction_version)

    @property
    def partitions(self) -> frozenset:
        """Partitions added to the current transaction."""
        return frozenset(self._partitions)

    def begin(self) -> TransactionHandle:
        """InitProducerId: a producer id and epoch for the transactional id, fencing earlier holders (their
        open transaction is aborted). Retries while the coordinator completes an earlier transaction."""
        body = {"transactional_id": self.transactional_id, "transaction_timeout_ms": self.transaction_timeout_ms,
                "producer_id": -1, "producer_epoch": -1, "enable2_pc": False, "keep_prepared_txn": False}
        response = self._coordinated.call("InitProducerId", m.INIT_PRODUCER_ID, body)
        self._start(response["producer_id"], response["producer_epoch"])
        coordinator = self._coordinated.coordinator()
        self.transaction_version = _transaction_version(self.client, coordinator)
        log.debug("transactional id %s: producer id %d epoch %d (transactions v%d)", self.transactional_id,
                  self.producer_id, self.producer_epoch, self.transaction_version)
        return self.handle

    def _start(self, producer_id: int, producer_epoch: int) -> None:
        """A new transaction under (producer id, epoch): sequences restart at 0, no partition added yet."""
        fresh = IdempotenceState(True)
        fresh.transactional_id = self.transactional_id
        fresh.producer_id, fresh.producer_epoch = producer_id, producer_epoch
        self.state.__dict__.update(fresh.__dict__)  # producers hold this object: update it in place
        self._partitions.clear()
        self._groups.clear()

    def _require_begun(self) -> None:
        if self.producer_id < 0:
            raise TransactionError(f"transactional id {self.transactional_id!r}: call begin() first")

    # -- writing ---------------------------------------------------------------------------------------
    def producer(self, **settings):
        """A :class:`~spark_kwire.client.producer.producer.Producer` writing inside this transaction (acks=all)."""
        from spark_kwire.client.producer.producer import Producer

        self._require_begun()
        return Producer(self.client, transaction=self, **settings)

    def add_partitions(self, tps: Iterable[TopicPartition]) -> None:
        """Add partitions to the transaction before their first batch is sent (the producer calls this)."""
        new = sorted({(str(t), int(p)) for t, p in tps} - self._partitions)
        if not new:
            return
        self._require_begun()
        by_topic: dict[str, list[int]] = {}
        for topic, partition in new:
            by_topic.setdefault(topic, []).append(partition)
        body = {"v3_and_below_transactional_id": self.transactional_id, "v3_and_below_producer_id": self.producer_id,
                "v3_and_below_producer_epoch": self.producer_epoch,
                "v3_and_below_topics": [{"name": t, "partitions": ps} for t, ps in by_topic.items()]}

        def errors(response):
            for topic in response.get("results_by_topic_v3_and_below") or ():
                for part in topic.get("results_by_partition") or ():
                    yield (part.get("partition_error_code", 0),
                           f"adding {topic['name']}-{part['partition_index']} to the transaction (AddPartitionsToTxn)")

        # Versions 4+ are broker-to-broker (verification); clients use 3 at most.
        self._coordinated.call("AddPartitionsToTxn", m.ADD_PARTITIONS_TO_TXN, body, errors, max_version=3)
        self._partitions.update(new)

    def send_offsets(self, group: str, offsets: Mapping[TopicPartition, int], metadata: str | None = None) -> None:
        """Commit ``{(topic, partition): offset}`` for consumer group ``group`` inside the transaction: visible
        (to OffsetFetch) only if the transaction commits. Topics need not exist."""
        self._require_begun()
        if group not in self._groups:
            self._coordinated.call(f"adding group {group!r} to the transaction (AddOffsetsToTxn)",
                                   m.ADD_OFFSETS_TO_TXN, {**self._identity(), "group_id": group})
            self._groups.add(group)
        by_topic: dict[str, list] = {}
        for (topic, partition), offset in offsets.items():
            by_topic.setdefault(topic, []).append({"partition_index": int(partition), "committed_offset": int(offset),
                                                   "committed_leader_epoch": -1, "committed_metadata": metadata})
        body = {**self._identity(), "group_id": group, "generation_id": -1, "member_id": "", "group_instance_id": None,
                "topics": [{"name": t, "partitions": ps} for t, ps in by_topic.items()]}

        def errors(response):
            for topic in response.get("topics") or ():
                for part in topic.get("partitions") or ():
                    yield (part.get("error_code", 0),
                           f"committing offsets of group {group!r} in the transaction (TxnOffsetCommit)")

        _GroupCoordinator(self.client, self.transactional_id, group).call("TxnOffsetCommit", m.TXN_OFFSET_COMMIT,
                                                                           body, errors)

    def _identity(self) -> dict:
        """The fields that name this producer's transaction in AddOffsetsToTxn, TxnOffsetCommit and EndTxn."""
        return {"transactional_id": self.transactional_id, "producer_id": self.producer_id,
                "producer_epoch": self.producer_epoch}

    # -- ending ----------------------------------------------------------------------------------------
    @property
    def is_empty(self) -> bool:
        """True while nothing (no partition, no offsets) is part of the current transaction: the coordinator
        then has no transaction to end, and EndTxn would answer INVALID_TXN_STATE."""
        return not self._partitions and not self._groups

    def end(self, commit: bool) -> None:
        """Commit (or abort) the current transaction (EndTxn; nothing to send when it is empty). Flush the
        producer first: what it has not had acknowledged is not part of the transaction. Afterwards a new
        transaction can start."""
        self._require_begun()
        if self.is_empty:
            return
        new_id, new_epoch = end_transaction(self.client, self.handle, commit, coordinated=self._coordinated)
        self._start(new_id, new_epoch)


def end_transaction(client, handle: TransactionHandle, commit: bool, *, coordinated: _Coordinated | None = None,
                    budget_ms: int | None = None) -> tuple[int, int]:
    """Commit (``commit=True``) or abort the transaction ``handle`` describes, from any process (EndTxn).

    Idempotent: ending it again the same way succeeds. Raises :class:`TransactionStateError` when it was ended
    the other way (e.g. aborted by the coordinator after transaction.timeout.ms) and
    :class:`TransactionFencedError` when a newer producer took the transactional id over before it was ended
    (its open transaction was then aborted). Returns the (producer id, epoch) the next transaction of the id
    would use (under transactions v2 the epoch is bumped by every EndTxn)."""
    coordinated = coordinated or _Coordinated(client, handle.transactional_id, budget_ms)
    word = "commit" if commit else "abort"
    max_version = 5 if handle.transaction_version >= 2 else 4

    body = {"transactional_id": handle.transactional_id, "producer_id": handle.producer_id,
            "producer_epoch": handle.producer_epoch, "committed": bool(commit)}
    response = coordinated.call(f"{word} (EndTxn)", m.END_TXN, body, max_version=max_version)
    new_id = response.get("producer_id", -1)
    new_epoch = response.get("producer_epoch", -1)
    if new_id is None or new_id < 0:
        new_id, new_epoch = handle.producer_id, handle.producer_epoch
    log.debug("transactional id %s: %s of producer id %d epoch %d done", handle.transactional_id, word,
              handle.producer_id, handle.producer_epoch)
    return new_id, new_epoch
