"""Step 7: the schema registry, where one is configured (``schema.registry.url``): each URL is reachable from this
host, the registry accepts the credentials, and the subjects of the topics' values and keys (TopicNameStrategy:
``<topic>-value``, ``<topic>-key``) with their latest version. Independent of the brokers: a registry behind
another network shows here even when the brokers answer, and the other way round."""

from __future__ import annotations

import dataclasses
import urllib.parse

from spark_kwire.client.check.connection.network import NetworkError, resolve, tcp_connect
from spark_kwire.client.check.context import CheckRun, Stopwatch
from spark_kwire.client.check.rows import REGISTRY, REGISTRY_AUTH, REGISTRY_SUBJECT
from spark_kwire.client.registry.client import RegistryClient
from spark_kwire.client.registry.errors import (RegistryAuthError, RegistryError, RegistryTlsError,
                                                RegistryUnreachableError)

__all__ = ["check_registry"]

_TARGET = "schema registry"


def _reachable(run: CheckRun, url: str) -> bool:
    parts = urllib.parse.urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    watch = Stopwatch()
    try:
        addresses = resolve(parts.hostname, port, run.step_timeout_s())
        errors = []
        for address in addresses:
            try:
                tcp_connect(address, port, run.step_timeout_s())
                run.ok(REGISTRY, url, f"{parts.hostname}:{port} ({address}) accepted a TCP connection", watch.ms)
                return True
            except NetworkError as exc:
                errors.append(f"{address}: {exc}")
        run.fail(REGISTRY, url, "; ".join(errors), "registry_unreachable", watch.ms)
    except NetworkError as exc:
        run.fail(REGISTRY, url, str(exc), "registry_unreachable", watch.ms)
    return False


def _failure_kind(exc: RegistryError) -> str:
    if isinstance(exc, RegistryAuthError):
        return "registry_denied" if exc.status == 403 else "registry_credentials_refused"
    if isinstance(exc, RegistryTlsError):
        return "registry_tls"
    if isinstance(exc, RegistryUnreachableError):
        return "registry_unreachable"
    return "registry_failed"


def check_registry(run: CheckRun, topics: list[str]) -> None:
    """Report the registry's steps for ``topics``."""
    config = run.settings.registry
    if config is None:
        run.skipped(REGISTRY, _TARGET, "no schema.registry.url: no schema registry to check")
        return
    if run.out_of_time:
        run.blocked([REGISTRY, REGISTRY_AUTH, REGISTRY_SUBJECT], _TARGET, run.out_of_time_reason)
        return
    if not any([_reachable(run, url) for url in config.urls]):
        run.blocked([REGISTRY_AUTH, REGISTRY_SUBJECT], _TARGET, f"{REGISTRY} failed for every URL")
        return
    step_ms = max(1, int(run.step_timeout_s() * 1000))
    bounded = dataclasses.replace(config, timeout_s=min(config.timeout_s, step_ms / 1000.0),
                                  total_timeout_ms=min(config.total_timeout_ms, step_ms), max_retries=0,
                                  cache_latest_ttl_s=None)
    client = RegistryClient(bounded)
    watch = Stopwatch()
    try:
        subjects = set(client.subjects())
    except RegistryError as exc:
        run.fail(REGISTRY_AUTH, _TARGET, f"{exc} (credentials: {client.credentials.describe()})",
                 _failure_kind(exc), watch.ms)
        run.blocked([REGISTRY_SUBJECT], _TARGET, f"{REGISTRY_AUTH} failed")
        return
    run.ok(REGISTRY_AUTH, _TARGET, f"listed {len(subjects)} subject(s) with {client.credentials.describe()}",
           watch.ms)
    if not topics:
        run.skipped(REGISTRY_SUBJECT, _TARGET, "no topic named: no subject to look up")
    for topic in topics:
        for side in ("value", "key"):
            subject = f"{topic}-{side}"
            target = f"subject {subject}"
            if subject not in subjects:
                if side == "value":
                    run.warn(REGISTRY_SUBJECT, target, f"no subject {subject} (TopicNameStrategy) in the registry",
                             "subject_missing")
                else:
                    run.ok(REGISTRY_SUBJECT, target, f"no subject {subject}: keys without a registered schema")
                continue
            watch = Stopwatch()
            try:
                latest = client.latest_version(subject)
            except RegistryError as exc:
                run.fail(REGISTRY_SUBJECT, target, str(exc), _failure_kind(exc), watch.ms)
                continue
            run.ok(REGISTRY_SUBJECT, target, f"version {latest.version}, schema id {latest.schema_id}, "
                                             f"{latest.schema.schema_type}", watch.ms)
