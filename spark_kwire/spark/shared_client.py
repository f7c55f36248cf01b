"""What a Python process shares between the Spark tasks it runs (Spark reuses Python workers, one task at a
time each): one KafkaClient per distinct configuration, and the idempotent producers of tasks that ended
cleanly, so that the next task's write needs no connection set-up, no InitProducerId and no metadata request."""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator

from spark_kwire.client.core.kafka_client import KafkaClient
from spark_kwire.client.settings.config import ClientConfig

if TYPE_CHECKING:  # the producer (and numba with it) is imported by the tasks that write, not by planning
    from spark_kwire.client.producer.producer import Producer

__all__ = ["shared_client", "leased_producer", "PRODUCER_REUSE_IDLE_S"]

# A producer left idle longer than this is not reused: the next task asks for a new producer id.
PRODUCER_REUSE_IDLE_S = 600.0

_clients: dict[str, KafkaClient] = {}
_idle_producers: dict[str, list["Producer"]] = {}
_lock = threading.Lock()


def shared_client(settings: ClientConfig) -> KafkaClient:
    """One client per distinct configuration in this Python process, reused across Spark tasks
    (Spark reuses Python workers), so a task does not pay for connecting and negotiating again. The settings come
    parsed from the driver; their fingerprint (a digest, equal in every process) is the key."""
    key = settings.fingerprint
    with _lock:
        client = _clients.get(key)
        if client is None:
            client = KafkaClient(settings)
            _clients[key] = client
        return client


@contextmanager
def leased_producer(settings: ClientConfig) -> Iterator[Producer]:
    """A producer for one task's write, on the shared client of ``settings``.

    It is the producer of an earlier task of this process when that task's write ended with everything
    acknowledged (nothing in doubt) less than PRODUCER_REUSE_IDLE_S ago: the same producer id, with the sequence
    numbers going on, and each partition's first batch alone in flight again. A write that raises, or leaves
    anything unacknowledged, closes its producer, so the next task starts clean with a new producer id."""
    key = settings.fingerprint
    client = shared_client(settings)
    producer = None
    with _lock:
        idle = _idle_producers.get(key, [])
        while idle and producer is None:
            candidate = idle.pop()
            if candidate.reusable and time.monotonic() - candidate.last_used < PRODUCER_REUSE_IDLE_S:
                producer = candidate
            else:
                candidate.close()
    if producer is None:
        from spark_kwire.client.producer.producer import Producer

        producer = Producer(client)
    else:
        producer.prepare_for_reuse()
    try:
        yield producer
    except BaseException:
        producer.close()
        raise
    if producer.reusable:
        with _lock:
            _idle_producers.setdefault(key, []).append(producer)
    else:
        producer.close()
