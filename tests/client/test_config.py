"""ClientConfig parsing (no broker needed)."""

from __future__ import annotations

import pickle

import pytest

from spark_kwire.client import ClientConfig, ConfigError, Secret
from spark_kwire.protocol.errors import KwireError


def test_defaults_and_string_values():
    c = ClientConfig.from_kafka_options({
        "bootstrap.servers": "a:9092, b:9093", "request.timeout.ms": "1500", "acks": "1", "retries": "3",
        "isolation.level": "read_committed", "compression.type": "ZSTD", "security.protocol": "plaintext",
        "enable.idempotence": "false", "group.id": "g1",
    })
    assert c.bootstrap_servers == (("a", 9092), ("b", 9093))
    assert c.request_timeout_ms == 1500
    assert c.acks == 1 and c.retries == 3
    assert c.isolation_level == "read_committed" and c.read_committed
    assert c.compression_type == "zstd"
    assert c.security_protocol == "PLAINTEXT"
    assert c.enable_idempotence is False and not c.idempotence
    assert c.group_id == "g1"
    d = ClientConfig.from_kafka_options({"bootstrap.servers": "h:1"})
    assert (d.request_timeout_ms, d.socket_connection_setup_timeout_ms, d.retry_backoff_ms, d.retry_backoff_max_ms) \
        == (30000, 10000, 100, 1000)
    assert (d.delivery_timeout_ms, d.fetch_max_bytes, d.fetch_max_wait_ms, d.acks) == (120000, 52428800, 500, -1)
    assert d.max_partition_fetch_bytes == 1048576  # Kafka's defaults: fetch.max.bytes 50 MiB, 1 MiB per partition
    assert d.idempotence and d.max_in_flight_requests_per_connection == 5
    assert ClientConfig.from_kafka_options({"bootstrap.servers": "h:1", "acks": "all"}).acks == -1
    # idempotence is Kafka's default only with acks=all: acks=1 alone silently turns it off
    assert not ClientConfig.from_kafka_options({"bootstrap.servers": "h:1", "acks": "1"}).idempotence
    assert d.linger_ms is None  # unset: records wait for buffer.memory or flush() (see client/producer.py)
    assert ClientConfig.from_kafka_options({"bootstrap.servers": "h:1", "linger.ms": "20"}).linger_ms == 20


def test_security_protocol_is_checked_by_validate_also_after_replace():
    config = ClientConfig.from_kafka_options({"bootstrap.servers": "h:1", "security.protocol": "sasl_ssl"})
    assert config.security_protocol == "SASL_SSL"
    with pytest.raises(ConfigError, match=r"'security.protocol'.*accepted: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"):
        config.replace(security_protocol="TLS")


@pytest.mark.parametrize("key,value,accepted", [
    ("request.timeout.ms", "30s", "an integer"),
    ("acks", "2", "all, -1, 0, 1"),
    ("isolation.level", "read_dirty", "read_uncommitted, read_committed"),
    ("compression.type", "brotli", "none, gzip, snappy, lz4, zstd"),
    ("security.protocol", "TLS", "PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"),
    ("enable.idempotence", "maybe", "true, false"),
    ("bootstrap.servers", "hostonly", "host:port"),
])
def test_malformed_values_name_key_value_and_accepted(key, value, accepted):
    with pytest.raises(ConfigError) as info:
        ClientConfig.from_kafka_options({"bootstrap.servers": "h:1", key: value})
    text = str(info.value)
    assert key in text and repr(value) in text and accepted in text
    assert isinstance(info.value, KwireError)
    assert info.value.key == key


def test_idempotence_conflicts_are_rejected():
    with pytest.raises(ConfigError, match="acks"):
        ClientConfig.from_kafka_options({"bootstrap.servers": "h:1", "enable.idempotence": "true", "acks": "1"})
    with pytest.raises(ConfigError, match="max.in.flight"):
        ClientConfig.from_kafka_options({"bootstrap.servers": "h:1", "enable.idempotence": "true",
                                         "max.in.flight.requests.per.connection": "6"})


def test_unknown_keys_are_refused_and_secrets_masked():
    # Unknown keys were once kept in an untyped `extra` and ignored; now every key lands in a typed field, a
    # declared no-effect setting, or is refused (tests/client/settings/ has the rest).
    with pytest.raises(ConfigError, match="Unknown Kafka option 'my.api.secret'") as info:
        ClientConfig.from_kafka_options({"bootstrap.servers": "h:1", "my.api.secret": "hunter2"})
    assert "hunter2" not in str(info.value)
    c = ClientConfig.from_kafka_options({
        "bootstrap.servers": "h:1", "security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
        "sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" "
                            "password=\"hunter2\";",
        "ssl.key.password": "hunter2", "ssl.truststore.location": "/tmp/ts.pem",
    })
    assert isinstance(c.sasl.password, Secret) and c.sasl.password.reveal() == "hunter2"
    assert c.tls.trust_file == ("ssl.truststore.location", "/tmp/ts.pem")
    assert isinstance(c.tls.key_password, Secret)
    for text in (repr(c), str(c), repr(c.sasl), f"{c.sasl.password}", str(c.tls)):
        assert "hunter2" not in text
    assert "'***'" in repr(c)
    blob = pickle.dumps(c)
    assert b"hunter2" not in blob
    back = pickle.loads(blob)
    assert back == c and hash(back) == hash(c)
    assert {c: 1}[back] == 1  # usable as a cache key
    assert back.sasl.password.reveal() == "hunter2"
    assert back.tls.key_password.reveal() == "hunter2"


def test_config_error_pickles():
    try:
        ClientConfig.from_kafka_options({"bootstrap.servers": "h:1", "acks": "2"})
    except ConfigError as exc:
        back = pickle.loads(pickle.dumps(exc))
        assert str(back) == str(exc) and back.key == "acks"
    else:
        pytest.fail("no ConfigError")


def test_client_errors_pickle_with_their_context():
    from spark_kwire.client import (BrokerConnectionError, KafkaApiError, OffsetOutOfRangeError, ProduceError,
                                    RequestTimeoutError, RetriesExhaustedError)

    errors = [
        OffsetOutOfRangeError("t", 3, 5, 10, 30, broker=1),
        ProduceError("t", 1, "non-retriable error", broker=2, error=KafkaApiError(10, topic="t", partition=1), code=10),
        RetriesExhaustedError("fetching t-0", 7, 12.5, RequestTimeoutError("h:1", "no answer", node_id=3)),
        BrokerConnectionError("h:9092", "could not connect: Connection refused"),
    ]
    for err in errors:
        back = pickle.loads(pickle.dumps(err))
        assert type(back) is type(err) and str(back) == str(err)
        assert back.__dict__.keys() == err.__dict__.keys()
    back = pickle.loads(pickle.dumps(errors[0]))
    assert (back.topic, back.partition, back.offset, back.log_start_offset, back.log_end_offset) == ("t", 3, 5, 10, 30)
    assert pickle.loads(pickle.dumps(errors[2])).last_error.retriable
    assert "MESSAGE_TOO_LARGE" in str(errors[1]) and "broker 2" in str(errors[1])
