"""Client layer: sockets, metadata, retries, fetch and produce over the Kafka wire protocol (no Spark).

``KafkaClient`` is the core (connections, metadata, retries); the rest is layered on it and takes it as
an argument, as franz-go's kadm takes a kgo client:

    from spark_kwire.client import Admin, KafkaClient, Producer, fetch_range, list_offsets

    with KafkaClient({"bootstrap.servers": "localhost:9092"}) as client:
        Admin(client).create_topics([("t", 3, 1)])
        offsets = list_offsets(client, [("t", 0)], "latest")
        for batch in fetch_range(client, "t", 0, 0, offsets[("t", 0)][0]):
            ...
        with Producer(client) as producer:
            producer.send_batch("t", 0, values)
"""

from spark_kwire.client.admin import Admin
from spark_kwire.client.config import ClientConfig, Secret
from spark_kwire.client.connection import BrokerConnection, PendingResponse
from spark_kwire.client.errors import (BrokerConnectionError, ClientError, ConfigError, KafkaApiError, KwireError,
                                       OffsetOutOfRangeError, ProduceError, RequestTimeoutError,
                                       RetriesExhaustedError, UnknownTopicError, UnsupportedVersionError,
                                       FetchStalledError)
from spark_kwire.client.fetcher import RangeReader, fetch_range
from spark_kwire.client.kafka_client import KafkaClient
from spark_kwire.client.metadata import BrokerInfo, ClusterMetadata, PartitionInfo, TopicInfo
from spark_kwire.client.offsets import list_offsets
from spark_kwire.client.producer import PartitionAck, Producer

__all__ = [
    "KafkaClient", "Admin", "list_offsets", "fetch_range", "ClientConfig", "Secret", "BrokerConnection",
    "PendingResponse", "RangeReader", "Producer", "PartitionAck", "BrokerInfo", "ClusterMetadata", "PartitionInfo",
    "TopicInfo",
    "KwireError", "KafkaApiError", "ClientError", "ConfigError", "BrokerConnectionError", "RequestTimeoutError",
    "UnsupportedVersionError", "UnknownTopicError", "OffsetOutOfRangeError", "ProduceError", "RetriesExhaustedError", "FetchStalledError",
]
