"""Retry primitives of the client layer: exponential backoff with jitter, and a per-operation retry budget.

Both are used by :class:`~spark_kwire.client.core.kafka_client.KafkaClient` and by what is layered on it
(admin, offsets, fetcher, producer); this module imports none of them, so any of them can import it.
"""

from __future__ import annotations

import logging
import random
import time
from typing import Iterable

from spark_kwire.client.settings.config import ClientConfig
from spark_kwire.client.errors import RetriesExhaustedError, is_retriable_error
from spark_kwire.protocol.errors import KwireError

__all__ = ["Backoff", "RetryBudget"]

log = logging.getLogger("spark_kwire.client")


class Backoff:
    """Exponential backoff retry.backoff.ms .. retry.backoff.max.ms with +-20% jitter."""

    def __init__(self, config: ClientConfig) -> None:
        self.base = config.retry_backoff_ms / 1000.0
        self.cap = max(config.retry_backoff_max_ms, config.retry_backoff_ms) / 1000.0
        self.attempt = 0

    def next_delay(self) -> float:
        delay = min(self.cap, self.base * (2 ** self.attempt))
        self.attempt += 1
        if delay <= 0:
            return 0.0
        return delay * random.uniform(0.8, 1.2) if delay < self.cap else delay * random.uniform(0.8, 1.0)

    def reset(self) -> None:
        self.attempt = 0


class RetryBudget:
    """Counts attempts of one operation and decides whether another one fits the time budget.

    ``client`` is the :class:`~spark_kwire.client.core.kafka_client.KafkaClient` whose config, metadata refresh and
    unknown-topic check the budget uses (passed in, not imported: the client builds budgets itself)."""

    def __init__(self, client, what: str, budget_ms: int | None = None) -> None:
        self.client = client
        self.what = what
        self.budget_s = (budget_ms if budget_ms is not None else client.config.request_timeout_ms) / 1000.0
        self.started = time.monotonic()
        self.deadline = self.started + self.budget_s
        self.attempts = 0
        self.backoff = Backoff(client.config)

    def failed(self, error: BaseException, refresh_topics: Iterable[str] | None = None) -> None:
        """Record a failure: raise it if not retriable or out of budget, else sleep and refresh metadata."""
        self.attempts += 1
        if not is_retriable_error(error):
            raise error
        topic = getattr(error, "topic", None)
        if topic is not None:  # UNKNOWN_TOPIC_OR_PARTITION is retried only while metadata says the topic exists
            self.client.check_unknown_topic(error, topic, getattr(error, "partition", None))
        delay = self.backoff.next_delay()
        now = time.monotonic()
        if self.attempts > self.client.config.retries or now + delay > self.deadline:
            raise RetriesExhaustedError(self.what, self.attempts, now - self.started, error) from error
        log.debug("%s: retriable error (attempt %d), retrying in %.3fs: %s", self.what, self.attempts, delay, error)
        time.sleep(delay)
        if refresh_topics is not None:
            try:
                self.client.refresh_metadata(list(refresh_topics) or [])
            except KwireError as exc:
                if not is_retriable_error(exc):
                    raise
                log.debug("%s: metadata refresh failed: %s", self.what, exc)

    def progressed(self) -> None:
        """Progress was made: restart the budget."""
        self.attempts = 0
        self.started = time.monotonic()
        self.deadline = self.started + self.budget_s
        self.backoff.reset()
