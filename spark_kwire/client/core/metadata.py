"""Immutable views of cluster metadata (brokers, topics, partitions) built from Metadata responses."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

__all__ = ["BrokerInfo", "PartitionInfo", "TopicInfo", "ClusterMetadata", "is_zero_uuid"]

_ZERO_UUIDS = (None, uuid.UUID(int=0), b"\x00" * 16)


def is_zero_uuid(value: Any) -> bool:
    return value in _ZERO_UUIDS


@dataclass(frozen=True)
class BrokerInfo:
    node_id: int
    host: str
    port: int
    rack: str | None = None

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True)
class PartitionInfo:
    topic: str
    partition: int
    leader: int  # -1 when there is no leader
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...]
    error_code: int = 0


@dataclass(frozen=True)
class TopicInfo:
    name: str
    topic_id: Any  # uuid.UUID, None when the broker did not send one
    is_internal: bool
    partitions: dict  # partition index -> PartitionInfo
    error_code: int = 0

    @property
    def partition_ids(self) -> list[int]:
        return sorted(self.partitions)


@dataclass
class ClusterMetadata:
    """The client's cache. Replaced wholesale-per-topic on refresh (readers see consistent objects)."""

    brokers: dict = field(default_factory=dict)  # node id -> BrokerInfo
    topics: dict = field(default_factory=dict)  # name -> TopicInfo
    cluster_id: str | None = None
    controller_id: int = -1
    updated_at: float = 0.0  # time.monotonic() of the last refresh
    topic_updated_at: dict = field(default_factory=dict)  # name -> monotonic time

    def topic_by_id(self, topic_id: Any) -> TopicInfo | None:
        for info in self.topics.values():
            if info.topic_id == topic_id:
                return info
        return None

    def merge(self, body: dict, requested: list[str] | None) -> set[str]:
        """Apply a decoded Metadata response; returns the names of requested topics that do not exist."""
        now = time.monotonic()
        self.brokers = {
            b["node_id"]: BrokerInfo(b["node_id"], b["host"], b["port"], b.get("rack")) for b in body.get("brokers") or ()
        }
        self.cluster_id = body.get("cluster_id")
        self.controller_id = body.get("controller_id", -1)
        missing: set[str] = set()
        seen: dict[str, TopicInfo] = {}
        for t in body.get("topics") or ():
            name = t.get("name")
            code = t.get("error_code", 0)
            if name is None:
                continue
            if code == 3:  # UNKNOWN_TOPIC_OR_PARTITION
                missing.add(name)
                continue
            partitions = {}
            for p in t.get("partitions") or ():
                info = PartitionInfo(
                    topic=name,
                    partition=p["partition_index"],
                    leader=p.get("leader_id", -1),
                    leader_epoch=p.get("leader_epoch", -1),
                    replicas=tuple(p.get("replica_nodes") or ()),
                    isr=tuple(p.get("isr_nodes") or ()),
                    offline_replicas=tuple(p.get("offline_replicas") or ()),
                    error_code=p.get("error_code", 0),
                )
                partitions[info.partition] = info
            topic_id = t.get("topic_id")
            seen[name] = TopicInfo(name, None if is_zero_uuid(topic_id) else topic_id, bool(t.get("is_internal")),
                                   partitions, code)
        if requested is None:
            self.topics = seen
            self.topic_updated_at = {name: now for name in seen}
        else:
            for name in requested:
                if name not in seen:
                    missing.add(name)
            for name in missing:
                self.topics.pop(name, None)
                self.topic_updated_at.pop(name, None)
            for name, info in seen.items():
                self.topics[name] = info
                self.topic_updated_at[name] = now
        self.updated_at = now
        return missing
