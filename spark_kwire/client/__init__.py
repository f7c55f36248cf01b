"""Client layer: sockets, metadata, retries, fetch and produce over the Kafka wire protocol (no Spark).

    from spark_kwire.client import ClientConfig, KafkaClient, Producer

    config = ClientConfig.from_kafka_options({"bootstrap.servers": "localhost:9092"})
    with KafkaClient(config) as client:
        offsets = client.list_offsets([("t", 0)], "latest")
        for batch in client.fetch_range("t", 0, 0, offsets[("t", 0)][0]):
            ...
"""

from spark_kwire.client.cluster import KafkaClient
from spark_kwire.client.config import ClientConfig, Secret
from spark_kwire.client.connection import BrokerConnection, PendingResponse
from spark_kwire.client.errors import (BrokerConnectionError, ClientError, ConfigError, KafkaApiError, KwireError,
                                       OffsetOutOfRangeError, ProduceError, RequestTimeoutError,
                                       RetriesExhaustedError, UnknownTopicError, UnsupportedVersionError,
                                       FetchStalledError)
from spark_kwire.client.fetcher import RangeReader
from spark_kwire.client.metadata import BrokerInfo, ClusterMetadata, PartitionInfo, TopicInfo
from spark_kwire.client.producer import PartitionAck, Producer

__all__ = [
    "KafkaClient", "ClientConfig", "Secret", "BrokerConnection", "PendingResponse", "RangeReader", "Producer",
    "PartitionAck", "BrokerInfo", "ClusterMetadata", "PartitionInfo", "TopicInfo",
    "KwireError", "KafkaApiError", "ClientError", "ConfigError", "BrokerConnectionError", "RequestTimeoutError",
    "UnsupportedVersionError", "UnknownTopicError", "OffsetOutOfRangeError", "ProduceError", "RetriesExhaustedError", "FetchStalledError",
]
