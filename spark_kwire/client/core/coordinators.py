"""Finding coordinators (FindCoordinator): the broker that owns a consumer group or a transactional id."""

from __future__ import annotations

from typing import Callable

from spark_kwire.protocol import messages as m
from spark_kwire.protocol.errors import KwireError, error_for

__all__ = ["GROUP", "TRANSACTION", "find_coordinator"]

GROUP = 0
TRANSACTION = 1
_WHAT = {GROUP: "group", TRANSACTION: "transactional id"}


def find_coordinator(client, key: str, key_type: int = GROUP, *,
                     explain: Callable[[int, str | None], KwireError] | None = None) -> int:
    """Node id of the coordinator of ``key`` (a group id or, with ``key_type=TRANSACTION``, a transactional id),
    retried within the client's budget; the coordinator's address is registered with the client.

    ``explain(code, error_message)`` turns an error code into the exception to raise (retriable ones are
    retried); by default Kafka's error for the code, naming the key."""
    what = _WHAT.get(key_type, f"key type {key_type}")

    def body(version: int) -> dict:
        if version >= 4:
            return {"key_type": key_type, "coordinator_keys": [key]}
        return {"key": key, "key_type": key_type}

    def attempt() -> int:
        response = client.send_to(None, m.FIND_COORDINATOR, body, what=f"FindCoordinator({key})")
        entry = response["coordinators"][0] if response.get("coordinators") else response
        code = entry.get("error_code", 0)
        if code:
            message = entry.get("error_message")
            if explain is not None:
                raise explain(code, message)
            raise error_for(code, error_message=f"{what} {key!r}: {message or ''}".strip())
        client.register_broker(entry["node_id"], entry["host"], entry["port"])
        return entry["node_id"]

    return client.call_with_retry(f"finding the coordinator of {what} {key!r}", attempt)
