"""The state of an idempotent producer (KIP-98): its producer id and epoch, and per partition the next sequence
number and whether a batch of this producer id has been acknowledged there.

The accumulator stamps each encoded batch with the producer id, epoch and base sequence taken from here;
the sender asks whether a partition is confirmed (until then only its first batch may be in flight) and
marks it confirmed on the first acknowledgement.

The state outlives one write when a producer is reused (e.g. by the next Spark task in the same Python worker):
:meth:`IdempotenceState.forget_confirmations` makes every partition's next batch go alone again (the broker may
have dropped its state for this producer meanwhile), and :meth:`IdempotenceState.start_over` drops the producer id
after a failure, so that the next write asks for a new one. A transaction manager owns this object too: it sets
``transactional_id`` (sent in InitProducerId and Produce; batches are then marked transactional) and bumps the
epoch through :meth:`IdempotenceState.init_producer_id`.
"""

from __future__ import annotations

import logging

from spark_kwire.protocol import messages as m
from spark_kwire.protocol.errors import error_for

__all__ = ["IdempotenceState", "SEQUENCE_MASK"]

log = logging.getLogger(__name__)

SEQUENCE_MASK = 0x7FFFFFFF  # sequence numbers are int32 and wrap to 0 after 2**31 - 1

TopicPartition = tuple[str, int]


class IdempotenceState:
    """Producer id, epoch and sequence numbers. With ``enabled=False`` batches carry no producer id (-1)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = bool(enabled)
        self.producer_id = -1
        self.producer_epoch = -1
        self.transactional_id: str | None = None  # set by a transaction manager
        self._next_sequence: dict[TopicPartition, int] = {}
        self._confirmed: set[TopicPartition] = set()  # partitions with an acknowledged batch of this producer id

    @property
    def needs_producer_id(self) -> bool:
        return self.enabled and self.producer_id < 0

    @property
    def transactional(self) -> bool:
        """Whether batches are part of a transaction (a transactional id is set)."""
        return self.enabled and self.transactional_id is not None

    def start_over(self) -> None:
        """Forget the producer id, epoch and sequences: the next write gets a new producer id."""
        self.producer_id = -1
        self.producer_epoch = -1
        self._next_sequence.clear()
        self._confirmed.clear()

    def forget_confirmations(self) -> None:
        """Treat every partition as not yet confirmed (its next batch goes alone until acknowledged)."""
        self._confirmed.clear()

    def init_producer_id(self, client, budget_ms: int) -> None:
        """Get a producer id and epoch (InitProducerId without a transactional id), retrying within ``budget_ms``.

        Raises :class:`~spark_kwire.client.errors.RetriesExhaustedError` or a broker's
        :class:`~spark_kwire.protocol.errors.KafkaApiError`."""
        def body(version: int) -> dict:
            return {"transactional_id": self.transactional_id,
                    "transaction_timeout_ms": client.config.transaction_timeout_ms,
                    "producer_id": -1, "producer_epoch": -1}

        def attempt() -> dict:
            response = client.send_to(None, m.INIT_PRODUCER_ID, body, what="InitProducerId")
            code = response.get("error_code", 0)
            if code:
                raise error_for(code, error_message="InitProducerId for the idempotent producer")
            return response

        response = client.call_with_retry("InitProducerId", attempt, budget_ms=budget_ms)
        self.producer_id = response["producer_id"]
        self.producer_epoch = response["producer_epoch"]
        log.debug("idempotent producer id %d epoch %d", self.producer_id, self.producer_epoch)

    # -- what a new batch carries ----------------------------------------------------------------------------
    @property
    def batch_producer_id(self) -> int:
        return self.producer_id if self.enabled else -1

    @property
    def batch_producer_epoch(self) -> int:
        return self.producer_epoch if self.enabled else -1

    def next_sequence(self, tp: TopicPartition) -> int:
        """Base sequence of the next batch of ``tp`` (-1 when not idempotent)."""
        return self._next_sequence.get(tp, 0) if self.enabled else -1

    def advance(self, tp: TopicPartition, records: int) -> int:
        """Count ``records`` more records of ``tp`` as stamped; returns the next base sequence."""
        if not self.enabled:
            return -1
        sequence = (self._next_sequence.get(tp, 0) + records) & SEQUENCE_MASK
        self._next_sequence[tp] = sequence
        return sequence

    # -- what the brokers acknowledged ------------------------------------------------------------------------
    def confirm(self, tp: TopicPartition) -> None:
        self._confirmed.add(tp)

    def is_confirmed(self, tp: TopicPartition) -> bool:
        """True once a batch of ``tp`` with this producer id has been acknowledged: the broker then holds
        state for the producer there and rejects batches that arrive out of sequence order."""
        return tp in self._confirmed
