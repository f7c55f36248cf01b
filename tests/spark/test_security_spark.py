"""format("kwire") over SASL_SSL with SCRAM-SHA-512: batch read, write and an AvailableNow stream, with a broker
whose certificates the test generates; the password shows in no plan, progress report or error message."""

from __future__ import annotations

import uuid

import pyarrow as pa
import pytest

from spark_kwire.client import Admin, KafkaClient, Producer, fetch_range
from harness import KafkaCluster, Listener, generate_test_certificates

USER = "spark-user"
PASSWORD = "sp4rk-Pa55-" + uuid.uuid4().hex[:10]
MECHANISM = "SCRAM-SHA-512"


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return generate_test_certificates(tmp_path_factory.mktemp("certs"))


@pytest.fixture(scope="module")
def sasl_ssl_kafka(certs):
    props = {
        "listener.name.sasl_ssl.sasl.enabled.mechanisms": MECHANISM,
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config":
            "org.apache.kafka.common.security.scram.ScramLoginModule required;",
        "listener.name.sasl_ssl.ssl.keystore.type": "PEM",
        "listener.name.sasl_ssl.ssl.keystore.location": str(certs.broker_keystore),
    }
    cluster = KafkaCluster(1, listeners=[Listener("SASL_SSL", "SASL_SSL")], extra_properties=props,
                           scram_users=[(MECHANISM, USER, PASSWORD)])
    if cluster.cluster_id.startswith("-"):  # StorageTool would read "-t -xyz" as an option (1 run in 64)
        cluster.cluster_id = "k" + cluster.cluster_id[1:]
    with cluster:
        yield cluster


@pytest.fixture(scope="module")
def kafka_options(sasl_ssl_kafka, certs) -> dict:
    """Spark options (with the `kafka.` prefix) of the SASL_SSL listener."""
    return {
        "kafka.bootstrap.servers": sasl_ssl_kafka.bootstrap("SASL_SSL"),
        "kafka.security.protocol": "SASL_SSL",
        "kafka.sasl.mechanism": MECHANISM,
        "kafka.sasl.jaas.config": "kafkashaded.org.apache.kafka.common.security.scram.ScramLoginModule required "
                                  f"username='{USER}' password='{PASSWORD}';",
        "kafka.ssl.truststore.type": "PEM",
        "kafka.ssl.truststore.location": str(certs.ca_cert),
    }


@pytest.fixture(scope="module")
def client(kafka_options):
    with KafkaClient({k[len("kafka."):]: v for k, v in kafka_options.items()}) as c:
        yield c


def _new_topic(client, partitions: int = 2, rows: int = 0) -> str:
    topic = f"spark-sec-{uuid.uuid4().hex[:10]}"
    Admin(client).create_topics([(topic, partitions, 1)])
    if rows:
        with Producer(client) as producer:
            for p in range(partitions):
                values = pa.array([f"p{p}-{i}".encode() for i in range(rows)], pa.binary())
                producer.send_batch(topic, p, values)
            producer.flush()
    return topic


def _reader(spark, options: dict, stream: bool = False):
    reader = (spark.readStream if stream else spark.read).format("kwire")
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader


def test_batch_read_over_sasl_ssl(spark, client, kafka_options, capsys):
    topic = _new_topic(client, partitions=2, rows=100)
    df = _reader(spark, {**kafka_options, "subscribe": topic}).load()
    values = sorted(r.value.decode() for r in df.select("value").collect())
    assert values == sorted(f"p{p}-{i}" for p in range(2) for i in range(100))
    df.explain(mode="extended")
    assert PASSWORD not in capsys.readouterr().out


def test_write_over_sasl_ssl(spark, client, kafka_options, capsys):
    topic = _new_topic(client, partitions=1)
    df = spark.createDataFrame([(f"k{i}", f"v{i}") for i in range(50)], "key string, value string")
    writer = df.write.format("kwire").option("topic", topic)
    for key, value in kafka_options.items():
        writer = writer.option(key, value)
    writer.mode("append").save()
    got = [v.decode() for batch in fetch_range(client, topic, 0, 0, 50) for v in batch.value.to_pylist()]
    assert sorted(got) == sorted(f"v{i}" for i in range(50))
    assert PASSWORD not in capsys.readouterr().out


def test_available_now_stream_over_sasl_ssl(spark, client, kafka_options, tmp_path):
    topic = _new_topic(client, partitions=2, rows=40)
    name = f"sec_{uuid.uuid4().hex[:8]}"
    stream = _reader(spark, {**kafka_options, "subscribe": topic, "startingOffsets": "earliest"}, stream=True).load()
    query = (stream.selectExpr("CAST(value AS STRING) AS value").writeStream.format("memory").queryName(name)
             .option("checkpointLocation", str(tmp_path / "checkpoint")).trigger(availableNow=True).start())
    try:
        assert query.awaitTermination(120)
        assert query.exception() is None
        rows = spark.sql(f"SELECT value FROM {name}").collect()
        assert sorted(r.value for r in rows) == sorted(f"p{p}-{i}" for p in range(2) for i in range(40))
        progress = str(query.recentProgress) + str(query.lastProgress) + str(query.status)
        assert PASSWORD not in progress
    finally:
        query.stop()


def test_wrong_password_error_names_mechanism_not_password(spark, client, kafka_options):
    topic = _new_topic(client, partitions=1, rows=1)
    wrong = "wrong-" + PASSWORD
    options = {**kafka_options, "subscribe": topic,
               "kafka.sasl.jaas.config": f'org.apache.kafka.common.security.scram.ScramLoginModule required '
                                         f'username="{USER}" password="{wrong}";'}
    with pytest.raises(Exception) as info:
        _reader(spark, options).load().collect()
    text = str(info.value)
    assert MECHANISM in text and "authentication" in text.lower()
    assert wrong not in text and PASSWORD not in text


def test_parsed_spark_options_do_not_show_secrets(kafka_options):
    from spark_kwire.spark.options.parsing import ReadOptions, WriteOptions

    read = ReadOptions.parse({**kafka_options, "subscribe": "t"})
    write = WriteOptions.parse({**kafka_options, "topic": "t"})
    for obj in (read, write):
        assert PASSWORD not in repr(obj) and PASSWORD not in str(obj)


def test_a_write_enters_the_settings_once_on_its_way_to_the_broker(client, kafka_options):
    """The walk of issue 35: a task's write, from write_batches to an authenticated connection, calls into the
    settings package once (the SCRAM password revealed where it is used). The settings come parsed and pickled from
    the planning side; nothing on the way re-reads an option, re-parses the JAAS line or reveals a secret twice."""
    import os
    import pickle
    import sys
    import threading

    from spark_kwire.client.auth.sasl.exchange import SaslAuthenticator
    from spark_kwire.client.settings import __file__ as settings_init
    from spark_kwire.spark import shared_client
    from spark_kwire.spark.options.parsing import WriteOptions
    from spark_kwire.spark.writing.task_writer import write_batches

    topic = _new_topic(client, partitions=1)
    options = pickle.loads(pickle.dumps(WriteOptions.parse({**kafka_options, "topic": topic})))  # as a task gets it
    settings_dir = os.path.dirname(settings_init) + os.sep
    done = SaslAuthenticator.__call__.__code__
    entries: list[str] = []
    connected = threading.Event()

    def profile(frame, event, arg):
        if connected.is_set():
            return
        if event == "return" and frame.f_code is done:
            connected.set()
        elif event == "call" and frame.f_code.co_filename.startswith(settings_dir):
            caller = frame.f_back
            if caller is not None and not caller.f_code.co_filename.startswith(settings_dir):
                entries.append(f"{frame.f_code.co_name} from {os.path.basename(caller.f_code.co_filename)}:"
                               f"{caller.f_lineno}")

    batch = pa.record_batch([pa.array([b"v"], pa.binary())], names=["value"])
    with shared_client._lock:  # a fresh process: no client, no connection yet
        saved = dict(shared_client._clients), dict(shared_client._idle_producers)
        shared_client._clients.clear()
        shared_client._idle_producers.clear()
    threading.setprofile(profile)
    sys.setprofile(profile)
    try:
        report = write_batches(options, iter([batch]))
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
        with shared_client._lock:
            for c in shared_client._clients.values():
                c.close()
            shared_client._clients.clear()
            shared_client._clients.update(saved[0])
            shared_client._idle_producers.update(saved[1])
    assert connected.is_set() and sum(report.written.values()) == 1
    print(f"walk from write_batches to an authenticated connection: {len(entries)} entries into the settings "
          f"package: {entries}")
    assert len(entries) == 1 and entries[0].startswith("reveal from scram.py"), entries
