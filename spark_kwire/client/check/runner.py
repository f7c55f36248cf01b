"""The order of a check, and what a failed step means for the next ones.

1. the settings; 2-4. each bootstrap server: resolve, connect, TLS, SASL, ApiVersions (:mod:`.connection.steps`);
5. Metadata from the first bootstrap server that passed, and each advertised broker as in 2-4 (:mod:`.brokers`);
6. the topics named (:mod:`.topics`); 7. the schema registry (:mod:`.registry_probe`); 8. with checkThroughput,
a short fetch from the leaders (:mod:`.throughput`).

A failed step does not hide the others: what does not depend on it still runs (the registry does not depend on the
brokers), and what does gets a skipped row naming the step that blocked it. A step that raises something the check
did not foresee becomes a failed row (kind ``check_error``) rather than ending the run.
"""

from __future__ import annotations

import logging
import socket
from typing import Any, Callable, Mapping

from spark_kwire.client.check.brokers import check_brokers
from spark_kwire.client.check.connection.credentials import HostCredentials
from spark_kwire.client.check.connection.steps import Target, check_target
from spark_kwire.client.check.context import CheckRun
from spark_kwire.client.check.options import CheckSettings, parse_check_options
from spark_kwire.client.check.registry_probe import check_registry
from spark_kwire.client.check.rows import (METADATA, REGISTRY, SASL_AUTHENTICATE, SETTINGS, THROUGHPUT,
                                           TLS_HANDSHAKE, TOPIC, TOPIC_ACCESS, CheckReport)
from spark_kwire.client.check.throughput import check_throughput
from spark_kwire.client.check.topics import check_topics, named_topics

__all__ = ["run_check", "check_connection"]

log = logging.getLogger(__name__)
EVERY_BROKER = "every broker"


def _guarded(run: CheckRun, step: str, target: str, action: Callable[[], Any], default: Any = None) -> Any:
    try:
        return action()
    except Exception as exc:  # noqa: BLE001 - reported as a row: the rest of the run goes on
        log.debug("kwire check: step %s raised", step, exc_info=True)
        run.fail(step, target, f"the check itself failed: {type(exc).__name__}: {exc}", "check_error")
        return default


def _settings_rows(run: CheckRun) -> None:
    settings = run.settings
    config = settings.client
    protocol = config.security_protocol
    described = f"security.protocol={protocol}"
    if protocol.startswith("SASL_"):
        described += f", sasl.mechanism={config.sasl_mechanism}"
    described += (f"; {len(config.bootstrap_servers)} bootstrap server(s); each step waits at most "
                  f"{settings.step_timeout_ms / 1000:.1f} s, the run {settings.run_timeout_ms / 1000:.1f} s")
    if settings.ignored:
        named = "; ".join(f"kafka.{name} ({why})" for name, why in settings.ignored)
        run.warn(SETTINGS, "options", f"{described}. No effect in kwire: {named}", "settings_no_effect")
    else:
        run.ok(SETTINGS, "options", described)
    if not protocol.endswith("SSL"):
        run.skipped(TLS_HANDSHAKE, EVERY_BROKER, f"security.protocol={protocol}: no TLS, connections are not "
                                                 f"encrypted")
    if not protocol.startswith("SASL_"):
        run.skipped(SASL_AUTHENTICATE, EVERY_BROKER, f"security.protocol={protocol}: no SASL login")


def _blocked_cluster(run: CheckRun, reason: str) -> None:
    run.blocked([METADATA], "cluster", reason)
    names = named_topics(run)
    for name in names:
        run.blocked([TOPIC, TOPIC_ACCESS], f"topic {name}", reason)
    if run.settings.topics.pattern is not None:
        run.blocked([TOPIC], f"subscribePattern {run.settings.topics.pattern}", reason)
    if not run.settings.topics:
        run.skipped(TOPIC, "topics", "no topic named (subscribe, subscribePattern, assign or topic)")
    if run.settings.throughput:
        run.blocked([THROUGHPUT], "topics", reason)
    else:
        run.skipped(THROUGHPUT, "topics", "checkThroughput is not set")


def run_check(settings: CheckSettings, *, host: str | None = None, executor: str = "python") -> CheckReport:
    """Run every step with ``settings`` from this process; rows carry ``host`` (default: this host's name) and
    ``executor``. Never raises for what it finds: every finding is a row."""
    run = CheckRun(settings, host=host or socket.gethostname(), executor=executor)
    _settings_rows(run)
    credentials = HostCredentials(run)
    conn, bootstrap = None, None
    first_row = len(run.rows)
    for host_name, port in settings.client.bootstrap_servers:
        target = Target("bootstrap", host_name, port)
        checked = _guarded(run, "connect", str(target), lambda: check_target(run, credentials, target))
        if checked is not None and conn is None:
            conn, bootstrap = checked, target
        elif checked is not None:
            checked.close()
    topics_named = named_topics(run)
    try:
        if conn is None:
            failed = next((r for r in run.rows[first_row:] if r.outcome == "fail"), None)
            why = f" ({failed.step} failed for {failed.target})" if failed is not None else ""
            _blocked_cluster(run, f"no bootstrap server passed the connection steps{why}")
        else:
            metadata, passed = _guarded(run, METADATA, str(bootstrap),
                                        lambda: check_brokers(run, credentials, conn, bootstrap), (None, {}))
            if metadata is None:
                _blocked_cluster(run, f"{METADATA} failed")
            else:
                readable = _guarded(run, TOPIC, "topics", lambda: check_topics(run, conn, metadata, passed), {})
                topics_named = list(dict.fromkeys(topics_named + list(readable)))
                _guarded(run, THROUGHPUT, "topics", lambda: check_throughput(run, readable, metadata, passed))
    finally:
        if conn is not None:
            conn.close()
    _guarded(run, REGISTRY, "schema registry", lambda: check_registry(run, topics_named))
    return run.report()


def check_connection(options: Mapping[str, Any], *, host: str | None = None, executor: str = "python") -> CheckReport:
    """Parse ``options`` (a kwire read's: ``kafka.*``, the topics, ``schema.registry.*``, ``checkThroughput``...)
    and run the check; bad options raise, everything the check finds is a row."""
    return run_check(parse_check_options(options), host=host, executor=executor)
