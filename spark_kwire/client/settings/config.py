"""The client's settings: one immutable value, a typed part per concern, built once from the options.

``ClientConfig.from_kafka_options({"bootstrap.servers": "host:9092", "acks": "all", ...})`` takes Kafka's client
properties *without* Spark's ``kafka.`` prefix (strings, as Spark passes them, or Python values); :mod:`.parse`
reads them, and :func:`config_fields` makes them the config's fields: a setting is the field its name spells
(``request.timeout.ms`` is ``request_timeout_ms``; kwire's own without ``kwire.``), the TLS part comes from
:mod:`.tls_options` and the login from :mod:`.sasl_options`. The parts: :class:`ConnectionSettings` (where and
how to connect), :class:`RetrySettings` (timeouts and retries), :class:`FetchSettings` and :class:`ProduceSettings`
(tuning of reads and writes), ``tls`` (:class:`~.tls.TlsSettings`) and ``sasl`` (the mechanism's login,
:data:`~.logins.SaslLogin`). A ``ClientConfig`` is all four scalar parts at once (``config.request_timeout_ms``,
``config.client_rack``...).

Defaults follow the Java client except where noted:

* ``max.partition.fetch.bytes`` 1 MiB as in Java; a reader keeps up to two responses (current + prefetched).
* ``request.timeout.ms`` bounds one request (and each read of its response); ``default.api.timeout.ms``
  is how long offset lookups and a ranged fetch keep retrying without progress (default: twice
  request.timeout.ms, which makes Java's 60 s at the default request.timeout.ms);
  ``delivery.timeout.ms`` how long a producer's flush keeps retrying without any acknowledgement.
* ``batch.size`` defaults to 512 KiB (Java: 16 KiB) and ``max.request.size`` to 4 MiB (Java: 1 MiB): kwire
  appends whole Arrow columns at once, and big batches compress better and cost less per record. A batch
  stays under the broker's default ``message.max.bytes`` (1 MiB).
* ``linger.ms`` has no default (Java: 5 ms): unless it is set, a producer hands its records to the sender when
  ``buffer.memory`` fills up or at ``flush()`` (a Spark task's end), which batches the most. When set, it
  bounds how long appended records wait before they are sent.
* ``kwire.max.decompressed.bytes`` (kwire's own, default 256 MiB): how many bytes the compressed batches of
  one fetch response for one partition may inflate to; a batch that inflates further fails the read
  instead of exhausting the executor's memory.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from typing import Any, Mapping

from spark_kwire.client.errors import ConfigError
from spark_kwire.client.settings.logins import SaslLogin
from spark_kwire.client.settings.names import HONOURED
from spark_kwire.client.settings.parse import OptionValues, parse_options, warn_ignored
from spark_kwire.client.settings.sasl_options import sasl_login
from spark_kwire.client.settings.secret import Secret, reveal
from spark_kwire.client.settings.tls import Given, TlsSettings
from spark_kwire.client.settings.tls_options import tls_settings
from spark_kwire.client.settings.values import ACKS, COMPRESSION_TYPES, ISOLATION_LEVELS, SASL_MECHANISMS, \
    SECURITY_PROTOCOLS

__all__ = ["ClientConfig", "ConnectionSettings", "RetrySettings", "FetchSettings", "ProduceSettings", "ACKS",
           "ISOLATION_LEVELS", "COMPRESSION_TYPES", "SECURITY_PROTOCOLS", "SASL_MECHANISMS", "FIELDS", "config_fields"]



@dataclass(frozen=True)
class ConnectionSettings:
    """Where the brokers are, who the client says it is, and its sockets."""
    bootstrap_servers: tuple[tuple[str, int], ...] = ()
    client_id: str = "spark-kwire"
    client_rack: str | None = None  # client.rack: reads prefer a replica in this rack (KIP-392)
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str = "GSSAPI"  # Kafka's default; the login itself is ClientConfig.sasl
    socket_connection_setup_timeout_ms: int = 10_000
    connections_max_idle_ms: int = 540_000
    receive_buffer_bytes: int = 4 * 1024 * 1024
    send_buffer_bytes: int = 1024 * 1024
    metadata_max_age_ms: int = 300_000


@dataclass(frozen=True)
class RetrySettings:
    """How long requests may take and how they are retried."""
    request_timeout_ms: int = 30_000
    # retry budget of offset lookups and of a fetch that makes no progress; None: 2 x request.timeout.ms
    default_api_timeout_ms: int | None = None
    retry_backoff_ms: int = 100
    retry_backoff_max_ms: int = 1_000
    retries: int = 2_147_483_647
    delivery_timeout_ms: int = 120_000
    transaction_timeout_ms: int = 60_000


@dataclass(frozen=True)
class FetchSettings:
    """How reads fetch."""
    fetch_max_bytes: int = 52_428_800
    max_partition_fetch_bytes: int = 1_048_576  # Kafka's default: what one partition may add to a fetch
    fetch_max_wait_ms: int = 500
    fetch_min_bytes: int = 1
    # how far the compressed batches of one fetched partition may inflate (kwire's guard against decompression
    # bombs; the Spark option 'maxDecompressedBytes')
    max_decompressed_bytes: int = 256 * 1024 * 1024
    isolation_level: str = "read_uncommitted"
    group_id: str | None = None


@dataclass(frozen=True)
class ProduceSettings:
    """How writes batch, compress and are acknowledged."""
    acks: int = -1
    compression_type: str = "none"
    batch_size: int = 512 * 1024
    linger_ms: int | None = None  # None: records wait for buffer.memory or flush() (see producer.py)
    enable_idempotence: bool | None = None  # None: Kafka's default (on when acks=all)
    max_in_flight_requests_per_connection: int = 5
    max_request_size: int = 4 * 1024 * 1024
    buffer_memory: int = 32 * 1024 * 1024  # encoded bytes a producer queues before it flushes them (0: no limit)


@dataclass(frozen=True)
class ClientConfig(ConnectionSettings, RetrySettings, FetchSettings, ProduceSettings):
    """Everything the client layer needs; immutable and picklable. Build with :meth:`from_kafka_options`."""

    tls: TlsSettings = TlsSettings()  # used when security.protocol is SSL or SASL_SSL
    sasl: SaslLogin | None = None  # the login when security.protocol is SASL_PLAINTEXT or SASL_SSL
    # settings given that have no effect in kwire (Java-client-only), as given; not part of equality
    ignored: tuple[str, ...] = field(default=(), compare=False)
    # a digest of every setting (secrets digested too): the key of per-process caches, equal in every process
    fingerprint: str = field(init=False, repr=False, compare=False)
    # the largest response frame accepted from a broker: fetch.max.bytes plus 64 MiB of slack (read per response)
    max_response_bytes: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.validate()
        object.__setattr__(self, "fingerprint", _fingerprint(self))
        object.__setattr__(self, "max_response_bytes",
                           max(self.fetch_max_bytes, self.max_partition_fetch_bytes) + 64 * 1024 * 1024)

    # -- construction ---------------------------------------------------------------------------------
    @classmethod
    def from_kafka_options(cls, opts: Mapping[str, Any] | None = None, **overrides: Any) -> "ClientConfig":
        """Parse Kafka client properties (no ``kafka.`` prefix). Raises :class:`ConfigError` naming the key."""
        values = parse_options(opts or {})
        config = cls(**{**config_fields(values), **overrides})
        warn_ignored(values)
        return config

    @classmethod
    def from_values(cls, values) -> "ClientConfig":
        """The config of options read by :func:`~.parse.parse_options` (for callers that check options of their
        own between reading and building, such as the Spark layer); logs nothing."""
        return cls(**config_fields(values))

    def validate(self) -> None:
        """Checks of values and across fields (raise :class:`ConfigError`), also for configs changed with
        :meth:`replace`."""
        if self.security_protocol not in SECURITY_PROTOCOLS:
            raise ConfigError("security.protocol", self.security_protocol, ", ".join(SECURITY_PROTOCOLS))
        if self.retry_backoff_max_ms < self.retry_backoff_ms:
            raise ConfigError("retry.backoff.max.ms", self.retry_backoff_max_ms,
                              reason=f"must be >= retry.backoff.ms ({self.retry_backoff_ms})")
        if self.enable_idempotence:
            if self.acks != -1:
                raise ConfigError("acks", self.acks, "all",
                                  reason="enable.idempotence=true requires acks=all (or set enable.idempotence=false)")
            if self.max_in_flight_requests_per_connection > 5:
                raise ConfigError("max.in.flight.requests.per.connection", self.max_in_flight_requests_per_connection,
                                  "1..5", reason="enable.idempotence=true allows at most 5 requests in flight")
        if self.max_partition_fetch_bytes > 2**31 - 1 or self.fetch_max_bytes > 2**31 - 1:
            raise ConfigError("fetch.max.bytes", self.fetch_max_bytes, "< 2147483648")

    def replace(self, **changes: Any) -> "ClientConfig":
        """A copy with some fields changed (validated)."""
        return dataclasses.replace(self, **changes)

    # -- derived values -------------------------------------------------------------------------------
    @property
    def idempotence(self) -> bool:
        """Whether the producer is idempotent: explicitly set, or by default when acks=all."""
        if self.enable_idempotence is None:
            return self.acks == -1 and self.max_in_flight_requests_per_connection <= 5
        return self.enable_idempotence

    @property
    def read_committed(self) -> bool:
        return self.isolation_level == "read_committed"

    def __repr__(self) -> str:  # only what differs from the defaults; secrets show as '***'
        shown = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                 if f.repr and f.compare and getattr(self, f.name) != f.default}
        return "ClientConfig(" + ", ".join(f"{k}={v!r}" for k, v in shown.items()) + ")"


_SCALAR_PARTS = (ConnectionSettings, RetrySettings, FetchSettings, ProduceSettings)
#: The settings that are one field of the config each: those whose name, dots as underscores (kwire's own without
#: their ``kwire.`` prefix), is a field of one of the scalar parts.
FIELDS = {name: spelled for name in HONOURED if (spelled := name.removeprefix("kwire.").replace(".", "_"))
          in {f.name for part in _SCALAR_PARTS for f in dataclasses.fields(part)}}


def config_fields(values: OptionValues) -> dict[str, Any]:
    """The fields of the :class:`ClientConfig` of what :func:`~.parse.parse_options` read."""
    fields = {FIELDS[name]: value for name, value in values.values.items() if name in FIELDS}
    tls = tls_settings(values)
    login = None
    if values.security_protocol.startswith("SASL_"):
        login = sasl_login(values, tls, request_timeout_ms=fields.get("request_timeout_ms", 30_000),
                           hosts=tuple(host for host, _ in fields.get("bootstrap_servers", ())))
    return {**fields, "tls": tls, "sasl": login, "ignored": tuple(values.ignored)}


def _canonical(value: Any) -> Any:
    """A process-independent text of a settings value, secrets replaced by their digest."""
    if isinstance(value, Secret):
        return "secret:" + hashlib.sha256(value.reveal().encode("utf-8")).hexdigest()
    if isinstance(value, Given):
        return [value.key, _canonical(value.value)]
    if dataclasses.is_dataclass(value):
        return [type(value).__name__] + [[f.name, _canonical(getattr(value, f.name))]
                                         for f in dataclasses.fields(value) if f.compare]
    if isinstance(value, (tuple, list)):
        return [_canonical(v) for v in value]
    return reveal(value) if value is not None else None


def _fingerprint(config: ClientConfig) -> str:
    return hashlib.sha256(repr(_canonical(config)).encode("utf-8")).hexdigest()
