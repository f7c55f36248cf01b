"""Admin operations layered on the client, as franz-go's kadm is on kgo: ``Admin(client)`` creates and deletes
topics, describes configs, finds group coordinators, lists and describes groups, and commits and fetches
group offsets. (Offsets of partitions are :func:`spark_kwire.client.consumer.offsets.list_offsets`.)"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from spark_kwire.client.errors import KwireError
from spark_kwire.client.core.coordinators import GROUP, find_coordinator
from spark_kwire.client.retry import Backoff
from spark_kwire.protocol import messages as m
from spark_kwire.protocol.errors import KafkaApiError, error_for

__all__ = ["Admin", "GroupListing", "GroupDescription", "GroupMember", "CommittedOffset", "ConfigEntry"]

TOPIC_ALREADY_EXISTS = 36
UNKNOWN_TOPIC_OR_PARTITION = 3
COORDINATOR_ERRORS = (14, 15, 16)  # COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR
RESOURCE_TOPIC = 2


@dataclass(frozen=True)
class GroupListing:
    group_id: str
    protocol_type: str
    state: str = ""
    group_type: str = ""
    coordinator: int = -1


@dataclass(frozen=True)
class GroupMember:
    member_id: str
    client_id: str
    client_host: str
    group_instance_id: str | None = None


@dataclass(frozen=True)
class GroupDescription:
    group_id: str
    state: str
    protocol_type: str
    protocol: str
    members: tuple = ()
    coordinator: int = -1
    error_code: int = 0
    group_type: str = "classic"  # "consumer" for KIP-848 groups (described by ConsumerGroupDescribe when offered)
    error_message: str | None = None


def _raise_group_error(code: int, coordinator: int, group: str, described: dict) -> None:
    if code:
        raise error_for(code, broker=coordinator,
                        error_message=f"group {group!r}: {described.get('error_message') or ''}".strip())


def _members(described: dict, *, instance_key: str) -> tuple:
    """Members of a DescribeGroups / ConsumerGroupDescribe group entry."""
    return tuple(GroupMember(mb["member_id"], mb.get("client_id", ""), mb.get("client_host", ""), mb.get(instance_key))
                 for mb in described.get("members") or ())


@dataclass(frozen=True)
class CommittedOffset:
    offset: int
    metadata: str | None = None
    leader_epoch: int = -1


@dataclass(frozen=True)
class ConfigEntry:
    name: str
    value: str | None
    read_only: bool = False
    is_sensitive: bool = False
    source: int = -1


class Admin:
    """Admin requests through a :class:`~spark_kwire.client.core.kafka_client.KafkaClient`: ``Admin(client)``.

    Holds no state of its own (group coordinators are cached on the client), so making one per use is cheap."""

    def __init__(self, client) -> None:
        self.client = client
        self._coordinators = client.coordinators

    # -- topics ----------------------------------------------------------------------------------------
    def _controller_or_any(self) -> int | None:
        controller = self.client.metadata.controller_id
        return controller if controller in self.client.metadata.brokers else None

    def create_topics(self, topics: Iterable[tuple], *, timeout_ms: int | None = None,
                      exist_ok: bool = False) -> dict[str, Any]:
        """Create ``[(name, partitions, replication_factor, configs), ...]`` (configs optional) and wait until
        metadata shows a leader for every partition. Returns ``{name: topic_id}``."""
        client = self.client
        timeout_ms = timeout_ms or client.config.request_timeout_ms
        specs = []
        for spec in topics:
            name, partitions, replication = spec[0], int(spec[1]), int(spec[2])
            configs = dict(spec[3]) if len(spec) > 3 and spec[3] else {}
            specs.append((name, partitions, replication, configs))
        body = {
            "topics": [{
                "name": name, "num_partitions": partitions, "replication_factor": replication, "assignments": [],
                "configs": [{"name": k, "value": None if v is None else str(v)} for k, v in configs.items()],
            } for name, partitions, replication, configs in specs],
            "timeout_ms": timeout_ms,
            "validate_only": False,
        }
        response = client.send_to(self._controller_or_any(), m.CREATE_TOPICS, body, what="CreateTopics",
                                  budget_ms=timeout_ms)
        ids: dict[str, Any] = {}
        for result in response.get("topics") or ():
            code = result.get("error_code", 0)
            if code == TOPIC_ALREADY_EXISTS and exist_ok:
                continue
            if code:
                raise error_for(code, topic=result.get("name"), error_message=result.get("error_message"))
            ids[result["name"]] = result.get("topic_id")
        self._wait_for_leaders([s[0] for s in specs], timeout_ms)
        for name in [s[0] for s in specs]:
            ids[name] = client.metadata.topics[name].topic_id
        return ids

    def _wait_for_leaders(self, names: list[str], timeout_ms: int) -> None:
        client = self.client

        def leaderless() -> list[str]:
            missing = client.refresh_metadata(names)
            return [n for n in names if n in missing or not client.metadata.topics[n].partitions or any(
                p.leader < 0 for p in client.metadata.topics[n].partitions.values())]

        waiting = self._poll(leaderless, timeout_ms)
        if waiting:
            raise KwireError(f"topic(s) {', '.join(waiting)} have no leader for every partition after "
                             f"{timeout_ms} ms")

    def _poll(self, pending, timeout_ms: int):
        """Call ``pending()`` until it returns nothing (or ``timeout_ms`` passes), backing off between calls as
        retries do (at least 50 ms). Returns its last answer."""
        deadline = time.monotonic() + timeout_ms / 1000.0
        backoff = Backoff(self.client.config)
        while True:
            left = pending()
            if not left:
                return left
            delay = max(backoff.next_delay(), 0.05)
            if time.monotonic() + delay > deadline:
                return left
            time.sleep(delay)

    def delete_topics(self, names: Iterable[str], *, timeout_ms: int | None = None, missing_ok: bool = False) -> None:
        """Delete topics by name and wait until metadata no longer lists them."""
        client = self.client
        names = list(names)
        timeout_ms = timeout_ms or client.config.request_timeout_ms

        def body(version: int) -> dict:
            if version >= 6:
                return {"topics": [{"name": n} for n in names], "timeout_ms": timeout_ms}
            return {"topic_names": names, "timeout_ms": timeout_ms}

        response = client.send_to(self._controller_or_any(), m.DELETE_TOPICS, body, what="DeleteTopics",
                                  budget_ms=timeout_ms)
        for result in response.get("responses") or ():
            code = result.get("error_code", 0)
            if code == UNKNOWN_TOPIC_OR_PARTITION:
                if missing_ok:
                    continue
                raise client.unknown_topic_error(result.get("name"))
            if code:
                raise error_for(code, topic=result.get("name"), error_message=result.get("error_message"))
        self._poll(lambda: [n for n in names if n not in client.refresh_metadata(names)], timeout_ms)

    def describe_configs(self, topics: Iterable[str], keys: Iterable[str] | None = None
                         ) -> dict[str, dict[str, ConfigEntry]]:
        """``{topic: {config name: ConfigEntry}}`` (sensitive values are None)."""
        client = self.client
        topics = list(topics)
        keys = None if keys is None else list(keys)
        body = {"resources": [{"resource_type": RESOURCE_TOPIC, "resource_name": t, "configuration_keys": keys}
                              for t in topics],
                "include_synonyms": False, "include_documentation": False}
        response = client.send_to(None, m.DESCRIBE_CONFIGS, body, what="DescribeConfigs")
        out: dict[str, dict[str, ConfigEntry]] = {}
        for result in response.get("results") or ():
            name = result.get("resource_name")
            code = result.get("error_code", 0)
            if code == UNKNOWN_TOPIC_OR_PARTITION:
                raise client.unknown_topic_error(name)
            if code:
                raise error_for(code, topic=name, error_message=result.get("error_message"))
            out[name] = {c["name"]: ConfigEntry(c["name"], c.get("value"), bool(c.get("read_only")),
                                                bool(c.get("is_sensitive")), c.get("config_source", -1))
                         for c in result.get("configs") or ()}
        return out

    # -- groups ----------------------------------------------------------------------------------------
    def find_coordinator(self, group: str, *, refresh: bool = False) -> int:
        """Node id of the group's coordinator (cached; ``refresh=True`` asks again)."""
        if refresh or group not in self._coordinators:
            self._coordinators[group] = find_coordinator(self.client, group, GROUP)
        return self._coordinators[group]

    def _with_coordinator(self, group: str, what: str, fn):
        """Run ``fn(coordinator_node_id)``; re-find the coordinator on coordinator errors, with retries."""
        client = self.client
        budget = client.retry_budget(what)
        refresh = False
        while True:
            try:
                return fn(self.find_coordinator(group, refresh=refresh))
            except KwireError as exc:
                refresh = True
                if isinstance(exc, KafkaApiError) and exc.code in COORDINATOR_ERRORS:
                    self._coordinators.pop(group, None)
                budget.failed(exc)

    def _topic_ids(self, topics: Iterable[str]) -> dict[str, Any]:
        return {t: self.client.topic_info(t).topic_id for t in topics}

    def commit_offsets(self, group: str, offsets: Mapping[tuple[str, int], int], metadata: str = "") -> None:
        """Commit ``{(topic, partition): offset}`` for ``group`` as a standalone (generation -1) commit."""
        client = self.client
        by_topic: dict[str, list] = {}
        for (topic, partition), offset in offsets.items():
            by_topic.setdefault(topic, []).append(
                {"partition_index": int(partition), "committed_offset": int(offset), "committed_leader_epoch": -1,
                 "committed_metadata": metadata})

        def attempt(coordinator: int) -> None:
            conn = client.connection(coordinator)
            version = conn.version_for(m.OFFSET_COMMIT)
            ids = self._topic_ids(by_topic) if version >= 10 else {}
            if version >= 10 and any(v is None for v in ids.values()):
                version = conn.version_for(m.OFFSET_COMMIT, 9)
            body = {
                "group_id": group, "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
                "retention_time_ms": -1,
                "topics": [{"name": t, "topic_id": ids.get(t), "partitions": parts} if version >= 10 else
                           {"name": t, "partitions": parts} for t, parts in by_topic.items()],
            }
            response = conn.request(m.OFFSET_COMMIT, body, version)
            for topic in response.get("topics") or ():
                name = topic.get("name")
                if version >= 10:
                    info = client.metadata.topic_by_id(topic.get("topic_id"))
                    name = info.name if info else name
                for part in topic.get("partitions") or ():
                    code = part.get("error_code", 0)
                    if code:
                        raise error_for(code, topic=name, partition=part.get("partition_index"), broker=coordinator,
                                        error_message=f"committing offsets of group {group!r}")

        self._with_coordinator(group, f"committing offsets of group {group!r}", attempt)

    def fetch_committed_offsets(self, group: str, tps: Iterable[tuple[str, int]] | None = None
                                ) -> dict[tuple[str, int], CommittedOffset]:
        """Committed offsets of ``group`` (all partitions it has commits for when ``tps`` is None).
        Partitions without a commit are left out."""
        client = self.client
        wanted = None if tps is None else [(str(t), int(p)) for t, p in tps]
        by_topic: dict[str, list[int]] = {}
        for topic, partition in wanted or ():
            by_topic.setdefault(topic, []).append(partition)

        def attempt(coordinator: int) -> dict:
            conn = client.connection(coordinator)
            version = conn.version_for(m.OFFSET_FETCH)
            if version >= 10 and wanted is not None and any(
                    v is None for v in self._topic_ids(by_topic).values()):
                version = conn.version_for(m.OFFSET_FETCH, 9)
            if version >= 8:
                topics = None
                if wanted is not None:
                    ids = self._topic_ids(by_topic) if version >= 10 else {}
                    topics = [{"name": t, "topic_id": ids.get(t), "partition_indexes": ps} if version >= 10 else
                              {"name": t, "partition_indexes": ps} for t, ps in by_topic.items()]
                body = {"groups": [{"group_id": group, "member_id": None, "member_epoch": -1, "topics": topics}],
                        "require_stable": False}
            else:
                body = {"group_id": group, "require_stable": False,
                        "topics": None if wanted is None else [{"name": t, "partition_indexes": ps}
                                                               for t, ps in by_topic.items()]}
            response = conn.request(m.OFFSET_FETCH, body, version)
            if version >= 8:
                groups = response.get("groups") or []
                entry = next((g for g in groups if g.get("group_id") == group), groups[0] if groups else {})
                code = entry.get("error_code", 0)
                topics = entry.get("topics") or []
            else:
                code = response.get("error_code", 0)
                topics = response.get("topics") or []
            if code:
                raise error_for(code, broker=coordinator, error_message=f"fetching offsets of group {group!r}")
            out: dict[tuple[str, int], CommittedOffset] = {}
            for topic in topics:
                name = topic.get("name")
                if version >= 10:
                    info = client.metadata.topic_by_id(topic.get("topic_id"))
                    if info is None:
                        client.refresh_metadata(None)
                        info = client.metadata.topic_by_id(topic.get("topic_id"))
                    if info is None:
                        continue  # the topic was deleted
                    name = info.name
                for part in topic.get("partitions") or ():
                    pcode = part.get("error_code", 0)
                    if pcode == UNKNOWN_TOPIC_OR_PARTITION:
                        continue
                    if pcode:
                        raise error_for(pcode, topic=name, partition=part.get("partition_index"), broker=coordinator,
                                        error_message=f"fetching offsets of group {group!r}")
                    offset = part.get("committed_offset", -1)
                    if offset is None or offset < 0:
                        continue
                    out[(name, part["partition_index"])] = CommittedOffset(
                        offset, part.get("metadata"), part.get("committed_leader_epoch", -1))
            return out

        return self._with_coordinator(group, f"fetching offsets of group {group!r}", attempt)

    def list_groups(self) -> list[GroupListing]:
        """Groups known to every broker (each broker lists the groups it coordinates)."""
        client = self.client
        client.refresh_metadata([])
        listings: dict[str, GroupListing] = {}
        for node_id in sorted(client.metadata.brokers):
            for listing in self._list_groups_on(node_id):
                listings[listing.group_id] = listing
        return sorted(listings.values(), key=lambda g: g.group_id)

    def _list_groups_on(self, node_id: int) -> list[GroupListing]:
        response = self.client.send_to(node_id, m.LIST_GROUPS, {"states_filter": [], "types_filter": []},
                                       what=f"ListGroups on broker {node_id}")
        code = response.get("error_code", 0)
        if code:
            raise error_for(code, broker=node_id)
        return [GroupListing(g["group_id"], g.get("protocol_type", ""), g.get("group_state", ""),
                             g.get("group_type", ""), node_id) for g in response.get("groups") or ()]

    def _describe_consumer_group(self, coordinator: int, group: str, listing) -> GroupDescription | None:
        """A KIP-848 group through ConsumerGroupDescribe (members and the server-side assignor), or None when
        the broker does not offer that API or the group is not a "consumer" group."""
        if (listing.group_type or "consumer") != "consumer":
            return None
        conn = self.client.connection(coordinator)
        if not conn.supports(m.CONSUMER_GROUP_DESCRIBE):
            return None
        response = conn.request(m.CONSUMER_GROUP_DESCRIBE, {"group_ids": [group],
                                                            "include_authorized_operations": False})
        for g in response.get("groups") or ():
            if g.get("group_id") != group:
                continue
            code = g.get("error_code", 0)
            if code == 69:  # gone meanwhile
                return GroupDescription(group, "Dead", "", "", (), coordinator, code, "consumer",
                                        g.get("error_message"))
            _raise_group_error(code, coordinator, group, g)
            members = _members(g, instance_key="instance_id")
            return GroupDescription(group, g.get("group_state", "") or listing.state,
                                    listing.protocol_type or "consumer", g.get("assignor_name", ""), members,
                                    coordinator, 0, "consumer")
        return None

    def describe_groups(self, group_ids: Iterable[str]) -> dict[str, GroupDescription]:
        """``{group_id: GroupDescription}``; a group that does not exist has state "Dead". KIP-848 ("consumer"
        protocol) groups, which DescribeGroups cannot see, are described by ConsumerGroupDescribe
        (``group_type == "consumer"``, ``protocol`` = the server-side assignor)."""
        out: dict[str, GroupDescription] = {}
        client = self.client
        for group in group_ids:
            def attempt(coordinator: int, group=group) -> GroupDescription:
                response = client.connection(coordinator).request(
                    m.DESCRIBE_GROUPS, {"groups": [group], "include_authorized_operations": False})
                for g in response.get("groups") or ():
                    if g.get("group_id") != group:
                        continue
                    code = g.get("error_code", 0)
                    if code == 69:  # GROUP_ID_NOT_FOUND; also what Kafka 4 answers for a non-classic group
                        listed = [x for x in self._list_groups_on(coordinator) if x.group_id == group]
                        if listed:
                            described = self._describe_consumer_group(coordinator, group, listed[0])
                            if described is not None:
                                return described
                            return GroupDescription(group, listed[0].state, listed[0].protocol_type, "", (),
                                                    coordinator, code, listed[0].group_type or "consumer",
                                                    g.get("error_message"))
                        return GroupDescription(group, "Dead", "", "", (), coordinator, code, "classic",
                                                g.get("error_message"))
                    _raise_group_error(code, coordinator, group, g)
                    members = _members(g, instance_key="group_instance_id")
                    return GroupDescription(group, g.get("group_state", ""), g.get("protocol_type", ""),
                                            g.get("protocol_data", ""), members, coordinator, 0)
                return GroupDescription(group, "Dead", "", "", (), coordinator, 0)

            out[group] = self._with_coordinator(group, f"describing group {group!r}", attempt)
        return out
