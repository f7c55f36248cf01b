"""format("kwire") over SASL/OAUTHBEARER with the options Spark and Databricks users copy from their docs.

A broker validating RS256 JWTs from the test identity provider; batch reads compared with Spark's built-in
``kafka`` source logging in through the Java client's own OIDC handler with the same options; writes; a Python
token provider called on the executors (one token per process); a wrong client secret; and a stream that runs
through several token lifetimes on a listener whose sessions last 3 s, re-authenticating instead of reconnecting.
"""

from __future__ import annotations

import pickle
import threading
import time
import uuid
from collections import Counter

import pyarrow as pa
import pytest

from harness import KafkaCluster, Listener
from harness.oauth_provider import KAFKA_LOGIN_MODULE, OAuthProvider
from spark_kwire.client.admin.admin import Admin
from spark_kwire.client.consumer.fetcher import fetch_range
from spark_kwire.client.consumer.offsets import list_offsets
from spark_kwire.client import KafkaClient, Producer
from tests.client.auth.oauth_fixtures import CLIENT_ID, CLIENT_SECRET, JAVA_HANDLER, REAUTH_MS, RecordingRelay

SHADED_HANDLER = "kafkashaded." + JAVA_HANDLER
SHADED_MODULE = "kafkashaded." + KAFKA_LOGIN_MODULE


@pytest.fixture(scope="module")
def idp():
    with OAuthProvider({CLIENT_ID: CLIENT_SECRET}) as provider:
        yield provider


@pytest.fixture(scope="module")
def oauth_cluster(idp):
    """OAUTH (direct) and REAUTH (3-s sessions, reached only through a relay that counts connections and
    authentications: the broker advertises the relay's port)."""
    props = {**idp.broker_properties("OAUTH"), **idp.broker_properties("REAUTH", reauth_ms=REAUTH_MS)}
    cluster = KafkaCluster(1, listeners=[Listener("OAUTH", "SASL_PLAINTEXT"), Listener("REAUTH", "SASL_PLAINTEXT")],
                           extra_properties=props, system_properties=idp.broker_system_properties())
    node = cluster.nodes[1]
    reauth = next(l for l in node.listeners if l.name == "REAUTH")
    relay = RecordingRelay(reauth.port)
    real_port, reauth.port = reauth.port, relay.port
    cluster.extra_properties["listeners"] = ",".join(
        [f"{l.name}://127.0.0.1:{real_port if l.name == 'REAUTH' else l.port}" for l in node.listeners]
        + [f"CONTROLLER://127.0.0.1:{node.controller_port}"])
    with cluster:
        yield cluster, relay
    relay.close()


def _options(cluster: KafkaCluster, idp: OAuthProvider, listener: str = "OAUTH", *, shaded: bool = True,
             secret: str = CLIENT_SECRET) -> dict:
    """Spark options as Databricks documents OIDC (kafkashaded. names) or as open-source Spark users write them."""
    prefix = "kafkashaded." if shaded else ""
    return {
        "kafka.bootstrap.servers": cluster.bootstrap(listener),
        "kafka.security.protocol": "SASL_PLAINTEXT",
        "kafka.sasl.mechanism": "OAUTHBEARER",
        "kafka.sasl.login.callback.handler.class": prefix + JAVA_HANDLER,
        "kafka.sasl.oauthbearer.token.endpoint.url": idp.token_endpoint,
        "kafka.sasl.jaas.config": f'{prefix}{KAFKA_LOGIN_MODULE} required clientId="{CLIENT_ID}" '
                                  f'clientSecret="{secret}" scope="kafka";',
    }


def _client(cluster, idp, listener="OAUTH") -> KafkaClient:
    return KafkaClient({k[len("kafka."):]: v for k, v in _options(cluster, idp, listener, shaded=False).items()})


def _apply(builder, options: dict):
    for key, value in options.items():
        builder = builder.option(key, value)
    return builder


def _new_topic(client: KafkaClient, partitions: int, rows: int = 0) -> str:
    topic = f"spark-oauth-{uuid.uuid4().hex[:10]}"
    Admin(client).create_topics([(topic, partitions, 1)])
    if rows:
        with Producer(client) as producer:
            for p in range(partitions):
                producer.send_batch(topic, p, pa.array([f"p{p}-{i}".encode() for i in range(rows)], pa.binary()),
                                    keys=pa.array([f"k{i}".encode() for i in range(rows)], pa.binary()))
            producer.flush()
    return topic


def test_batch_read_matches_sparks_kafka_source_with_the_same_options(spark, oauth_cluster, idp, capsys):
    cluster, _ = oauth_cluster
    with _client(cluster, idp) as client:
        topic = _new_topic(client, partitions=3, rows=150)
    oracle_options = {**_options(cluster, idp, shaded=False), "subscribe": topic, "startingOffsets": "earliest"}
    columns = ["CAST(key AS STRING) k", "CAST(value AS STRING) v", "topic", "partition", "offset", "timestamp",
               "timestampType"]
    expected = sorted(_apply(spark.read.format("kafka"), oracle_options).load().selectExpr(*columns).collect())
    kwire = _apply(spark.read.format("kwire"), {**_options(cluster, idp), "subscribe": topic}).load()
    got = sorted(kwire.selectExpr(*columns).collect())
    assert len(expected) == 450 and got == expected
    kwire.explain(mode="extended")
    assert CLIENT_SECRET not in capsys.readouterr().out


def test_write_then_read_back_and_options_hold_no_clear_secret(spark, oauth_cluster, idp):
    from spark_kwire.spark.options.parsing import ReadOptions, WriteOptions

    cluster, _ = oauth_cluster
    with _client(cluster, idp) as client:
        topic = _new_topic(client, partitions=2)
        df = spark.createDataFrame([(f"k{i}", f"v{i}") for i in range(300)], "key string, value string")
        _apply(df.write.format("kwire"), {**_options(cluster, idp), "topic": topic}).mode("append").save()
        ends = list_offsets(client, [(topic, 0), (topic, 1)], -1)
        got = [v.decode() for p in range(2) for b in fetch_range(client, topic, p, 0, ends[(topic, p)][0])
               for v in b.value.to_pylist()]
    assert sorted(got) == sorted(f"v{i}" for i in range(300))
    read = ReadOptions.parse({**_options(cluster, idp), "subscribe": topic})
    write = WriteOptions.parse({**_options(cluster, idp), "topic": topic})
    for obj in (read, write):
        assert CLIENT_SECRET not in repr(obj) and CLIENT_SECRET.encode() not in pickle.dumps(obj)


def test_wrong_client_secret_fails_fast_naming_the_provider_error(spark, oauth_cluster, idp):
    cluster, _ = oauth_cluster
    wrong = "wrong-" + CLIENT_SECRET
    options = {**_options(cluster, idp, secret=wrong), "subscribe": "any-topic"}
    start = time.monotonic()
    with pytest.raises(Exception) as info:
        _apply(spark.read.format("kwire"), options).load().collect()
    text = str(info.value)
    assert time.monotonic() - start < 60
    assert "invalid_client" in text and idp.token_endpoint in text and "HTTP 401" in text
    assert wrong not in text and CLIENT_SECRET not in text


def test_python_token_provider_runs_on_executors_once_per_process(spark, oauth_cluster, idp):
    cluster, _ = oauth_cluster
    with _client(cluster, idp) as client:
        topic = _new_topic(client, partitions=4, rows=50)
    before = len(idp.issued)
    options = {
        "kafka.bootstrap.servers": cluster.bootstrap("OAUTH"), "kafka.security.protocol": "SASL_PLAINTEXT",
        "kafka.sasl.mechanism": "OAUTHBEARER",
        "kafka.sasl.login.callback.handler.class": "tests.oauth_providers:client_credentials",
        "kafka.sasl.oauthbearer.config": f"endpoint={idp.token_endpoint} client_id={CLIENT_ID} "
                                         f"client_secret={CLIENT_SECRET}",
        "subscribe": topic, "minPartitions": "12"}
    rows = _apply(spark.read.format("kwire"), options).load().selectExpr("CAST(value AS STRING) v").collect()
    assert sorted(r.v for r in rows) == sorted(f"p{p}-{i}" for p in range(4) for i in range(50))
    fetched_by = Counter(t.client_pid for t in idp.issued[before:])
    assert fetched_by and None not in fetched_by  # every token came through the provider, with its pid
    assert all(count == 1 for count in fetched_by.values()), fetched_by  # one token per process
    assert str(__import__("os").getpid()) not in fetched_by  # Spark's Python workers called it, not this process


def test_stream_runs_through_token_lifetimes_reauthenticating(spark, oauth_cluster, idp, tmp_path):
    """8-s tokens, 3-s sessions, 32 s of streaming: four token lifetimes; connections re-authenticate (many
    authentications per connection) instead of reconnecting, and tokens are fetched per lifetime per process
    (the test's own producer writes through the PLAINTEXT listener, so every token counted is Spark's)."""
    cluster, relay = oauth_cluster
    idp.token_lifetime_s = 8
    try:
        with KafkaClient({"bootstrap.servers": cluster.bootstrap_servers}) as client:  # PLAINTEXT: no tokens
            topic = _new_topic(client, partitions=2)
            name = f"oauth_stream_{uuid.uuid4().hex[:6]}"
            stream = _apply(spark.readStream.format("kwire"),
                            {**_options(cluster, idp, "REAUTH"), "subscribe": topic, "startingOffsets": "earliest"})
            connections_before, auths_before = relay.connections, len(relay.oauthbearer_messages())
            issued_before = len(idp.issued)
            query = (stream.load().selectExpr("CAST(value AS STRING) AS value").writeStream.format("memory")
                     .queryName(name).option("checkpointLocation", str(tmp_path / "checkpoint"))
                     .trigger(processingTime="1 second").start())
            # the 32 s count from the first micro-batch: on a busy machine the query's start took a good part of them,
            # leaving too little streaming for the re-authentications counted below
            started = time.monotonic()
            while query.lastProgress is None and query.exception() is None and time.monotonic() < started + 120:
                time.sleep(0.2)
            produced: list[str] = []
            stop = threading.Event()

            def produce() -> None:
                with Producer(client) as producer:
                    while not stop.is_set():
                        value = f"r{len(produced)}"
                        producer.send_batch(topic, len(produced) % 2, pa.array([value.encode()], pa.binary()))
                        producer.flush()
                        produced.append(value)
                        time.sleep(0.1)

            writer = threading.Thread(target=produce, daemon=True)
            writer.start()
            try:
                time.sleep(32)
                stop.set()
                writer.join(30)
                deadline = time.monotonic() + 90
                while time.monotonic() < deadline and query.exception() is None:
                    if spark.sql(f"SELECT count(*) AS n FROM {name}").collect()[0].n >= len(produced):
                        break
                    time.sleep(1)
                assert query.exception() is None, query.exception()
                values = [r.value for r in spark.sql(f"SELECT value FROM {name}").collect()]
            finally:
                query.stop()
    finally:
        idp.token_lifetime_s = 3600
    assert len(produced) > 100 and sorted(values) == sorted(produced)  # no loss, no duplicates
    connections = relay.connections - connections_before
    authentications = len(relay.oauthbearer_messages()) - auths_before
    tokens = len(idp.issued) - issued_before
    print(f"stream: {len(produced)} records, {connections} connections, {authentications} authentications, "
          f"{tokens} tokens")
    assert 1 <= connections <= 12, f"{connections} connections: a reconnect storm"
    assert authentications >= connections + 6, f"{authentications} authentications on {connections} connections"
    # each Spark process fetches once per token lifetime (~6.6 s here), however many tasks and re-authentications
    assert 4 <= tokens <= 8 * connections, f"{tokens} tokens for 32 s of 8-s tokens in {connections} processes"
