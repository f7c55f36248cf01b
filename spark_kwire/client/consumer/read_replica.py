"""Which replica a partition is fetched from: its leader, or with ``client.rack`` the replica its leader prefers
(KIP-392, rack-aware fetching).

Without ``client.rack`` every fetch goes to the partition's leader and nothing here costs a request. With it,
each Fetch carries the rack; a leader whose brokers run a rack-aware ``replica.selector.class`` answers with a
*preferred read replica* instead of records, and the partition's next fetches go to that replica, as Kafka's
Java consumer does, until

* ``metadata.max.age.ms`` has passed since the leader named it (the leader is then asked again);
* the cluster metadata no longer lists it as an in-sync replica of the partition, or as a broker;
* a fetch from it fails, or answers with an error (NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH,
  UNKNOWN_LEADER_EPOCH, OFFSET_NOT_AVAILABLE, OFFSET_OUT_OF_RANGE...), or it waited ``fetch.max.wait.ms``
  without having records the range needs (its high watermark lags behind the leader's).

After a failure the partition is read from its leader alone (the Fetch then names no rack, so the leader serves
the records itself) for ``request.timeout.ms``: a replica that just failed is not tried again at once.

Choices are kept on the client (``client.read_replicas``), so the readers of one Python worker share what the
leaders said, as the Java consumer's subscription state keeps it across polls. ListOffsets always goes to the
leader.
"""

from __future__ import annotations

import logging
import time
from typing import NamedTuple

from spark_kwire.client.errors import KwireError

__all__ = ["FetchTarget", "fetch_target", "follow_redirect", "leave_replica", "planned_read_node"]

log = logging.getLogger(__name__)


class FetchTarget(NamedTuple):
    """Where one Fetch of a partition goes and the rack it names (``""``: none, the leader serves)."""
    node: int
    rack_id: str
    replica: bool  # True when ``node`` is not the partition's leader


class _Choice(NamedTuple):
    node: int  # the preferred read replica; -1: read from the leader alone
    until: float  # time.monotonic() after which the leader is asked again


def fetch_target(client, topic: str, partition: int) -> FetchTarget:
    """Where the partition's next Fetch goes. Raises the retriable error of ``client.leader_for`` when the
    partition has no leader."""
    leader = client.leader_for(topic, partition)
    rack = client.config.client_rack
    if not rack:
        return FetchTarget(leader, "", False)
    key = (topic, partition)
    choice = client.read_replicas.get(key)
    if choice is None:
        return FetchTarget(leader, rack, False)
    if time.monotonic() >= choice.until:
        client.read_replicas.pop(key, None)
        return FetchTarget(leader, rack, False)
    if choice.node < 0:
        return FetchTarget(leader, "", False)
    if choice.node == leader or not _in_sync(client, topic, partition, choice.node):
        client.read_replicas.pop(key, None)
        return FetchTarget(leader, rack, False)
    return FetchTarget(choice.node, rack, True)


def follow_redirect(client, topic: str, partition: int, node: int) -> None:
    """The partition's leader named ``node`` its preferred read replica: fetch from it from now on, unless the
    metadata (refreshed once) does not know it as an in-sync replica; then read from the leader alone."""
    if not _in_sync(client, topic, partition, node):
        try:
            client.refresh_metadata([topic])
        except KwireError as exc:
            log.debug("metadata refresh for %s failed: %s", topic, exc)
        if not _in_sync(client, topic, partition, node):
            leave_replica(client, topic, partition, node, "the metadata does not list it as an in-sync replica")
            return
    log.debug("%s-%s: reading from broker %s, the preferred read replica its leader named", topic, partition, node)
    expires = time.monotonic() + client.config.metadata_max_age_ms / 1000
    client.read_replicas[(topic, partition)] = _Choice(node, expires)


def leave_replica(client, topic: str, partition: int, node: int, why: str) -> None:
    """Stop reading the partition from replica ``node``: its leader serves it alone for request.timeout.ms."""
    log.debug("%s-%s: back to the leader from replica %s (%s)", topic, partition, node, why)
    client.read_replicas[(topic, partition)] = _Choice(-1, time.monotonic() + client.config.request_timeout_ms / 1000)


def planned_read_node(client, topic: str, partition: int) -> int:
    """The broker a range of the partition is expected to be read from, for grouping ranges when planning: its
    leader, or with ``client.rack`` an in-sync replica in that rack (the leader's answer decides when reading)."""
    leader = client.leader_for(topic, partition)
    rack = client.config.client_rack
    if not rack:
        return leader
    brokers = client.metadata.brokers
    if getattr(brokers.get(leader), "rack", None) == rack:
        return leader
    part = client.partition_info(topic, partition)
    for node in part.replicas:
        if node in part.isr and getattr(brokers.get(node), "rack", None) == rack:
            return node
    return leader


def _in_sync(client, topic: str, partition: int, node: int) -> bool:
    if node not in client.metadata.brokers:
        return False
    part = client.partition_info(topic, partition)
    return node in part.isr and node not in part.offline_replicas
