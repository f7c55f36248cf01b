"""kwire from SQL on whichever PySpark runs this file (`make test` runs it on 4.0 to 4.3): temporary views that are
read (the same rows as the same view `USING kafka`), written with INSERT INTO (read back by confluent-kafka) or
both; options judged at the view for what is wrong whatever the use and at the read or write for the rest;
INSERT OVERWRITE and catalog tables refused with the reason; a stream defined in Python queried with SQL.
"""

from __future__ import annotations

import json
import uuid

import pytest

PARTITIONS = 3


def _sql_error(spark, statement: str) -> str:
    with pytest.raises(Exception) as caught:
        spark.sql(statement).collect()
    return str(caught.value)


def _options(bootstrap: str, **options: str) -> str:
    pairs = {"kafka.bootstrap.servers": bootstrap, **options}
    return ", ".join(f"`{k}` '{v}'" for k, v in pairs.items())


def _view(spark, name: str, bootstrap: str, using: str = "kwire", **options: str) -> None:
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW {name} USING {using} OPTIONS ({_options(bootstrap, **options)})")


def read_back(bootstrap: str, topic: str, partitions: int = 1) -> list[tuple]:
    """Every record of ``topic`` as (partition, offset, key, value, headers), read by confluent-kafka up to the
    high watermarks (an independent client; exact, no waiting for stragglers)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"sql-{uuid.uuid4().hex[:8]}",
                         "enable.auto.commit": False})
    try:
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1] for p in range(partitions)}
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions) if ends[p] > 0])
        got = []
        while len(got) < sum(ends.values()):
            for m in consumer.consume(500, timeout=5):
                assert m.error() is None, m.error()
                got.append((m.partition(), m.offset(), m.key(), m.value(), tuple(m.headers() or ())))
        return sorted(got)
    finally:
        consumer.close()


@pytest.fixture(scope="module")
def source_topic(bootstrap, create_topic, produce):
    """Records where kwire and Spark's source could differ: headers (none, several, a null value), null keys and
    values, several partitions."""
    topic = create_topic(f"sql-src-{uuid.uuid4().hex[:8]}", partitions=PARTITIONS)
    records = []
    for i in range(60):
        headers = [] if i % 3 == 0 else [("h", f"v{i}".encode()), ("n", None)] if i % 3 == 1 else [("h", b"x")] * 2
        records.append((None if i % 7 == 0 else f"k{i}", None if i % 11 == 0 else f"value-{i}", headers, None,
                        i % PARTITIONS))
    produce(topic, records)
    return topic


def _rows(spark, view: str) -> list[tuple]:
    return sorted((tuple(r) for r in spark.sql(f"SELECT * FROM {view}").collect()), key=lambda r: r[2:5])


def test_view_read_equals_the_same_view_using_kafka(spark, bootstrap, source_topic):
    options = dict(subscribe=source_topic, includeHeaders="true",
                   startingOffsets=json.dumps({source_topic: {"0": 3, "1": -2, "2": 5}}),
                   endingOffsets=json.dumps({source_topic: {"0": 15, "1": -1, "2": 18}}))
    _view(spark, "sql_kw", bootstrap, **options)
    _view(spark, "sql_kafka", bootstrap, using="kafka", **options)
    ours, oracle = _rows(spark, "sql_kw"), _rows(spark, "sql_kafka")
    assert ours == oracle
    assert len(ours) == (15 - 3) + 20 + (18 - 5)
    assert {len(r[-1] or ()) for r in ours} == {0, 2}  # headers read, as Spark's source reads them
    assert spark.table("sql_kw").schema == spark.table("sql_kafka").schema


@pytest.fixture
def target(bootstrap, create_topic):
    return create_topic(f"sql-out-{uuid.uuid4().hex[:8]}", partitions=2)


def test_insert_into_a_view_naming_topic_is_read_back_exactly(spark, bootstrap, target):
    _view(spark, "sql_out", bootstrap, topic=target)
    assert spark.table("sql_out").columns == ["key", "value", "headers", "partition"]
    spark.sql("""INSERT INTO sql_out SELECT CAST(id AS STRING), CONCAT('v', id),
                 array(named_struct('key', 'n', 'value', CAST(CAST(id AS STRING) AS BINARY))), CAST(id % 2 AS INT)
                 FROM range(10)""")
    # a column list in another order, and BY NAME, with every column (Spark 4.0 fills no missing ones)
    spark.sql("INSERT INTO sql_out (partition, value, key, headers) SELECT 1, 'listed', 'L', NULL")
    spark.sql("INSERT INTO sql_out BY NAME SELECT NULL AS headers, 0 AS partition, 'named' AS value, NULL AS key")
    # binary keys and values too, byte for byte (SQL casts binary to the view's string columns keeping the bytes)
    spark.sql("INSERT INTO sql_out SELECT X'FF00FE', X'C3287A80', NULL, 0")
    got = read_back(bootstrap, target, partitions=2)
    expected = ([(i % 2, f"{i}".encode(), f"v{i}".encode(), (("n", f"{i}".encode()),)) for i in range(10)]
                      + [(1, b"L", b"listed", ()), (0, None, b"named", ()), (0, b"\xff\x00\xfe", b"\xc3(z\x80", ())])
    assert sorted(((p, k, v, h) for p, _o, k, v, h in got), key=repr) == sorted(expected, key=repr)


def test_insert_naming_some_columns_fills_the_others_where_spark_does(spark, bootstrap, target):
    """Spark 4.1+ fills the columns an INSERT leaves out with NULL; Spark 4.0 refuses it before kwire is called:
    either way nothing else is written (the docs say 4.0 needs every column)."""
    _view(spark, "sql_some", bootstrap, topic=target)
    try:
        spark.sql("INSERT INTO sql_some (key, value) SELECT 'a', 'only-key-and-value'")
        spark.sql("INSERT INTO sql_some BY NAME SELECT 'by-name' AS value")
    except Exception as e:  # noqa: BLE001 - Spark's own refusal, checked below
        assert "CANNOT_FIND_DATA" in str(e) or "NOT_ENOUGH_DATA_COLUMNS" in str(e), str(e)
        assert read_back(bootstrap, target, partitions=2) == []
        return
    assert sorted(((k, v, h) for _p, _o, k, v, h in read_back(bootstrap, target, partitions=2)), key=repr) == [
        (None, b"by-name", ()), (b"a", b"only-key-and-value", ())]


def test_a_view_naming_both_is_read_and_written(spark, bootstrap, target):
    # startingOffsets is the read's, deliveryGuarantee the write's: each use leaves the other's aside
    _view(spark, "sql_both", bootstrap, subscribe=target, topic=target, startingOffsets="earliest",
          deliveryGuarantee="at-least-once")
    assert spark.table("sql_both").columns[:4] == ["key", "value", "topic", "partition"]
    # its columns are the read's: binary key and value (SQL casts no string to binary by itself)
    spark.sql("INSERT INTO sql_both SELECT CAST(CAST(id AS STRING) AS BINARY), CAST(CAST(id AS STRING) AS BINARY), "
              "NULL, 0, NULL, NULL, NULL FROM range(5)")
    read = spark.sql("SELECT CAST(value AS STRING) AS v, topic FROM sql_both").collect()
    assert sorted(r.v for r in read) == [str(i) for i in range(5)] and {r.topic for r in read} == {target}
    assert sorted(v for _p, _o, _k, v, _h in read_back(bootstrap, target, partitions=2)) == [
        str(i).encode() for i in range(5)]


def test_insert_overwrite_is_refused_and_writes_nothing(spark, bootstrap, target):
    _view(spark, "sql_over", bootstrap, topic=target)
    error = _sql_error(spark, "INSERT OVERWRITE sql_over SELECT 'k', 'v', NULL, NULL")
    assert "INSERT OVERWRITE" in error and "INSERT INTO" in error and "nothing was written" in error
    assert read_back(bootstrap, target, partitions=2) == []


def test_options_are_judged_at_the_view_for_any_use_and_at_the_use_for_the_rest(spark, bootstrap, target):
    # wrong whatever the use: refused by CREATE VIEW
    def create(**options):
        listed = _options(bootstrap, **options)
        return _sql_error(spark, f"CREATE TEMPORARY VIEW sql_bad USING kwire OPTIONS ({listed})")

    error = create(subscribe=target, startingOffset="earliest")
    assert "Unknown option 'startingoffset'" in error and "Did you mean 'startingOffsets'?" in error
    error = create(subscribe=target, startingOffsets="soonest")
    assert "Option 'startingOffsets' must be 'earliest', 'latest'" in error
    error = create(topic=target, deliveryGuarantee="twice")
    assert "deliveryGuarantee" in error and "exactly-once" in error
    # a read's option on a view that is only written: the view is made, the INSERT refuses it, naming why
    _view(spark, "sql_w", bootstrap, topic=target, startingOffsets="earliest")
    error = _sql_error(spark, "INSERT INTO sql_w SELECT 'k', 'v', NULL, NULL")
    assert "Option 'startingOffsets' does not apply to a kwire write" in error
    # a write's option on a view that is only read: refused by the SELECT
    _view(spark, "sql_r", bootstrap, subscribe=target, deliveryGuarantee="exactly-once")
    error = _sql_error(spark, "SELECT * FROM sql_r")
    assert "Option 'deliveryGuarantee' does not apply to a kwire batch read" in error
    # reading a view that names no topics to read
    error = _sql_error(spark, "SELECT * FROM sql_w")
    assert "Option 'topic' does not apply to a kwire batch read" in error and "'subscribe'" in error
    assert read_back(bootstrap, target, partitions=2) == []


_TABLE_ERROR = "Spark does not keep the OPTIONS of a catalog table over a Python data source"
_VIEW_HINT = "CREATE OR REPLACE TEMPORARY VIEW"


def test_create_table_is_refused_at_once_with_the_view_to_use(spark, bootstrap, source_topic):
    options = _options(bootstrap, subscribe=source_topic)
    error = _sql_error(spark, f"CREATE TABLE sql_table USING kwire OPTIONS ({options})")
    assert "CREATE TABLE ... USING kwire is not supported" in error and _TABLE_ERROR in error and _VIEW_HINT in error
    assert not spark.catalog.tableExists("sql_table")


def test_a_catalog_table_made_another_way_reads_if_spark_passes_its_options(spark, bootstrap, source_topic, target,
                                                                           tmp_path):
    """A table given its columns is made without asking kwire. Whether its reads and writes reach kwire with its
    OPTIONS is Spark's doing: on 4.0 to 4.3 they reach it with none, and kwire says why (the test asserts that one
    of the two happens, completely: a release that keeps the options makes the table read and write)."""
    columns = "key BINARY, value BINARY, topic STRING, partition INT, offset BIGINT, timestamp TIMESTAMP, " \
              "timestampType INT"
    spark.sql(f"CREATE TABLE sql_cols ({columns}) USING kwire OPTIONS "
              f"({_options(bootstrap, subscribe=source_topic, topic=target)}) LOCATION '{tmp_path / 'cols'}'")
    try:
        try:
            count = spark.sql("SELECT count(*) FROM sql_cols").collect()[0][0]
        except Exception as e:  # noqa: BLE001 - the explanation, checked
            assert "kwire was given no options" in str(e) and _TABLE_ERROR in str(e) and _VIEW_HINT in str(e)
            error = _sql_error(spark, "INSERT INTO sql_cols SELECT X'6B', X'76', NULL, NULL, NULL, NULL, NULL")
            assert "kwire was given no options" in error
            assert read_back(bootstrap, target, partitions=2) == []
        else:
            assert count == 60
            spark.sql("INSERT INTO sql_cols SELECT X'6B', X'76', NULL, NULL, NULL, NULL, NULL")
            assert [v for *_x, v, _h in read_back(bootstrap, target, partitions=2)] == [b"v"]
        error = _sql_error(spark, "CREATE TABLE sql_ctas USING kwire OPTIONS "
                                  f"({_options(bootstrap, topic=target)}) LOCATION '{tmp_path / 'ctas'}' "
                                  "AS SELECT 'k' AS key, 'v' AS value")
        assert "kwire was given no options" in error or "CREATE TABLE ... USING kwire is not supported" in error
    finally:
        spark.sql("DROP TABLE IF EXISTS sql_cols")
        spark.sql("DROP TABLE IF EXISTS sql_ctas")


def test_a_stream_defined_in_python_is_queried_with_sql(spark, bootstrap, source_topic, tmp_path):
    (spark.readStream.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("subscribe", source_topic)
     .option("startingOffsets", "earliest").load().createOrReplaceTempView("sql_stream"))
    counts = spark.sql("SELECT partition, count(*) AS n FROM sql_stream GROUP BY partition")
    assert counts.isStreaming
    query = (counts.writeStream.format("memory").queryName("sql_stream_counts").outputMode("complete")
             .option("checkpointLocation", str(tmp_path / "cp")).trigger(availableNow=True).start())
    query.awaitTermination(120)
    assert query.exception() is None
    assert sorted(tuple(r) for r in spark.sql("SELECT * FROM sql_stream_counts").collect()) == [
        (p, 20) for p in range(PARTITIONS)]
    # STREAM(view) over a streaming view is the same stream from Spark 4.1 on; Spark 4.0 takes STREAM(...) for a
    # table function it does not know
    try:
        wrapped = spark.sql("SELECT * FROM STREAM(sql_stream)")
    except Exception as e:  # noqa: BLE001
        assert "UNRESOLVED_COLUMN" in str(e) and "UnresolvedTableValuedFunction [STREAM]" in str(e), str(e)
    else:
        assert wrapped.isStreaming and wrapped.columns == spark.table("sql_stream").columns


# What docs/sql-and-pipelines.md tells users to set: with Spark's own spark.redaction.regex (passwords, secrets,
# tokens), the option values of every secret kwire takes are then shown as *********(redacted) in plans.
REDACTION_REGEX = r"(?i)url|user\.info|jaas|private|\.key$|keystore\.key|credential|oauthbearer\.config"


def test_secrets_in_a_views_options_stay_out_of_plans_descriptions_and_errors(spark, bootstrap, source_topic):
    secrets = ("JAASPW", "KEYDATA", "KEYPW", "USERINFOPW")
    options = _options(
        bootstrap, subscribe=source_topic, **{
            "kafka.security.protocol": "SASL_SSL", "kafka.sasl.mechanism": "PLAIN",
            "kafka.sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required "
                                      "username=\"u\" password=\"JAASPW\";",
            "kafka.ssl.keystore.type": "PEM", "kafka.ssl.key.password": "KEYPW",
            "kafka.ssl.keystore.key": "-----BEGIN ENCRYPTED PRIVATE KEY-----\nKEYDATA\n"
                                      "-----END ENCRYPTED PRIVATE KEY-----",
            "kafka.ssl.keystore.certificate.chain": "-----BEGIN CERTIFICATE-----\nCERT\n-----END CERTIFICATE-----",
            "kafka.default.api.timeout.ms": "5000",
            "valueFormat": "avro", "valueSchema": '"string"', "schema.registry.url": "http://127.0.0.1:9",
            "schema.registry.basic.auth.credentials.source": "USER_INFO",
            "schema.registry.basic.auth.user.info": "reader:USERINFOPW"})
    create = f"CREATE OR REPLACE TEMPORARY VIEW sql_secret USING kwire OPTIONS ({options})"
    # Spark's defaults redact values whose key or value names a password, secret or token, and keys naming a url
    shown = spark.sql(f"EXPLAIN EXTENDED {create}").collect()[0][0]
    assert "JAASPW" not in shown and "KEYPW" not in shown and "http://127.0.0.1:9" not in shown
    assert "USERINFOPW" in shown and "KEYDATA" in shown  # what the docs' setting is for
    spark.conf.set("spark.sql.redaction.options.regex", REDACTION_REGEX)
    try:
        shown = spark.sql(f"EXPLAIN EXTENDED {create}").collect()[0][0]
        assert "(redacted)" in shown and not [s for s in secrets if s in shown], shown
        spark.sql(create)
        described = str(spark.sql("DESCRIBE TABLE EXTENDED sql_secret").collect())
        assert "value" in described and not [s for s in secrets if s in described]
        error = _sql_error(spark, "SELECT * FROM sql_secret")  # bad certificates: the read fails, saying why
        assert "ssl" in error.lower() and not [s for s in secrets if s in error], error[-3000:]
    finally:
        spark.conf.unset("spark.sql.redaction.options.regex")


ORDER = {"type": "record", "name": "Order", "namespace": "sql.views",
         "fields": [{"name": "id", "type": "long"}, {"name": "country", "type": "string"}]}


def test_typed_views_read_and_write_avro_through_the_registry(spark, bootstrap, create_topic):
    """A view with valueFormat=avro reads a topic confluent-kafka's serializer wrote, its value typed by the
    subject's schema; a view naming a topic and the schema inline is written with INSERT INTO, and registers it
    (confluent-kafka's deserializer reads the records back)."""
    from tests.spark.typed_fixtures import consume_avro, produce_avro, the_registry

    registry = the_registry()
    source, target = (create_topic(f"sql-avro-{uuid.uuid4().hex[:8]}") for _ in range(2))
    produce_avro(bootstrap, source, registry.url, ORDER, [{"id": i, "country": "FR"} for i in range(4)])
    _view(spark, "sql_avro_in", bootstrap, subscribe=source, valueFormat="avro",
          **{"schema.registry.url": registry.url})
    assert spark.table("sql_avro_in").schema["value"].dataType.simpleString() == "struct<id:bigint,country:string>"
    assert sorted(r[0] for r in spark.sql("SELECT value.id FROM sql_avro_in").collect()) == [0, 1, 2, 3]

    _view(spark, "sql_avro_out", bootstrap, topic=target, valueFormat="avro", valueSchema=json.dumps(ORDER),
          **{"schema.registry.url": registry.url, "auto.register.schemas": "true"})
    assert spark.table("sql_avro_out").columns == ["key", "value", "headers", "partition"]
    spark.sql("INSERT INTO sql_avro_out SELECT CAST(value.id AS STRING), named_struct('id', value.id + 10, "
              "'country', 'DE'), NULL, NULL FROM sql_avro_in")
    got = consume_avro(bootstrap, target, registry.url, 4)
    assert sorted((k, v["id"], v["country"]) for k, v in got) == [(str(i).encode(), i + 10, "DE") for i in range(4)]
    # a schema derived from the rows written cannot type a view's columns
    derived = _options(bootstrap, topic=target, valueFormat="avro",
                       **{"schema.registry.url": registry.url, "auto.register.schemas": "true"})
    error = _sql_error(spark, f"CREATE TEMPORARY VIEW sql_avro_bad USING kwire OPTIONS ({derived})")
    assert "A view's columns are fixed when it is defined" in error and "valueSchema" in error
