"""deliveryGuarantee=exactly-once: each Spark task writes inside one Kafka transaction, the driver commits them.

Tasks (executors): the transactional id of a task is ``<transactionalIdPrefix>-<partitionId>``. The task's
InitProducerId fences every earlier holder of that id (a failed earlier attempt of the task, or the same task
of a crashed run of the query) and the coordinator aborts what they left open. The task writes and flushes,
but does not commit: its commit message carries the transaction's (transactional id, producer id, epoch).

Driver: Spark calls ``commit`` once every task succeeded; it sends EndTxn(commit) for each task's transaction
(doing it again is harmless). ``abort`` aborts the transactions of tasks that reported one, and fences the
ids of tasks that did not (their transaction, if any, is aborted at once instead of blocking read_committed
readers until ``transaction.timeout.ms``).

Streaming: every task also commits, inside its transaction, the micro-batch id as the offset of a marker in
the consumer group named like its transactional id. When a micro-batch is replayed after a crash that came
after its transactions were committed but before Spark recorded the batch in its commit log, a task finds
its marker at (or past) the batch id and writes nothing: the batch is not written twice. A task whose
transaction had not been committed finds an older marker and writes the batch again (its earlier
transaction was aborted by its InitProducerId). This relies on a replayed micro-batch handing each task the
same rows as the first run, which holds for sources that replay by offsets (Kafka, kwire) without a
non-deterministic shuffle before the write.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from spark_kwire.client.admin.admin import Admin
from spark_kwire.client.producer.transactions import (TransactionError, TransactionFencedError, TransactionHandle,
                                             TransactionManager, TransactionStateError, end_transaction)
from spark_kwire.spark.errors import KwireWriteError

log = logging.getLogger("spark_kwire")

# The marker offset lives on partition 0 of this topic when the write has no 'topic' option: the group
# coordinator accepts offsets only for existing topics, and this one exists wherever there are groups.
FALLBACK_MARKER_TOPIC = "__consumer_offsets"
# Spark sets these local properties for the tasks of each micro-batch (MicroBatchExecution.BATCH_ID_KEY,
# StreamExecution.QUERY_ID_KEY: the query id, kept in the checkpoint, the same across restarts).
BATCH_ID_PROPERTY = "streaming.sql.batchId"
QUERY_ID_PROPERTY = "sql.streaming.queryId"


@dataclass(frozen=True)
class TaskTransaction:
    """What a task's commit message carries for the driver: the transaction to end, and when it began."""

    handle: TransactionHandle
    started_ms: int  # wall clock, to tell a transaction that outlived transaction.timeout.ms
    marker_group: str | None = None
    marker_topic: str | None = None
    marker_metadata: str | None = None


def task_identity() -> tuple[int, int | None, str | None]:
    """(partition id, micro-batch id or None, streaming query id or None) of the running Spark task."""
    from pyspark import TaskContext

    context = TaskContext.get()
    if context is None:
        raise KwireWriteError("exactly-once writes must run inside a Spark task (no TaskContext found)")
    raw = context.getLocalProperty(BATCH_ID_PROPERTY)
    return (context.partitionId(), (int(raw) if raw not in (None, "") else None),
            context.getLocalProperty(QUERY_ID_PROPERTY) or None)


def marker_metadata(query_id: str | None) -> str:
    """What a marker records besides the batch id: the query it belongs to. A query started on a new checkpoint
    (new query id, batch ids from 0 again) with the same prefix must not take the old query's markers for
    its own."""
    return f"kwire exactly-once micro-batch marker; query {query_id or '?'}"


def transactional_id(prefix: str, partition_id: int) -> str:
    return f"{prefix}-{partition_id}"


def marker_topic(topic_option: str | None) -> str:
    return topic_option or FALLBACK_MARKER_TOPIC


def committed_marker(client, group: str, topic: str, metadata: str) -> int:
    """The micro-batch id last committed by the task owning ``group`` for the query ``metadata`` names
    (-1: none, or a marker of another query)."""
    found = Admin(client).fetch_committed_offsets(group, [(topic, 0)]).get((topic, 0))
    if found is None or (found.metadata or "") != metadata:
        return -1
    return found.offset


class TaskTransactionWriter:
    """Begins a task's transaction; decides whether a replayed micro-batch was already written."""

    def __init__(self, client, prefix: str, timeout_ms: int, topic_option: str | None) -> None:
        self.partition_id, self.batch_id, query_id = task_identity()
        self.marker_metadata = marker_metadata(query_id)
        self.client = client
        self.timeout_ms = timeout_ms
        self.manager = TransactionManager(client, transactional_id(prefix, self.partition_id),
                                          transaction_timeout_ms=timeout_ms)
        self.started_ms = int(time.time() * 1000)
        self.manager.begin()  # fences earlier attempts; their open transaction is aborted
        self.marker_group = self.manager.transactional_id if self.batch_id is not None else None
        self.marker_topic = marker_topic(topic_option)
        self.already_written = False
        if self.batch_id is not None:
            last = committed_marker(client, self.marker_group, self.marker_topic, self.marker_metadata)
            self.already_written = last >= self.batch_id
            if self.already_written:
                log.info("kwire: micro-batch %d of task %d was committed to Kafka before (marker %d): not "
                         "written again", self.batch_id, self.partition_id, last)
            else:
                self.manager.send_offsets(self.marker_group, {(self.marker_topic, 0): self.batch_id},
                                          metadata=self.marker_metadata)

    def producer(self):
        return self.manager.producer()

    def finish(self) -> TaskTransaction | None:
        """After the producer flushed: the transaction for the driver (None when nothing is to commit)."""
        elapsed = int(time.time() * 1000) - self.started_ms
        if elapsed > self.timeout_ms:
            raise KwireWriteError(_outlived(self.manager.transactional_id, elapsed, self.timeout_ms))
        if self.manager.is_empty:
            return None
        return TaskTransaction(self.manager.handle, self.started_ms, self.marker_group, self.marker_topic,
                               self.marker_metadata)


def _outlived(txn_id: str, elapsed_ms: int, timeout_ms: int) -> str:
    return (f"The Kafka transaction {txn_id!r} was open {elapsed_ms} ms, longer than kafka.transaction.timeout.ms "
            f"({timeout_ms} ms): the transaction coordinator aborts transactions older than that, so its records "
            f"cannot be committed. Raise kafka.transaction.timeout.ms (up to the brokers' "
            f"transaction.max.timeout.ms, 15 minutes by default), or make each batch / micro-batch smaller "
            f"(e.g. maxOffsetsPerTrigger, more partitions).")


def _transactions(messages) -> list[tuple[int, TaskTransaction | None, bool]]:
    """(partition id, transaction or None, task reported) per commit message slot."""
    out = []
    for index, message in enumerate(messages or ()):
        transaction = getattr(message, "transaction", None)
        out.append((index, transaction, message is not None))
    return out


def commit_all(client, messages, timeout_ms: int, batch_id: int | None = None) -> int:
    """EndTxn(commit) for every task's transaction; returns how many were committed."""
    committed = 0
    for _, transaction, _ in _transactions(messages):
        if transaction is None:
            continue
        try:
            end_transaction(client, transaction.handle, commit=True)
        except (TransactionStateError, TransactionFencedError) as exc:
            if batch_id is not None and transaction.marker_group and \
                    committed_marker(client, transaction.marker_group, transaction.marker_topic,
                                     transaction.marker_metadata) >= batch_id:
                log.info("kwire: transaction %s of micro-batch %d was committed before", transaction.handle, batch_id)
                continue
            elapsed = int(time.time() * 1000) - transaction.started_ms
            if elapsed > timeout_ms:
                raise KwireWriteError(_outlived(transaction.handle.transactional_id, elapsed, timeout_ms)) from exc
            raise KwireWriteError(f"Committing the Kafka transaction of {transaction.handle.transactional_id!r} "
                                  f"failed: {exc}") from exc
        committed += 1
    return committed


def abort_all(client, messages, prefix: str, timeout_ms: int) -> None:
    """Abort what tasks reported, and fence the ids of tasks that reported nothing (best effort: a failure is
    logged, the coordinator aborts what is left after transaction.timeout.ms)."""
    for index, transaction, reported in _transactions(messages):
        try:
            if transaction is not None:
                end_transaction(client, transaction.handle, commit=False)
            elif not reported:
                TransactionManager(client, transactional_id(prefix, index), transaction_timeout_ms=timeout_ms).begin()
        except (TransactionError, Exception) as exc:  # noqa: BLE001 - aborting is best effort
            log.warning("kwire: could not abort the transaction of task %d (the coordinator aborts it after "
                        "transaction.timeout.ms): %s", index, exc)
