"""Step 5: the cluster's brokers as Metadata advertises them, each checked as the bootstrap servers were.

The classic failure shows here: the bootstrap servers answer, but the brokers advertise addresses (their
``advertised.listeners``) that this host cannot resolve or reach, and every read and write goes to those.
"""

from __future__ import annotations

from spark_kwire.client.check.connection.credentials import HostCredentials
from spark_kwire.client.check.connection.steps import Target, check_target
from spark_kwire.client.check.context import CheckRun, Stopwatch
from spark_kwire.client.check.rows import METADATA
from spark_kwire.client.core.connection import BrokerConnection
from spark_kwire.client.core.metadata import ClusterMetadata
from spark_kwire.protocol import messages as m
from spark_kwire.protocol.errors import KwireError, error_info

__all__ = ["check_brokers", "request_metadata"]


def request_metadata(run: CheckRun, conn: BrokerConnection, topics: list[str] | None) -> tuple[dict, int]:
    """A Metadata answer for ``topics`` (None: every topic) with each topic's authorized operations (v8+), and the
    version it was asked with."""
    version = conn.version_for(m.METADATA)
    body = {"topics": None if topics is None else [{"name": t} for t in topics], "allow_auto_topic_creation": False,
            "include_cluster_authorized_operations": False, "include_topic_authorized_operations": version >= 8}
    timeout_ms = max(1, int(run.step_timeout_s() * 1000))
    return conn.request(m.METADATA, body, version, timeout_ms=timeout_ms), version


def check_brokers(run: CheckRun, credentials: HostCredentials, conn: BrokerConnection,
                  bootstrap: Target) -> tuple[ClusterMetadata | None, dict[int, bool]]:
    """Report the cluster's brokers, then steps 1-4 for each; (the metadata, node id -> whether its checks passed),
    or (None, {}) when Metadata failed."""
    watch = Stopwatch()
    try:
        body, _ = request_metadata(run, conn, [])
    except KwireError as exc:
        run.fail(METADATA, bootstrap, f"Metadata request failed: {exc}", "metadata_failed", watch.ms)
        return None, {}
    code = body.get("error_code") or 0
    metadata = ClusterMetadata()
    metadata.merge(body, [])
    if code or not metadata.brokers:
        why = f"the broker answered {error_info(code).name}" if code else "the answer lists no broker"
        run.fail(METADATA, bootstrap, f"Metadata: {why}", "metadata_failed", watch.ms)
        return None, {}
    listed = "; ".join(f"{b.node_id} at {b.address}" + (f" (rack {b.rack})" if b.rack else "")
                       for b in sorted(metadata.brokers.values(), key=lambda b: b.node_id))
    run.ok(METADATA, bootstrap, f"cluster {metadata.cluster_id}, controller {metadata.controller_id}; "
                                f"{len(metadata.brokers)} broker(s) advertised: {listed}", watch.ms)
    passed = {}
    for node_id, broker in sorted(metadata.brokers.items()):
        checked = check_target(run, credentials, Target("broker", broker.host, broker.port, node_id))
        passed[node_id] = checked is not None
        if checked is not None:
            checked.close()
    return metadata, passed
