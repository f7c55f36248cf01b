"""A kwire stream (readStream -> kwire writeStream) logged in from a keytab whose principal gets 20-second tickets,
against a broker that makes every connection re-authenticate every 6 s (KIP-368), running for 2.5 ticket
lifetimes while records keep arriving: every micro-batch must succeed and the sink must hold exactly the records
written. The KDC's log shows the logins: the stream's processes log in again as their tickets run out.
"""

from __future__ import annotations

import re
import threading
import time
import uuid

import pyarrow as pa
import pytest

from spark_kwire.client import Admin, KafkaClient, Producer, fetch_range
from spark_kwire.client.consumer.offsets import list_offsets
from tests.client.auth.kerberos_fixtures import start_cluster
from tests.spark.kerberos_spark_fixtures import (apply_options, keytab_login, spark_kerberos,  # noqa: F401
                                                 spark_options)

TICKET_LIFE_S = 20
REAUTH_MS = 6_000
RUN_S = 2.5 * TICKET_LIFE_S
PRINCIPAL = "short-lived"


@pytest.fixture(scope="module")
def reauth_kafka(spark_kerberos):
    cluster = start_cluster(spark_kerberos, reauth_ms=REAUTH_MS)
    yield cluster
    cluster.stop()


def _values(client: KafkaClient, topic: str) -> list[bytes]:
    partitions = client.partitions_for(topic)
    ends = list_offsets(client, [(topic, p) for p in partitions], -1)
    return sorted(v for p in partitions for b in fetch_range(client, topic, p, 0, ends[(topic, p)][0])
                  for v in b.value.to_pylist())


def _logins(kdc_log: str, principal: str) -> list[int]:
    """The auth times of the initial tickets (AS requests) the KDC issued to `principal`."""
    pattern = re.compile(r"AS_REQ .*ISSUE: authtime (\d+),.* " + re.escape(principal) + r" for krbtgt/")
    return sorted(int(m.group(1)) for m in pattern.finditer(kdc_log))


@pytest.mark.timeout(600)
def test_a_stream_runs_across_ticket_lifetimes_without_a_failed_batch(spark, spark_kerberos, reauth_kafka, tmp_path):
    spark_kerberos.user(PRINCIPAL, max_life=f"{TICKET_LIFE_S} seconds")
    options = spark_options(reauth_kafka, keytab_login(spark_kerberos, PRINCIPAL))
    source, sink = f"life-in-{uuid.uuid4().hex[:8]}", f"life-out-{uuid.uuid4().hex[:8]}"
    with KafkaClient({"bootstrap.servers": reauth_kafka.bootstrap_servers}) as client:  # the PLAINTEXT listener
        Admin(client).create_topics([(source, 2, 1), (sink, 2, 1)])
        stop = threading.Event()
        sent = []

        def keep_producing() -> None:
            with Producer(client) as producer:
                while not stop.wait(0.5):
                    batch = [f"r{len(sent) + i}".encode() for i in range(40)]
                    producer.send_batch(source, len(sent) % 2, pa.array(batch, pa.binary()))
                    producer.flush()
                    sent.extend(batch)

        feeder = threading.Thread(target=keep_producing, daemon=True)
        feeder.start()
        stream = apply_options(spark.readStream.format("kwire"),
                               {**options, "subscribe": source, "startingOffsets": "earliest"}).load()
        query = apply_options(stream.select("value").writeStream.format("kwire"),
                              {**options, "topic": sink, "checkpointLocation": str(tmp_path / "chk")}) \
            .trigger(processingTime="2 seconds").start()
        started = time.time()
        try:
            while time.time() - started < RUN_S and query.isActive:
                time.sleep(1)
            stop.set()
            feeder.join()
            query.processAllAvailable()
            failure = query.exception()
            batches = [p for p in query.recentProgress if p["numInputRows"] is not None]
        finally:
            stop.set()
            query.stop()
        ran_s = time.time() - started
        assert failure is None, f"the stream failed after {ran_s:.0f} s: {failure}"
        assert ran_s >= 2 * TICKET_LIFE_S and len(batches) >= 10
        assert _values(client, sink) == sorted(sent) and len(sent) > 1000
    logins = _logins(spark_kerberos.realm.kdc_log(), spark_kerberos.principal(PRINCIPAL))
    assert logins and logins[-1] - logins[0] >= TICKET_LIFE_S, f"no login after the first tickets ended: {logins}"
