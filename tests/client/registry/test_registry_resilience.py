"""Failover, retries, deadlines and caching of kwire's registry client, against the test registry's injected
faults (connections closed, 5xx, 429, answers that never come) and its request log."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import threading
import time

import pytest

from harness import free_port
from harness.schema_registry import SchemaRegistryServer
from spark_kwire.client.registry import (RegistryAuthError, RegistryClient, RegistryUnreachableError, Schema,
                                         SchemaNotFoundError)

FAST = {"retries.wait.ms": "20", "retries.max.wait.ms": "100", "timeout": "2"}


def kwire(url: str, **options) -> RegistryClient:
    return RegistryClient({"url": url, **FAST, **options})


def test_failover_skips_a_dead_first_url(registry):
    dead = f"http://127.0.0.1:{free_port()}"
    schema_id = kwire(registry.url).register("s", Schema('"int"'))
    client = kwire(f"{dead},{registry.url}", **{"max.retries": "0"})
    assert client.schema_by_id(schema_id).text == '"int"'
    assert client.versions("s") == [1]


def test_the_url_that_answered_is_asked_first_afterwards(registry):
    with SchemaRegistryServer() as failing:
        failing.respond_next(1000, 503)
        client = kwire(f"{failing.url},{registry.url}", **{"max.retries": "0"})
        assert client.subjects() == []
        assert failing.count() == 1
        for _ in range(3):
            assert client.subjects() == []
        assert failing.count() == 1  # not asked again while the second URL answers
        assert registry.count("GET", "/subjects") == 4


def test_retries_on_503_then_succeeds(registry):
    client = kwire(registry.url)
    registry.respond_next(2, 503)
    assert client.subjects() == []
    assert registry.count("GET", "/subjects") == 3
    assert [r.status for r in registry.requests] == [503, 503, 200]


def test_retries_when_the_connection_is_closed_without_an_answer(registry):
    registry.refuse_next(2)
    assert kwire(registry.url).subjects() == []
    assert [r.status for r in registry.requests] == [None, None, 200]


def test_429_waits_at_least_what_retry_after_asks(registry):
    registry.respond_next(1, 429, headers={"Retry-After": "1"})
    started = time.monotonic()
    assert kwire(registry.url).subjects() == []
    assert time.monotonic() - started >= 0.95
    assert registry.count("GET", "/subjects") == 2


def test_4xx_answers_are_not_retried(registry):
    client = kwire(registry.url)
    with pytest.raises(SchemaNotFoundError):
        client.schema_by_id(5)
    registry.respond_next(1, 401)
    with pytest.raises(RegistryAuthError):
        client.subjects()
    assert registry.count("GET", "/schemas/ids/5") == 1 and registry.count("GET", "/subjects") == 1


def test_retries_run_out_and_the_error_names_every_url_and_the_last_cause(registry):
    dead = f"http://127.0.0.1:{free_port()}"
    registry.respond_next(100, 503, {"error_code": 50001, "message": "Error in the backend datastore"})
    client = kwire(f"{dead},{registry.url}", **{"max.retries": "2"})
    with pytest.raises(RegistryUnreachableError) as caught:
        client.subjects()
    message = str(caught.value)
    assert dead in message and registry.url in message
    assert "refused" in message.lower()
    assert message.endswith("last error: HTTP 503: Error in the backend datastore")
    assert len(caught.value.attempts) == 6 and registry.count() == 3  # 3 rounds over 2 URLs
    assert caught.value.retriable


def test_a_hanging_registry_fails_within_the_configured_time(registry):
    registry.delay_next(100, 60)
    client = kwire(registry.url, **{"timeout": "0.5", "max.retries": "10", "total.timeout.ms": "1500"})
    started = time.monotonic()
    with pytest.raises(RegistryUnreachableError) as caught:
        client.subjects()
    elapsed = time.monotonic() - started
    assert 1.3 <= elapsed < 2.5, elapsed
    assert "no answer within 0.5 s" in str(caught.value)
    assert "total.timeout.ms=1500" in str(caught.value)
    registry.clear_faults()


def test_one_request_per_schema_id_per_process_even_under_concurrency(registry):
    schema_id = kwire(registry.url).register("s", Schema(json.dumps({"type": "enum", "name": "E", "symbols": ["A"]})))
    registry.clear_log()
    registry.delay_next(1, 0.5)  # the first fetch is slow: every other thread arrives while it is in flight
    client = kwire(registry.url)
    results, errors = [], []

    def fetch():
        try:
            results.append(client.schema_by_id(schema_id))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=fetch) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not errors and len(results) == 16 and len({r.text for r in results}) == 1
    assert registry.count("GET", f"/schemas/ids/{schema_id}") == 1
    # another client of the same registry in this process (a new Spark task), and an unpickled one, share it
    assert kwire(registry.url).schema_by_id(schema_id) == results[0]
    assert pickle.loads(pickle.dumps(client)).schema_by_id(schema_id) == results[0]
    assert registry.count("GET", f"/schemas/ids/{schema_id}") == 1
    # another process fetches once for itself
    script = (f"import pickle, sys; client = pickle.loads({pickle.dumps(client)!r}); "
              f"[client.schema_by_id({schema_id}) for _ in range(3)]")
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
    assert registry.count("GET", f"/schemas/ids/{schema_id}") == 2


def test_a_failed_fetch_is_not_cached(registry):
    schema_id = kwire(registry.url).register("s", Schema('"int"'))
    registry.respond_next(1, 500)
    client = kwire(registry.url, **{"max.retries": "0"})
    with pytest.raises(RegistryUnreachableError):
        client.schema_by_id(schema_id)
    assert client.schema_by_id(schema_id).text == '"int"'


def test_latest_versions_are_asked_each_time_unless_a_ttl_is_set(registry):
    kwire(registry.url).register("s", Schema('"int"'))
    plain = kwire(registry.url)
    for _ in range(3):
        plain.latest_version("s")
    assert registry.count("GET", "/subjects/s/versions/latest") == 3
    cached = kwire(registry.url, **{"cache.latest.ttl.sec": "0.5"})
    for _ in range(3):
        cached.latest_version("s")
    assert registry.count("GET", "/subjects/s/versions/latest") == 4
    time.sleep(0.6)
    cached.latest_version("s")
    assert registry.count("GET", "/subjects/s/versions/latest") == 5


def test_cache_capacity_bounds_what_a_process_keeps(registry):
    writer = kwire(registry.url)
    ids = [writer.register(f"s{i}", Schema(json.dumps({"type": "fixed", "name": f"F{i}", "size": i + 1})))
           for i in range(3)]
    client = kwire(registry.url, **{"cache.capacity": "2"})
    for schema_id in ids + ids[-1:]:
        client.schema_by_id(schema_id)
    assert [registry.count("GET", f"/schemas/ids/{i}") for i in ids] == [1, 1, 1]
    client.schema_by_id(ids[0])  # evicted by the third one
    assert registry.count("GET", f"/schemas/ids/{ids[0]}") == 2
