"""format("kwire") against a GSSAPI-only listener with the options a Spark user already has: Krb5LoginModule lines
from a keytab and from a ticket cache, and no JAAS line (KRB5CCNAME). Spark's built-in ``kafka`` source, logging
in with the same JAAS line, is the oracle: it writes awkward rows (null and empty keys and values, headers with
null values and repeated keys, three partitions, lz4 batches) into a topic kwire also writes to (zstd), and both
must read back the same rows, offset for offset. Then the failures a user meets, each timed through Spark: a
keytab with an old key, a principal the KDC does not know, an unreachable KDC, delegation tokens on a cluster
without them; and option mistakes refused at load().
"""

from __future__ import annotations

import re
import time
import uuid

import pytest

from harness import generate_test_certificates
from harness.processes import free_port
from spark_kwire.client import Admin, KafkaClient
from tests.client.auth.kerberos_fixtures import keytab_keys, start_cluster
from tests.spark.kerberos_spark_fixtures import (apply_options, cache_login, fill_default_cache, keytab_login,
                                                 rewrite_krb5_conf, spark_kerberos, spark_options)  # noqa: F401

ERROR_BOUND_S = 20
COLUMNS = ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers"]
ROW_SCHEMA = "key binary, value binary, headers array<struct<key:string,value:binary>>, partition int"


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return generate_test_certificates(tmp_path_factory.mktemp("certs"))


@pytest.fixture(scope="module")
def gssapi_kafka(spark_kerberos, certs):
    """A broker whose SASL_PLAINTEXT and SASL_SSL listeners take GSSAPI only (no delegation-token secret)."""
    cluster = start_cluster(spark_kerberos, tls_keystore=certs.broker_keystore)
    yield cluster
    cluster.stop()


def _awkward_rows(tag: str, n: int = 60) -> list[tuple]:
    """Rows where readers could differ: null and empty keys and values, bytes that are not UTF-8, no headers,
    a header with a null value, repeated header keys; spread over partitions 0-2."""
    rows = []
    for i in range(n):
        key = None if i % 5 == 0 else b"" if i % 5 == 1 else f"{tag}-k{i}".encode()
        value = None if i % 7 == 3 else b"" if i % 7 == 4 else f"{tag}-v{i}".encode() + bytes([0xFF, i % 256])
        headers = [] if i % 3 == 0 else [("h", None)] if i % 3 == 1 else [("a", b"1"), ("a", f"{i}".encode())]
        rows.append((key, value, headers, i % 3))
    return rows


def _new_topic(env, gssapi_kafka, partitions: int = 3) -> str:
    topic = f"krb-spark-{uuid.uuid4().hex[:10]}"
    options = {k[len("kafka."):]: v for k, v in spark_options(gssapi_kafka, keytab_login(env, "admin")).items()}
    with KafkaClient(options) as client:
        Admin(client).create_topics([(topic, partitions, 1)])
    return topic


def _write(spark, fmt: str, rows: list[tuple], options: dict, topic: str, compression: str) -> None:
    df = spark.createDataFrame(rows, ROW_SCHEMA)
    writer = apply_options(df.write.format(fmt), {**options, "topic": topic, "kafka.compression.type": compression})
    writer.mode("append").save()


def _read(spark, fmt: str, options: dict, topic: str) -> list:
    df = apply_options(spark.read.format(fmt), {**options, "subscribe": topic, "startingOffsets": "earliest",
                                               "includeHeaders": "true"}).load()
    return sorted(df.select(*COLUMNS).collect(), key=lambda r: (r.partition, r.offset))


def _as_written(rows) -> list:
    """(partition, key, value, headers) of rows read, in a comparable form."""
    return sorted(((r.partition, r.key, r.value, tuple((h.key, h.value) for h in r.headers or ())) for r in rows),
                  key=repr)


def _expected(rows: list[tuple]) -> list:
    return sorted(((p, k, v, tuple(h or ())) for k, v, h, p in rows), key=repr)


@pytest.mark.parametrize("login", ["keytab", "ticket cache", "keytab, SASL_SSL"])
def test_kwire_and_builtin_write_and_read_the_same_rows(spark, spark_kerberos, gssapi_kafka, certs, tmp_path, login):
    jaas = cache_login(spark_kerberos, "spark-user", tmp_path) if login == "ticket cache" else \
        keytab_login(spark_kerberos, "spark-user")
    options = spark_options(gssapi_kafka, jaas, ca=certs.ca_cert if "SASL_SSL" in login else None)
    topic = _new_topic(spark_kerberos, gssapi_kafka)
    builtin_rows, kwire_rows = _awkward_rows("java"), _awkward_rows("kwire")
    _write(spark, "kafka", builtin_rows, options, topic, "lz4")
    _write(spark, "kwire", kwire_rows, options, topic, "zstd")

    oracle = _read(spark, "kafka", options, topic)
    got = _read(spark, "kwire", options, topic)
    assert len(oracle) == len(builtin_rows) + len(kwire_rows)
    assert got == oracle  # every column, offset for offset
    # the built-in source reads back exactly what each writer was given
    assert _as_written(oracle) == _expected(builtin_rows + kwire_rows)
    assert {r.timestampType for r in oracle} == {0}


def test_no_jaas_line_uses_the_default_ticket_cache(spark, spark_kerberos, gssapi_kafka, spark_kerberos_files):
    """No kafka.sasl.jaas.config: driver and workers use KRB5CCNAME's cache, as Java's default."""
    cache = fill_default_cache(spark_kerberos, "cache-user", spark_kerberos_files)
    topic = _new_topic(spark_kerberos, gssapi_kafka)
    rows = _awkward_rows("ccache", 30)
    _write(spark, "kwire", rows, spark_options(gssapi_kafka, None), topic, "lz4")
    got = _read(spark, "kwire", spark_options(gssapi_kafka, None), topic)
    # the built-in source reads the same cache through a JAAS line naming it
    java_jaas = (f'com.sun.security.auth.module.Krb5LoginModule required useTicketCache=true '
                 f'ticketCache="{cache.split(":", 1)[1]}";')
    oracle = _read(spark, "kafka", spark_options(gssapi_kafka, java_jaas), topic)
    assert got == oracle and _as_written(got) == _expected(rows)


def test_stream_read_and_write_with_a_keytab(spark, spark_kerberos, gssapi_kafka, tmp_path):
    options = spark_options(gssapi_kafka, keytab_login(spark_kerberos, "spark-user"))
    source, sink = _new_topic(spark_kerberos, gssapi_kafka), _new_topic(spark_kerberos, gssapi_kafka, 2)
    rows = _awkward_rows("stream", 90)
    _write(spark, "kafka", rows, options, source, "lz4")
    stream = apply_options(spark.readStream.format("kwire"),
                           {**options, "subscribe": source, "startingOffsets": "earliest"}).load()
    query = apply_options(stream.select("key", "value").writeStream.format("kwire"),
                          {**options, "topic": sink, "checkpointLocation": str(tmp_path / "chk")}) \
        .trigger(availableNow=True).start()
    try:
        assert query.awaitTermination(180), "the AvailableNow stream did not end"
        assert query.exception() is None
    finally:
        query.stop()
    got = _read(spark, "kafka", options, sink)
    assert sorted(((r.key, r.value) for r in got), key=repr) == sorted(((k, v) for k, v, _, _ in rows), key=repr)


def _timed_failure(action) -> tuple[str, float]:
    started = time.monotonic()
    with pytest.raises(Exception) as info:
        action()
    return str(info.value), time.monotonic() - started


def _read_and_write_fail(spark, options: dict, topic: str) -> list[tuple[str, float]]:
    """The errors (and seconds) of a batch read and a batch write with `options`."""
    read = _timed_failure(lambda: apply_options(spark.read.format("kwire"), {**options, "subscribe": topic})
                          .load().collect())
    df = spark.createDataFrame([(b"k", b"v")], "key binary, value binary")
    write = _timed_failure(lambda: apply_options(df.write.format("kwire"), {**options, "topic": topic})
                           .mode("append").save())
    return [read, write]


def test_a_keytab_with_an_old_key_fails_fast_saying_so(spark, spark_kerberos, gssapi_kafka):
    keytab = spark_kerberos.user("rotated")
    keys = keytab_keys(keytab)
    spark_kerberos.realm.randomize_key("rotated")  # the keytab now holds a key the KDC no longer accepts
    topic = _new_topic(spark_kerberos, gssapi_kafka)
    for text, seconds in _read_and_write_fail(spark, spark_options(gssapi_kafka, keytab_login(spark_kerberos, "rotated")),
                                              topic):
        print(f"old keytab key: failed in {seconds:.2f} s")
        assert seconds < ERROR_BOUND_S, f"took {seconds:.1f} s: {text[-500:]}"
        assert "the KDC refused the key" in text and spark_kerberos.principal("rotated") in text, text[-2000:]
        assert "export a new keytab" in text.lower()
        assert not any(key in text for key in keys)


def test_an_unknown_principal_fails_fast_saying_so(spark, spark_kerberos, gssapi_kafka):
    spark_kerberos.user("departed")
    spark_kerberos.realm.delete_principal("departed")  # its keytab remains, the KDC forgot it
    topic = _new_topic(spark_kerberos, gssapi_kafka)
    for text, seconds in _read_and_write_fail(spark, spark_options(gssapi_kafka, keytab_login(spark_kerberos,
                                                                                              "departed")), topic):
        print(f"unknown principal: failed in {seconds:.2f} s")
        assert seconds < ERROR_BOUND_S, f"took {seconds:.1f} s: {text[-500:]}"
        assert f"the KDC does not know the principal {spark_kerberos.principal('departed')}" in text, text[-2000:]


def test_an_unreachable_kdc_fails_fast_saying_so(spark, spark_kerberos, gssapi_kafka, spark_kerberos_files):
    from pathlib import Path

    topic = _new_topic(spark_kerberos, gssapi_kafka)
    options = spark_options(gssapi_kafka, keytab_login(spark_kerberos, "isolated"))  # never logged in: no ticket yet
    dead = f"127.0.0.1:{free_port()}"
    conf = Path(spark_kerberos_files["KRB5_CONFIG"])
    rewrite_krb5_conf(spark, spark_kerberos.realm, conf, kdc=dead)
    try:
        failures = _read_and_write_fail(spark, options, topic)
    finally:
        rewrite_krb5_conf(spark, spark_kerberos.realm, conf)
    for text, seconds in failures:
        print(f"unreachable KDC: failed in {seconds:.2f} s")
        assert seconds < ERROR_BOUND_S, f"took {seconds:.1f} s: {text[-500:]}"
        assert "no KDC of the realm answered" in text and dead in text, text[-2000:]


def test_delegation_tokens_on_a_cluster_without_them_fail_at_planning(spark, spark_kerberos, gssapi_kafka):
    topic = _new_topic(spark_kerberos, gssapi_kafka)
    options = {**spark_options(gssapi_kafka, keytab_login(spark_kerberos, "spark-user")), "delegationToken": "true"}
    for text, seconds in _read_and_write_fail(spark, options, topic):
        print(f"delegation tokens disabled: failed in {seconds:.2f} s")
        assert seconds < ERROR_BOUND_S, f"took {seconds:.1f} s: {text[-500:]}"
        assert "delegationToken=true: the driver could not obtain a Kafka delegation token" in text, text[-2000:]
        assert "DELEGATION_TOKEN_AUTH_DISABLED" in text and "delegation.token.secret.key" in text


@pytest.mark.parametrize("options, message", [
    ({"kafka.sasl.mechanism": "GSSAPI", "kafka.sasl.kerberos.service.name": "kafka"},
     "'kafka.security.protocol' is PLAINTEXT (the default), which does not use SASL"),
    ({"kafka.security.protocol": "SASL_PLAINTEXT", "kafka.sasl.mechanism": "PLAIN",
      "kafka.sasl.kerberos.service.name": "kafka"},
     "Option 'kafka.sasl.kerberos.service.name' applies to Kerberos (kafka.sasl.mechanism=GSSAPI)"),
    ({"kafka.security.protocol": "SASL_PLAINTEXT",
      "kafka.sasl.jaas.config": "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab=\"/k\";"},
     "useKeyTab=true needs principal="),
    ({"kafka.security.protocol": "SASL_PLAINTEXT", "kafka.sasl.username": "u", "kafka.sasl.password": "p"},
     "sasl.username and sasl.password are for PLAIN and SCRAM, but sasl.mechanism is GSSAPI (Kafka's default"),
    ({"kafka.security.protocol": "SASL_PLAINTEXT", "delegationToken": "true", "delegationToken.mechanism": "PLAIN"},
     "'delegationToken.mechanism' must be one of SCRAM-SHA-512, SCRAM-SHA-256"),
    ({"kafka.security.protocol": "SSL", "delegationToken": "true"},
     "Option 'delegationToken' needs kafka.security.protocol SASL_SSL or SASL_PLAINTEXT (it is SSL)"),
])
def test_options_that_make_no_sense_are_refused_at_load(spark, options, message):
    reader = apply_options(spark.read.format("kwire"), {"kafka.bootstrap.servers": "localhost:9", "subscribe": "t",
                                                        **options})
    with pytest.raises(Exception, match=re.escape(message)):
        reader.load()


def test_the_example_settings_file_reads_as_spark_options():
    """conf/client-kerberos.properties with the kafka. prefix, plus the delegation-token options it names."""
    from harness import REPO_ROOT
    from spark_kwire.spark.options.parsing import ReadOptions, WriteOptions

    lines = (REPO_ROOT / "conf" / "client-kerberos.properties").read_text().splitlines()
    options = {f"kafka.{k}": v for k, v in (line.split("=", 1) for line in lines if line and not line.startswith("#"))}
    tokens = dict(line.strip("# ").split("=", 1) for line in lines if line.startswith("#   delegationToken"))
    assert ReadOptions.parse({**options, "subscribe": "t"}).delegation_token is None
    assert ReadOptions.parse({**options, "subscribe": "t", **tokens}).delegation_token == "SCRAM-SHA-512"
    assert WriteOptions.parse({**options, "topic": "t", **tokens}).delegation_token == "SCRAM-SHA-512"
