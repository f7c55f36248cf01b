"""KafkaClient: bootstrap, metadata cache, one connection per broker, and retries.

The core of the client layer. What is built on it takes the client as an argument and is imported by the
caller, never by this module: :mod:`~spark_kwire.client.consumer.offsets` (``list_offsets(client, ...)``),
:mod:`~spark_kwire.client.consumer.fetcher` (``fetch_range(client, ...)``), :mod:`~spark_kwire.client.admin.admin`
(``Admin(client)``: topics, groups, committed offsets, configs) and :mod:`~spark_kwire.client.producer.producer`
(``Producer(client)``).
"""

from __future__ import annotations

import logging
import random
import threading
import time
from typing import Any, Callable, Iterable, Mapping, TypeVar

from spark_kwire.client.settings.config import ClientConfig
from spark_kwire.client.core.connection import BrokerConnection
from spark_kwire.client.errors import BrokerConnectionError, ConfigError, UnknownTopicError, is_retriable_error
from spark_kwire.client.core.metadata import BrokerInfo, ClusterMetadata, PartitionInfo, TopicInfo
from spark_kwire.client.retry import RetryBudget
from spark_kwire.client.auth.security import SecurityHooks, security_hooks
from spark_kwire.protocol import messages as m
from spark_kwire.protocol.errors import KafkaApiError, KwireError

__all__ = ["KafkaClient"]

log = logging.getLogger(__name__)
T = TypeVar("T")

LEADER_NOT_AVAILABLE = 5
UNKNOWN_TOPIC_OR_PARTITION = 3


def _check_topic_error(info: TopicInfo) -> None:
    """Raise the topic-level metadata error unless it is a transient one (the caller retries those)."""
    if info.error_code and info.error_code != LEADER_NOT_AVAILABLE:
        exc = KafkaApiError(info.error_code, topic=info.name)
        if not exc.retriable:
            raise exc


class KafkaClient:
    """Entry point of the client layer. Use as a context manager or call :meth:`close`."""

    def __init__(self, config: ClientConfig | Mapping[str, Any], *, hooks: SecurityHooks | None = None) -> None:
        if not isinstance(config, ClientConfig):
            config = ClientConfig.from_kafka_options(config)
        if not config.bootstrap_servers:
            raise ConfigError("bootstrap.servers", "", "a comma-separated list of host:port", reason="it is required")
        self.config = config
        self.hooks = hooks if hooks is not None else security_hooks(config)
        self._metadata = ClusterMetadata()
        self._connections: dict[int, BrokerConnection] = {}
        self._lock = threading.RLock()
        self._closed = False
        self._bootstrapped = False
        # group id -> node id of its coordinator, as FindCoordinator answered (kept by the admin layer, here so
        # that every Admin(client) of this client shares it)
        self.coordinators: dict[str, int] = {}
        # (topic, partition) -> where its fetches go with client.rack (kept by consumer/read_replica.py, here so
        # that every reader of this client shares what the leaders said)
        self.read_replicas: dict = {}

    # -- life cycle ------------------------------------------------------------------------------------
    def __enter__(self) -> "KafkaClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for conn in self._connections.values():
                conn.close()
            self._connections.clear()

    def __repr__(self) -> str:
        servers = ",".join(f"{h}:{p}" for h, p in self.config.bootstrap_servers)
        return f"KafkaClient(bootstrap={servers}, brokers={sorted(self._metadata.brokers)})"

    # -- connections -----------------------------------------------------------------------------------
    def _new_connection(self, host: str, port: int, node_id: int | None = None) -> BrokerConnection:
        return BrokerConnection(host, port, self.config, self.hooks.transport_factory, self.hooks.authenticate,
                                node_id=node_id)

    def connection(self, node_id: int, deadline: float | None = None) -> BrokerConnection:
        """The (connected) connection to broker ``node_id``; reconnects when needed (by ``deadline``, a
        ``time.monotonic()`` value, when given)."""
        with self._lock:
            if self._closed:
                raise KwireError("the KafkaClient is closed")
            self._ensure_bootstrapped()
            conn = self._connections.get(node_id)
            broker = self._metadata.brokers.get(node_id)
            if broker is None and conn is None:
                raise KafkaApiError(LEADER_NOT_AVAILABLE, broker=node_id,
                                    error_message=f"broker {node_id} is not in the cluster metadata")
            if conn is not None and broker is not None and (conn.host, conn.port) != (broker.host, broker.port):
                conn.close()
                conn = None
            if conn is None:
                conn = self._new_connection(broker.host, broker.port, node_id)
                self._connections[node_id] = conn
            idle_ms = self.config.connections_max_idle_ms
            if conn.connected and idle_ms > 0 and conn.in_flight == 0 and \
                    (time.monotonic() - conn.last_used) * 1000 > idle_ms:
                conn.close()  # the broker has (or is about to) drop it
        conn.connect(deadline)
        return conn

    def register_broker(self, node_id: int, host: str, port: int) -> None:
        """Make a broker known (e.g. a coordinator from FindCoordinator) without a metadata refresh."""
        with self._lock:
            if node_id not in self._metadata.brokers:
                self._metadata.brokers[node_id] = BrokerInfo(node_id, host, port)

    def any_connection(self, deadline: float | None = None) -> BrokerConnection:
        """A connection to some live broker (connected ones first), falling back to the bootstrap servers."""
        self._ensure_bootstrapped()
        with self._lock:
            connected = [c for c in self._connections.values() if c.connected]
            others = [n for n in self._metadata.brokers if n not in self._connections or not self._connections[n].connected]
        if connected:
            return random.choice(connected)
        random.shuffle(others)
        errors = []
        for node_id in others:
            try:
                return self.connection(node_id, deadline)
            except KwireError as exc:
                if not is_retriable_error(exc):
                    raise
                errors.append(exc)
        return self._bootstrap_connection(deadline)

    def _bootstrap_connection(self, deadline: float | None = None) -> BrokerConnection:
        servers = list(self.config.bootstrap_servers)
        errors: list[BaseException] = []
        for host, port in servers:
            conn = self._new_connection(host, port)
            try:
                return conn.connect(deadline)
            except KwireError as exc:
                if not is_retriable_error(exc):
                    raise
                errors.append(exc)
        listed = ", ".join(f"{h}:{p}" for h, p in servers)
        detail = "; ".join(str(e) for e in errors)
        raise BrokerConnectionError(listed, f"none of the bootstrap servers could be reached: {detail}")

    def _ensure_bootstrapped(self) -> None:
        if not self._bootstrapped:
            self.refresh_metadata([])

    # -- metadata --------------------------------------------------------------------------------------
    @property
    def metadata(self) -> ClusterMetadata:
        self._ensure_bootstrapped()
        return self._metadata

    @property
    def brokers(self) -> dict[int, BrokerInfo]:
        return dict(self.metadata.brokers)

    def broker_address(self, node_id: int | None) -> str | None:
        """host:port of a known broker (no metadata request), None when it is not known."""
        info = self._metadata.brokers.get(node_id) if node_id is not None else None
        return info.address if info is not None else None

    def _metadata_request(self, conn: BrokerConnection, topics: list[str] | None,
                          deadline: float | None = None, allow_auto_topic_creation: bool = False) -> dict:
        version = conn.version_for(m.METADATA)
        body = {
            "topics": None if topics is None else [{"name": t} for t in topics],
            "allow_auto_topic_creation": allow_auto_topic_creation,
            "include_cluster_authorized_operations": False,
            "include_topic_authorized_operations": False,
        }
        timeout_ms = None
        if deadline is not None:
            timeout_ms = max(1, min(self.config.request_timeout_ms, int((deadline - time.monotonic()) * 1000)))
        return conn.request(m.METADATA, body, version, timeout_ms=timeout_ms)

    def refresh_metadata(self, topics: Iterable[str] | None = None, *, deadline: float | None = None,
                         allow_auto_topic_creation: bool = False) -> set[str]:
        """Fetch metadata for ``topics`` (``None``: every topic; ``[]``: brokers only).

        Retries connection errors within request.timeout.ms (and by ``deadline``, a ``time.monotonic()``
        value, when given). Returns the requested topics that do not exist. With
        ``allow_auto_topic_creation`` (writers only, as the Java producer), a broker with
        auto.create.topics.enable creates missing topics; they then show up without partitions until ready.
        """
        requested = None if topics is None else sorted(set(topics))
        budget_ms = None
        if deadline is not None:
            budget_ms = max(0, min(self.config.request_timeout_ms, int((deadline - time.monotonic()) * 1000)))
        what = "metadata request" if not requested else \
            f"metadata request for topic(s) {', '.join(repr(t) for t in requested[:5])}"
        budget = RetryBudget(self, what, budget_ms)
        while True:
            try:
                if self._bootstrapped:
                    conn = self.any_connection(deadline)
                else:
                    conn = self._bootstrap_connection(deadline)
                body = self._metadata_request(conn, requested, deadline, allow_auto_topic_creation)
                break
            except KwireError as exc:
                budget.failed(exc)
        with self._lock:
            missing = self._metadata.merge(body, requested)
            self._bootstrapped = True
            if conn not in self._connections.values():
                # a bootstrap connection: adopt it when it is a known broker without a connection, else close it
                adopted = False
                for node_id, broker in self._metadata.brokers.items():
                    if (broker.host, broker.port) == (conn.host, conn.port) and node_id not in self._connections:
                        conn.node_id = node_id
                        self._connections[node_id] = conn
                        adopted = True
                        break
                if not adopted:
                    conn.close()
            for node_id in list(self._connections):
                if node_id not in self._metadata.brokers:
                    self._connections.pop(node_id).close()
        return missing

    def topic_info(self, topic: str, *, max_age_ms: int | None = None) -> TopicInfo:
        """Metadata of one topic (refreshed when absent or older than ``max_age_ms``/metadata.max.age.ms).

        Raises :class:`UnknownTopicError` (listing a few existing topics) when the topic does not exist.
        """
        self._ensure_bootstrapped()
        age_limit = (self.config.metadata_max_age_ms if max_age_ms is None else max_age_ms) / 1000.0
        info = self._metadata.topics.get(topic)
        fetched = self._metadata.topic_updated_at.get(topic, 0.0)
        if info is None or time.monotonic() - fetched > age_limit:
            self._refresh_with_grace([topic])
            info = self._metadata.topics.get(topic)
        if info is None:
            raise self.unknown_topic_error(topic)
        _check_topic_error(info)
        return info

    def _refresh_with_grace(self, topics: list[str]) -> set[str]:
        """Refresh ``topics``; look twice more (after a backoff) at the ones missing: a topic created a moment
        ago may not have reached this broker's metadata yet."""
        missing = self.refresh_metadata(topics)
        for delay in (self.config.retry_backoff_ms, 2 * self.config.retry_backoff_ms):
            if not missing:
                break
            time.sleep(min(max(delay, 10), 1000) / 1000.0)
            missing = self.refresh_metadata(topics) & missing
        return missing

    def unknown_topic_error(self, topic: str, partition: int | None = None) -> UnknownTopicError:
        """An :class:`UnknownTopicError` for ``topic`` listing some topics that do exist (fresh metadata)."""
        try:
            self.refresh_metadata(None)
            existing = sorted(n for n, t in self._metadata.topics.items() if not t.is_internal)
        except KwireError:
            existing = None
        return UnknownTopicError(topic, existing, partition=partition)

    def partition_info(self, topic: str, partition: int) -> PartitionInfo:
        """Metadata of one partition; raises :class:`UnknownTopicError` when it does not exist."""
        info = self.topic_info(topic)
        part = info.partitions.get(partition)
        if part is None:
            info = self.topic_info(topic, max_age_ms=0)
            part = info.partitions.get(partition)
            if part is None:
                raise UnknownTopicError(topic, None, partition=partition) if info.partitions else \
                    KafkaApiError(LEADER_NOT_AVAILABLE, topic=topic, partition=partition)
        return part

    def leader_for(self, topic: str, partition: int) -> int:
        """Node id of the partition's leader; a retriable LEADER_NOT_AVAILABLE error when it has none."""
        part = self.partition_info(topic, partition)
        if part.leader < 0 or part.leader not in self._metadata.brokers:
            raise KafkaApiError(LEADER_NOT_AVAILABLE, topic=topic, partition=partition)
        return part.leader

    def check_unknown_topic(self, error: BaseException, topic: str, partition: int | None = None) -> None:
        """For UNKNOWN_TOPIC_OR_PARTITION: raise :class:`UnknownTopicError` if fresh metadata agrees it is gone."""
        if isinstance(error, KafkaApiError) and error.code in (UNKNOWN_TOPIC_OR_PARTITION, 100):
            missing = self.refresh_metadata([topic])
            if topic in missing:
                raise self.unknown_topic_error(topic) from error
            if partition is not None and partition not in self._metadata.topics[topic].partitions:
                raise UnknownTopicError(topic, None, partition=partition) from error

    # -- retries ---------------------------------------------------------------------------------------
    def retry_budget(self, what: str, budget_ms: int | None = None) -> RetryBudget:
        return RetryBudget(self, what, budget_ms)

    @property
    def api_budget_ms(self) -> int:
        """Retry budget of offset lookups and of fetches without progress (default.api.timeout.ms, at least
        request.timeout.ms), as the Java consumer's blocking calls."""
        explicit = self.config.default_api_timeout_ms
        return max(self.config.request_timeout_ms, explicit if explicit is not None else
                   2 * self.config.request_timeout_ms)

    def call_with_retry(self, what: str, fn: Callable[[], T], *, topics: Iterable[str] | None = None,
                        budget_ms: int | None = None) -> T:
        """Call ``fn()``; on retriable errors refresh metadata (of ``topics``), back off and call again.

        Non-retriable errors propagate unchanged; when the budget (request.timeout.ms by default) is spent,
        :class:`RetriesExhaustedError` is raised with the last error as its cause.
        """
        budget = RetryBudget(self, what, budget_ms)
        topics = list(topics) if topics is not None else []
        while True:
            try:
                return fn()
            except KwireError as exc:
                for topic in topics:
                    self.check_unknown_topic(exc, topic)
                budget.failed(exc, refresh_topics=topics)

    def send_to(self, node_id: int | None, api: Any, body: dict | Callable[[int], dict], *,
                what: str | None = None, topics: Iterable[str] | None = None, budget_ms: int | None = None) -> dict:
        """Send one request to a broker (``None``: any broker) with retries; ``body`` may be ``f(version)``."""
        def attempt() -> dict:
            conn = self.any_connection() if node_id is None else self.connection(node_id)
            version = conn.version_for(api)
            payload = body(version) if callable(body) else body
            return conn.request(api, payload, version)
        return self.call_with_retry(what or f"{getattr(api, 'name', api)} request", attempt, topics=topics,
                                    budget_ms=budget_ms)

    # -- topics ----------------------------------------------------------------------------------------
    def list_topics(self, *, include_internal: bool = False) -> list[str]:
        """Names of the cluster's topics (sorted)."""
        self.refresh_metadata(None)
        return sorted(n for n, t in self._metadata.topics.items() if include_internal or not t.is_internal)

    def describe_topics(self, names: Iterable[str]) -> dict[str, TopicInfo]:
        """Fresh metadata of ``names``; raises :class:`UnknownTopicError` for the first missing one."""
        names = list(names)
        missing = self._refresh_with_grace(names)
        for name in names:
            if name in missing:
                raise self.unknown_topic_error(name)
            _check_topic_error(self._metadata.topics[name])
        return {name: self._metadata.topics[name] for name in names}

    def partitions_for(self, topic: str) -> list[int]:
        """Sorted partition ids of ``topic`` (fresh metadata)."""
        return self.describe_topics([topic])[topic].partition_ids
