"""Client layer: sockets, auth, metadata, retries, fetch, produce and admin over the Kafka wire protocol (no Spark).

One folder per role: ``core`` (``KafkaClient``: connections, metadata, retried requests, coordinators), ``auth``
(TLS, SASL mechanisms, OAuth tokens, Kerberos), ``consumer`` (offsets lookup, ranged and packed fetches),
``producer`` (producer, accumulator, sender, idempotence, transactions) and ``admin`` (topics, configs, groups,
the cluster as rows). ``settings`` (the options, parsed once into typed settings), ``errors`` and ``retry`` are the
ground they all stand on. The roles take a ``KafkaClient`` as an argument, as franz-go's kadm takes a kgo client:

    from spark_kwire.client import Admin, KafkaClient, Producer, fetch_range, list_offsets

    with KafkaClient({"bootstrap.servers": "localhost:9092"}) as client:
        Admin(client).create_topics([("t", 3, 1)])
        offsets = list_offsets(client, [("t", 0)], "latest")
        for batch in fetch_range(client, "t", 0, 0, offsets[("t", 0)][0]):
            ...
        with Producer(client) as producer:
            producer.send_batch("t", 0, values)
"""

import importlib

# Names load their module on first use (PEP 562): importing one submodule, e.g. spark_kwire.client.errors from
# the data source's planning code, must not pull in the record kernels and numba, which only reading and
# writing tasks need (a quarter second in every new Spark Python worker).
_WHERE = {
    "Admin": "admin.admin", "ClientConfig": "settings.config", "Secret": "settings.secret", "BrokerConnection": "core.connection",
    "PendingResponse": "core.connection", "KafkaClient": "core.kafka_client", "BrokerInfo": "core.metadata",
    "ClusterMetadata": "core.metadata", "PartitionInfo": "core.metadata", "TopicInfo": "core.metadata",
    "RangeReader": "consumer.fetcher", "fetch_range": "consumer.fetcher", "list_offsets": "consumer.offsets",
    "PartitionAck": "producer.producer", "Producer": "producer.producer",
    **{name: "errors" for name in ("BrokerConnectionError", "ClientError", "ConfigError", "KafkaApiError",
                                   "KwireError", "OffsetOutOfRangeError", "ProduceError", "RequestTimeoutError",
                                   "RetriesExhaustedError", "UnknownTopicError", "UnsupportedVersionError",
                                   "FetchStalledError")},
}


def __getattr__(name: str):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_WHERE))


__all__ = [
    "KafkaClient", "Admin", "list_offsets", "fetch_range", "ClientConfig", "Secret", "BrokerConnection",
    "PendingResponse", "RangeReader", "Producer", "PartitionAck", "BrokerInfo", "ClusterMetadata", "PartitionInfo",
    "TopicInfo",
    "KwireError", "KafkaApiError", "ClientError", "ConfigError", "BrokerConnectionError", "RequestTimeoutError",
    "UnsupportedVersionError", "UnknownTopicError", "OffsetOutOfRangeError", "ProduceError", "RetriesExhaustedError", "FetchStalledError",
]
