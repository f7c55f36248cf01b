"""One Produce request and its response: the request body for a list of batches (at most one per partition),
and the response read back into one :class:`BatchOutcome` per batch. No sockets, no state."""

from __future__ import annotations

from dataclasses import dataclass

from spark_kwire.client.producer.accumulator import ProducerBatch
from spark_kwire.protocol.errors import KafkaApiError, error_for

__all__ = ["BatchOutcome", "request_body", "read_response", "NONE", "MESSAGE_TOO_LARGE", "RECORD_LIST_TOO_LARGE",
           "OUT_OF_ORDER_SEQUENCE_NUMBER", "DUPLICATE_SEQUENCE_NUMBER", "UNKNOWN_PRODUCER_ID"]

NONE = 0
UNKNOWN_SERVER_ERROR = -1
MESSAGE_TOO_LARGE = 10
RECORD_LIST_TOO_LARGE = 18
OUT_OF_ORDER_SEQUENCE_NUMBER = 45
DUPLICATE_SEQUENCE_NUMBER = 46
UNKNOWN_PRODUCER_ID = 59
LEADER_NOT_AVAILABLE = 5


@dataclass
class BatchOutcome:
    """What a broker said about one batch: ``code`` 0 with ``base_offset``, or an ``error``."""
    batch: ProducerBatch
    code: int
    base_offset: int = -1
    error: BaseException | None = None

    @property
    def ok(self) -> bool:
        return self.code == NONE


def request_body(batches: list[ProducerBatch], version: int, *, acks: int, timeout_ms: int,
                 transactional_id: str | None, topic_ids) -> dict:
    """The Produce body for ``batches``; ``topic_ids(topic)`` gives the topic id (v13+)."""
    by_topic: dict[str, list] = {}
    for batch in batches:
        by_topic.setdefault(batch.topic, []).append({"index": batch.partition, "records": batch.payload})
    topic_data = []
    for topic, parts in by_topic.items():
        entry = {"name": topic, "partition_data": parts}
        if version >= 13:
            entry["topic_id"] = topic_ids(topic)
        topic_data.append(entry)
    return {"transactional_id": transactional_id, "acks": acks, "timeout_ms": timeout_ms, "topic_data": topic_data}


def read_response(body: dict, version: int, batches: list[ProducerBatch], broker: int, topic_by_id) -> list[BatchOutcome]:
    """One outcome per batch, in the order of ``batches``; ``topic_by_id(id)`` names a topic (v13+)."""
    by_key = {}
    for topic in body.get("responses") or ():
        name = topic.get("name")
        if version >= 13:
            info = topic_by_id(topic.get("topic_id"))
            name = info.name if info is not None else name
        for part in topic.get("partition_responses") or ():
            by_key[(name, part["index"])] = part
    outcomes = []
    for batch in batches:
        part = by_key.get((batch.topic, batch.partition))
        if part is None:
            outcomes.append(BatchOutcome(batch, LEADER_NOT_AVAILABLE, error=KafkaApiError(
                LEADER_NOT_AVAILABLE, topic=batch.topic, partition=batch.partition, broker=broker,
                error_message="partition missing from the Produce response")))
            continue
        code = part.get("error_code", 0)
        if code == NONE:
            outcomes.append(BatchOutcome(batch, NONE, part.get("base_offset", -1)))
            continue
        message = part.get("error_message")
        record_errors = part.get("record_errors") or ()
        if record_errors:
            detail = "; ".join(f"record {e.get('batch_index')}: {e.get('batch_index_error_message')}"
                               for e in record_errors[:3])
            message = f"{message or ''} ({detail})".strip()
        outcomes.append(BatchOutcome(batch, code, error=error_for(code, topic=batch.topic, partition=batch.partition,
                                                                  broker=broker, error_message=message)))
    return outcomes
