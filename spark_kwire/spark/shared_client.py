"""One KafkaClient per distinct configuration in each Python process, shared by the Spark layer's readers,
writers and planners."""

from __future__ import annotations

import threading

from spark_kwire.client.config import ClientConfig
from spark_kwire.client.kafka_client import KafkaClient

__all__ = ["shared_client"]

_clients: dict[tuple, KafkaClient] = {}
_clients_lock = threading.Lock()


def shared_client(kafka_params: dict) -> KafkaClient:
    """One client per distinct configuration in this Python process, reused across Spark tasks
    (Spark reuses Python workers), so a task does not pay for connecting and negotiating again."""
    key = tuple(sorted(kafka_params.items()))
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            client = KafkaClient(ClientConfig.from_kafka_options(kafka_params))
            _clients[key] = client
        return client
