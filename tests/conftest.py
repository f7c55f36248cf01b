"""Shared fixtures: a real Apache Kafka broker (KRaft) for the session, unique topic names, a Spark session.

The broker comes from the jars `make jars` fetched; when they are missing the session fails with the
launcher's message (it is never silently skipped).
"""

from __future__ import annotations

import os
import re
import uuid

import pytest

from spark_kwire.testing import KafkaCluster, spark_kafka_connector_jars


@pytest.fixture(scope="session")
def kafka() -> KafkaCluster:
    """One KRaft broker on free loopback ports, shared by the whole session."""
    with KafkaCluster(1) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def bootstrap(kafka: KafkaCluster) -> str:
    return kafka.bootstrap_servers


@pytest.fixture
def topic_name(request) -> str:
    """A topic name unique to this test (readable in broker logs)."""
    base = re.sub(r"[^a-zA-Z0-9]+", "-", request.node.name)[:60].strip("-")
    return f"{base}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="session")
def create_topic(bootstrap):
    """create_topic(name, partitions=1, replication_factor=1, config=None) through an independent client."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})

    def create(name: str, partitions: int = 1, replication_factor: int = 1, config: dict | None = None) -> str:
        futures = admin.create_topics(
            [NewTopic(name, num_partitions=partitions, replication_factor=replication_factor, config=config or {})],
            operation_timeout=30,
        )
        futures[name].result(timeout=60)
        return name

    return create


@pytest.fixture(scope="session")
def spark():
    """A local[2] Spark session with Spark's built-in Kafka connector on spark.jars (the batch oracle)."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", os.sys.executable)
    session = (
        SparkSession.builder.master("local[2]")
        .appName("kwire-tests")
        .config("spark.jars", ",".join(spark_kafka_connector_jars()))
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "2g")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    yield session
    session.stop()
