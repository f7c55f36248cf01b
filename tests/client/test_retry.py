"""Retry primitives (client/retry.py): backoff growth, cap and jitter; retry budgets by time and by attempts."""

from __future__ import annotations

import time

import pytest

from spark_kwire.client import BrokerConnectionError, ClientConfig, KafkaClient, RetriesExhaustedError
from spark_kwire.client.retry import Backoff, RetryBudget


def test_backoff_doubles_from_retry_backoff_ms_up_to_the_max_with_jitter():
    backoff = Backoff(ClientConfig.from_kafka_options({"retry.backoff.ms": "100", "retry.backoff.max.ms": "1000"}))
    for _ in range(50):  # the jitter is random: every draw must stay in its band
        backoff.reset()
        delays = [backoff.next_delay() for _ in range(6)]
        for delay, nominal in zip(delays, (0.1, 0.2, 0.4, 0.8)):
            assert 0.8 * nominal <= delay <= 1.2 * nominal, delays
        assert all(0.8 <= d <= 1.0 for d in delays[4:]), delays  # capped: never above retry.backoff.max.ms
    assert Backoff(ClientConfig.from_kafka_options({"retry.backoff.ms": "0", "retry.backoff.max.ms": "0"})) \
        .next_delay() == 0.0


def _client(**options) -> KafkaClient:
    """A client that never connects: nothing here refreshes metadata."""
    return KafkaClient({"bootstrap.servers": "127.0.0.1:1", **options})


def test_retry_budget_raises_non_retriable_errors_at_once():
    budget = RetryBudget(_client(), "an operation")
    error = ValueError("not a Kafka error")
    with pytest.raises(ValueError) as info:
        budget.failed(error)
    assert info.value is error and budget.attempts == 1


def test_retry_budget_ends_when_its_time_is_spent():
    budget = RetryBudget(_client(**{"retry.backoff.ms": "10", "retry.backoff.max.ms": "20"}), "reading x", 300)
    started = time.monotonic()
    with pytest.raises(RetriesExhaustedError) as info:
        while True:
            budget.failed(BrokerConnectionError("h:1", "refused"))
    elapsed = time.monotonic() - started
    assert 0.2 < elapsed < 1.0, elapsed
    assert info.value.attempts == budget.attempts > 5 and "reading x" in str(info.value)
    assert isinstance(info.value.last_error, BrokerConnectionError)


def test_retry_budget_ends_after_retries_attempts_and_progress_restarts_it():
    budget = RetryBudget(_client(**{"retries": "2", "retry.backoff.ms": "1", "retry.backoff.max.ms": "1"}), "op", 60_000)
    budget.failed(BrokerConnectionError("h:1", "refused"))
    budget.failed(BrokerConnectionError("h:1", "refused"))
    budget.progressed()
    assert budget.attempts == 0
    budget.failed(BrokerConnectionError("h:1", "refused"))
    budget.failed(BrokerConnectionError("h:1", "refused"))
    with pytest.raises(RetriesExhaustedError) as info:
        budget.failed(BrokerConnectionError("h:1", "refused"))
    assert info.value.attempts == 3
