"""Client configuration parsed from Kafka client property names.

``ClientConfig.from_kafka_options({"bootstrap.servers": "host:9092", "acks": "all", ...})`` takes the
properties *without* Spark's ``kafka.`` prefix. Values may be strings (as Spark passes them) or Python
values. Unknown keys are kept in ``.extra`` (the Spark layer decides what to reject). Secrets are held in
:class:`Secret`, which prints as ``'***'`` and does not pickle as clear text.

Defaults follow the Java client except where noted:

* ``max.partition.fetch.bytes`` defaults to 4 MiB (Java: 1 MiB): kwire fetches one partition per request,
  so the per-partition limit is the request size; larger responses amortise per-request Python cost (on a
  local broker, 1M lz4 records of 100 B: ~1.9M rec/s at 1 MiB, ~2.2-2.6M at 4-8 MiB, slower again from
  16 MiB). A reader keeps up to two responses (current + prefetched), i.e. 8 MiB per partition read.
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
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from spark_kwire.client.errors import ConfigError

__all__ = ["Secret", "ClientConfig", "ACKS", "ISOLATION_LEVELS", "COMPRESSION_TYPES", "SECURITY_PROTOCOLS",
           "SASL_MECHANISMS", "is_sensitive_key", "reveal"]

ACKS = {"all": -1, "-1": -1, "0": 0, "1": 1}
ISOLATION_LEVELS = ("read_uncommitted", "read_committed")
COMPRESSION_TYPES = ("none", "gzip", "snappy", "lz4", "zstd")
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER", "AWS_MSK_IAM", "GSSAPI")

_SENSITIVE = re.compile(r"(password|secret|jaas|token|credential|oauthbearer\.config|\.key$|\.key\.pem$|keystore\.key|private)",
                        re.IGNORECASE)
_MASK = b"spark-kwire/secret-mask"


def is_sensitive_key(key: str) -> bool:
    """True for option names whose values must never be shown (passwords, JAAS configs, private keys...)."""
    return bool(_SENSITIVE.search(key))


class Secret:
    """A secret string: ``repr``/``str`` show ``'***'``; ``reveal()`` returns the value.

    Pickles (Spark sends the config to executors) carry the value XOR-masked, so it does not show as clear
    text in a pickle dump. That is obfuscation, not encryption: protect the pickles like the options.
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        if isinstance(value, Secret):
            value = value.reveal()
        object.__setattr__(self, "_value", str(value))

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "'***'"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return "***"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash((Secret, self._value))

    def __bool__(self) -> bool:
        return bool(self._value)

    def __setattr__(self, name, value):
        raise AttributeError("Secret is immutable")

    def __reduce__(self):
        return (_unmask_secret, (_mask(self._value.encode("utf-8")),))


def reveal(value: Any) -> str | None:
    """The clear text of a :class:`Secret`, ``str(value)`` of anything else, ``None`` for ``None``."""
    if value is None:
        return None
    if isinstance(value, Secret):
        return value.reveal()
    return str(value)


def _mask(data: bytes) -> bytes:
    return bytes(b ^ _MASK[i % len(_MASK)] for i, b in enumerate(data))


def _unmask_secret(masked: bytes) -> Secret:
    return Secret(_mask(masked).decode("utf-8"))


# -- value parsers -------------------------------------------------------------------------------------

def _as_str(key: str, value: Any) -> str:
    if isinstance(value, Secret):
        return value.reveal()
    return str(value).strip()


def _int(key: str, value: Any, *, minimum: int | None = None, maximum: int | None = None) -> int:
    if isinstance(value, bool):
        raise ConfigError(key, value, "an integer")
    if isinstance(value, int):
        result = value
    else:
        text = _as_str(key, value)
        try:
            result = int(text)
        except ValueError:
            raise ConfigError(key, value, "an integer") from None
    if minimum is not None and result < minimum:
        raise ConfigError(key, value, f"an integer >= {minimum}")
    if maximum is not None and result > maximum:
        raise ConfigError(key, value, f"an integer <= {maximum}")
    return result


def _bool(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = _as_str(key, value).lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise ConfigError(key, value, "true, false")


def _choice(key: str, value: Any, accepted: tuple[str, ...], *, upper: bool = False) -> str:
    text = _as_str(key, value)
    norm = text.upper() if upper else text.lower()
    if norm not in accepted:
        raise ConfigError(key, value, ", ".join(accepted))
    return norm


def _acks(key: str, value: Any) -> int:
    text = _as_str(key, value).lower()
    if text not in ACKS:
        raise ConfigError(key, value, "all, -1, 0, 1")
    return ACKS[text]


def _servers(key: str, value: Any) -> tuple[tuple[str, int], ...]:
    if isinstance(value, (list, tuple)):
        items = [str(v) for v in value]
    else:
        items = _as_str(key, value).split(",")
    servers = []
    for item in items:
        item = item.strip()
        if not item:
            continue
        if "://" in item:  # tolerate PLAINTEXT://host:port
            item = item.split("://", 1)[1]
        if item.startswith("["):  # [ipv6]:port
            host, _, rest = item[1:].partition("]")
            port_text = rest.lstrip(":")
        else:
            host, sep, port_text = item.rpartition(":")
            if not sep:
                raise ConfigError(key, value, "a comma-separated list of host:port")
        try:
            port = int(port_text)
        except ValueError:
            raise ConfigError(key, value, "a comma-separated list of host:port") from None
        if not host or not (0 < port < 65536):
            raise ConfigError(key, value, "a comma-separated list of host:port")
        servers.append((host, port))
    return tuple(servers)


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((str(k), _freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


# -- the config ----------------------------------------------------------------------------------------

# Kafka property name -> (field name, parser)
_INT_OPTIONS = {
    "request.timeout.ms": ("request_timeout_ms", 1),
    "default.api.timeout.ms": ("default_api_timeout_ms", 1),
    "socket.connection.setup.timeout.ms": ("socket_connection_setup_timeout_ms", 1),
    "retry.backoff.ms": ("retry_backoff_ms", 0),
    "retry.backoff.max.ms": ("retry_backoff_max_ms", 0),
    "retries": ("retries", 0),
    "delivery.timeout.ms": ("delivery_timeout_ms", 1),
    "metadata.max.age.ms": ("metadata_max_age_ms", 0),
    "fetch.max.bytes": ("fetch_max_bytes", 1),
    "max.partition.fetch.bytes": ("max_partition_fetch_bytes", 1),
    "fetch.max.wait.ms": ("fetch_max_wait_ms", 0),
    "fetch.min.bytes": ("fetch_min_bytes", 0),
    "batch.size": ("batch_size", 0),
    "linger.ms": ("linger_ms", 0),
    "max.in.flight.requests.per.connection": ("max_in_flight_requests_per_connection", 1),
    "max.request.size": ("max_request_size", 1),
    "buffer.memory": ("buffer_memory", 0),
    "transaction.timeout.ms": ("transaction_timeout_ms", 1),
    "connections.max.idle.ms": ("connections_max_idle_ms", -1),
    "receive.buffer.bytes": ("receive_buffer_bytes", -1),
    "send.buffer.bytes": ("send_buffer_bytes", -1),
    "kwire.max.decompressed.bytes": ("max_decompressed_bytes", 1),
}


@dataclass(frozen=True)
class ClientConfig:
    """Everything the client layer needs; immutable and picklable. Build with :meth:`from_kafka_options`."""

    bootstrap_servers: tuple[tuple[str, int], ...] = ()
    client_id: str = "spark-kwire"
    request_timeout_ms: int = 30_000
    # retry budget of offset lookups and of a fetch that makes no progress; None: 2 x request.timeout.ms
    # (60 s at the default request.timeout.ms, Java's default.api.timeout.ms)
    default_api_timeout_ms: int | None = None
    socket_connection_setup_timeout_ms: int = 10_000
    retry_backoff_ms: int = 100
    retry_backoff_max_ms: int = 1_000
    retries: int = 2_147_483_647
    delivery_timeout_ms: int = 120_000
    metadata_max_age_ms: int = 300_000
    fetch_max_bytes: int = 52_428_800
    max_partition_fetch_bytes: int = 1_048_576  # Kafka's default: what one partition may add to a fetch
    fetch_max_wait_ms: int = 500
    fetch_min_bytes: int = 1
    # how far the compressed batches of one fetched partition may inflate (kwire's own guard against
    # decompression bombs; the Spark option 'maxDecompressedBytes')
    max_decompressed_bytes: int = 256 * 1024 * 1024
    isolation_level: str = "read_uncommitted"
    acks: int = -1
    compression_type: str = "none"
    batch_size: int = 512 * 1024
    linger_ms: int | None = None  # None: records wait for buffer.memory or flush() (see producer.py)
    enable_idempotence: bool | None = None  # None: Kafka's default (on when acks=all)
    max_in_flight_requests_per_connection: int = 5
    max_request_size: int = 4 * 1024 * 1024
    buffer_memory: int = 32 * 1024 * 1024  # encoded bytes a producer queues before it flushes them (0: no limit)
    transaction_timeout_ms: int = 60_000
    connections_max_idle_ms: int = 540_000
    receive_buffer_bytes: int = 4 * 1024 * 1024
    send_buffer_bytes: int = 1024 * 1024
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str = "GSSAPI"
    sasl_jaas_config: Secret | None = None
    sasl_username: str | None = None
    sasl_password: Secret | None = None
    ssl: dict = field(default_factory=dict)  # "ssl.*" options (key with prefix) -> str or Secret
    sasl: dict = field(default_factory=dict)  # other "sasl.*" options -> str or Secret
    group_id: str | None = None
    client_rack: str | None = None  # client.rack: fetch from the replica in this rack when the brokers say so
    extra: dict = field(default_factory=dict)  # unknown options, sensitive ones wrapped in Secret

    # -- construction ---------------------------------------------------------------------------------
    @classmethod
    def from_kafka_options(cls, opts: Mapping[str, Any] | None = None, **overrides: Any) -> "ClientConfig":
        """Parse Kafka client properties (no ``kafka.`` prefix). Raises :class:`ConfigError` naming the key."""
        values: dict[str, Any] = {}
        ssl: dict[str, Any] = {}
        sasl: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for raw_key, value in dict(opts or {}).items():
            key = str(raw_key).strip()
            if value is None:
                continue
            if key == "bootstrap.servers":
                values["bootstrap_servers"] = _servers(key, value)
            elif key == "client.id":
                values["client_id"] = _as_str(key, value)
            elif key in _INT_OPTIONS:
                name, minimum = _INT_OPTIONS[key]
                values[name] = _int(key, value, minimum=minimum)
            elif key == "isolation.level":
                values["isolation_level"] = _choice(key, value, ISOLATION_LEVELS)
            elif key == "acks":
                values["acks"] = _acks(key, value)
            elif key == "compression.type":
                values["compression_type"] = _choice(key, value, COMPRESSION_TYPES)
            elif key == "enable.idempotence":
                values["enable_idempotence"] = _bool(key, value)
            elif key == "security.protocol":
                values["security_protocol"] = _as_str(key, value).upper()  # checked by validate()
            elif key == "sasl.mechanism":
                values["sasl_mechanism"] = _choice(key, value, SASL_MECHANISMS, upper=True)
            elif key == "sasl.jaas.config":
                values["sasl_jaas_config"] = Secret(_as_str(key, value))
            elif key == "sasl.username":
                values["sasl_username"] = _as_str(key, value)
            elif key == "sasl.password":
                values["sasl_password"] = Secret(_as_str(key, value))
            elif key == "group.id":
                values["group_id"] = _as_str(key, value)
            elif key == "client.rack":
                values["client_rack"] = _as_str(key, value) or None
            elif key.startswith("ssl."):
                ssl[key] = Secret(_as_str(key, value)) if is_sensitive_key(key) else _as_str(key, value)
            elif key.startswith("sasl."):
                sasl[key] = Secret(_as_str(key, value)) if is_sensitive_key(key) else _as_str(key, value)
            else:
                extra[key] = Secret(_as_str(key, value)) if is_sensitive_key(key) else value
        values.update(ssl=ssl, sasl=sasl, extra=extra)
        values.update(overrides)
        config = cls(**values)
        config.validate()
        return config

    def validate(self) -> None:
        """Checks of values and across fields (raise :class:`ConfigError`); the one place that checks
        ``security.protocol``, also for configs changed with :meth:`replace`."""
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
        config = dataclasses.replace(self, **changes)
        config.validate()
        return config

    # -- derived values -------------------------------------------------------------------------------
    @property
    def idempotence(self) -> bool:
        """Whether the producer is idempotent: explicitly set, or by default when acks=all."""
        if self.enable_idempotence is None:
            return self.acks == -1 and self.max_in_flight_requests_per_connection <= 5
        return self.enable_idempotence

    @property
    def max_response_bytes(self) -> int:
        """Largest response frame accepted from a broker: fetch.max.bytes plus 64 MiB of slack."""
        return max(self.fetch_max_bytes, self.max_partition_fetch_bytes) + 64 * 1024 * 1024

    @property
    def read_committed(self) -> bool:
        return self.isolation_level == "read_committed"

    def __hash__(self) -> int:  # usable as a cache key (e.g. one client per config in an executor)
        return hash(tuple((f.name, _freeze(getattr(self, f.name))) for f in dataclasses.fields(self)))

    def __repr__(self) -> str:  # dataclass repr would be fine (Secret masks itself); keep it short
        shown = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                 if getattr(self, f.name) != f.default and f.name not in ("ssl", "sasl", "extra")}
        for name in ("ssl", "sasl", "extra"):
            if getattr(self, name):
                shown[name] = getattr(self, name)
        return "ClientConfig(" + ", ".join(f"{k}={v!r}" for k, v in shown.items()) + ")"
