"""The connection check as a table in local Spark: option("metadata", "check") from a DataFrame, a SQL view and
the Python helper, against the session's real broker (executors of a real cluster: test_check_executors.py)."""

from __future__ import annotations

import pytest

from spark_kwire.check import check_connection, check_table
from spark_kwire.client.check import COLUMNS, STEPS
from spark_kwire.spark.metadata.check_table import EXECUTORS_STEP


def _check(spark, bootstrap, **options):
    reader = spark.read.format("kwire").option("metadata", "check").option("kafka.bootstrap.servers", bootstrap)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


@pytest.fixture(scope="module")
def checked_topic(bootstrap, create_topic):
    return create_topic("check-table-orders", partitions=2)


def test_a_healthy_cluster_gives_ok_rows_from_the_driver_in_the_client_columns(spark, bootstrap, checked_topic):
    df = _check(spark, bootstrap, subscribe=checked_topic, checkTasks="3")
    assert tuple(df.columns) == COLUMNS
    rows = [r.asDict() for r in df.collect()]
    steps = [r["step"] for r in rows]
    assert {"resolve", "connect", "api_versions", "metadata", "topic", "topic_access"} <= set(steps)
    assert set(steps) <= set(STEPS) | {EXECUTORS_STEP}
    bad = [r for r in rows if r["outcome"] not in ("ok", "skipped")]
    assert not bad, bad
    # local mode: the driver's JVM runs the tasks, so every row is the driver's, each step once per target
    assert {r["executor"] for r in rows} == {"driver"}
    assert len({(r["step"], r["target"]) for r in rows}) == len(rows)
    (executors,) = [r for r in rows if r["step"] == EXECUTORS_STEP]
    assert executors["outcome"] == "ok" and "local mode" in executors["detail"]
    topic_rows = [r for r in rows if r["step"] == "topic"]
    assert topic_rows and all(checked_topic in r["target"] for r in topic_rows)


def test_a_failure_is_a_row_with_its_fix(spark, bootstrap):
    from harness import free_port

    rows = [r.asDict() for r in _check(spark, f"127.0.0.1:{free_port()}").collect()]
    (failed,) = [r for r in rows if r["step"] == "connect"]
    assert failed["outcome"] == "fail" and failed["fix"] and "connection refused" in failed["detail"]
    assert {r["outcome"] for r in rows if r["step"] == "metadata"} == {"skipped"}


def test_a_sql_view_reads_the_check(spark, bootstrap, checked_topic):
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW kwire_check USING kwire OPTIONS (metadata 'check', "
              f"`kafka.bootstrap.servers` '{bootstrap}', subscribe '{checked_topic}', checkTasks '2')")
    try:
        counted = spark.sql("SELECT outcome, count(*) AS n FROM kwire_check GROUP BY outcome").collect()
        outcomes = {r["outcome"]: r["n"] for r in counted}
        assert set(outcomes) <= {"ok", "skipped"} and outcomes["ok"] >= 6, outcomes
        topic = spark.sql("SELECT detail FROM kwire_check WHERE step = 'topic'").collect()
        assert topic and checked_topic in topic[0]["detail"] + spark.sql(
            "SELECT target FROM kwire_check WHERE step = 'topic'").collect()[0]["target"]
    finally:
        spark.catalog.dropTempView("kwire_check")


def test_the_helpers_give_the_table_and_a_report(spark, bootstrap, checked_topic):
    options = {"kafka.bootstrap.servers": bootstrap, "subscribe": checked_topic}
    assert tuple(check_table(spark, options).columns) == COLUMNS
    report = check_connection(options, spark=spark)
    assert report.ok and report.worst == "ok", report.text()
    assert report.where(step=EXECUTORS_STEP) and report.where(step="topic")
    assert {r.executor for r in report.rows} == {"driver"}


def test_wrong_options_of_the_check_table_are_refused_naming_them(spark, bootstrap):
    for options, expected in (({"checkTasks": "0"}, "checkTasks"), ({"checkTasks": "many"}, "checkTasks"),
                              ({"checkThroughput": "maybe"}, "checkThroughput"),
                              ({"startingOffsets": "earliest"}, "startingOffsets")):
        with pytest.raises(Exception) as caught:
            _check(spark, bootstrap, **options).collect()
        assert expected.lower() in str(caught.value).lower(), str(caught.value)[:2000]


def test_the_checks_own_options_are_refused_by_every_other_use_saying_where_they_belong():
    from spark_kwire.spark.errors import KwireOptionError
    from spark_kwire.spark.metadata.options import parse_check_table_options, parse_metadata_options
    from spark_kwire.spark.options.parsing import ReadOptions, WriteOptions

    common = {"kafka.bootstrap.servers": "127.0.0.1:9092"}
    for parse, options in ((ReadOptions.parse, {"subscribe": "t", "checkTasks": "2"}),
                           (WriteOptions.parse, {"topic": "t", "checkThroughput": "true"})):
        with pytest.raises(KwireOptionError, match=r'only to the connection check, option\("metadata", "check"\)'):
            parse({**common, **options})
    with pytest.raises(KwireOptionError, match="checkTasks.*only to: check"):
        parse_metadata_options("topics", {**common, "checkTasks": "2"})
    with pytest.raises(KwireOptionError, match="schema registry options apply only to: check"):
        parse_metadata_options("partitions", {**common, "schema.registry.url": "http://registry:8081"})
    settings, tasks = parse_check_table_options({**common, "checkTasks": "3", "provider": "kwire", "metadata": "check"})
    assert tasks == 3 and list(settings.client.bootstrap_servers) == [("127.0.0.1", 9092)]


def test_the_table_of_options_gives_the_check_table_what_the_client_check_reads():
    """The check table's rows in the table of options (spark/options/names.py) are the options the client's check
    reads, plus checkTasks (the table's own), so that none is accepted by the table and unknown to the check."""
    from spark_kwire.client.check.options import CHECK_OPTIONS
    from spark_kwire.spark.metadata.options import CHECK_OWN_OPTIONS, CHECK_TABLE
    from spark_kwire.spark.options.names import OPTIONS, Use

    rows = [o for o in OPTIONS if o.applies_to(Use.METADATA) and CHECK_TABLE in o.tables]
    assert {o.key for o in rows if not o.prefix} == set(CHECK_OPTIONS) | {"checktasks"}
    assert [o.shown for o in rows if o.prefix] == ["schema.registry.*"]
    assert set(CHECK_OWN_OPTIONS) == {"checkThroughput", "checkStepTimeoutMs", "checkTimeoutMs", "checkTasks"}
