"""What a new user does first, on whichever PySpark release runs this file (`make test` runs it on 4.0, 4.1,
4.2 and the newest, each against the installed wheel): a batch write of keyed rows, a batch read, a
processing-time stream and an AvailableNow stream with maxOffsetsPerTrigger, a stream write, and the
capabilities a release lacks either working another way or refused with a message naming the release.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid

import pytest

from spark_kwire.spark.capabilities import ARROW_STREAM_WRITER, FILTER_PUSHDOWN, READ_LIMIT_API

ROWS, CAP, PARTITIONS = 1000, 300, 3


@pytest.fixture(scope="module")
def written_topic(spark, bootstrap, create_topic):
    """A topic holding ROWS keyed rows written by kwire's batch sink."""
    topic = create_topic(f"releases-{uuid.uuid4().hex[:8]}", partitions=PARTITIONS)
    (spark.range(ROWS).selectExpr("CAST(id % 97 AS STRING) AS key", "CONCAT('value-', id) AS value")
     .write.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("topic", topic)
     .mode("append").save())
    return topic


def _rows(df):
    return sorted(tuple(r) for r in df.selectExpr("CAST(key AS STRING)", "CAST(value AS STRING)", "partition",
                                                  "offset").collect())


def test_batch_write_then_read_equals_sparks_kafka_source(spark, bootstrap, written_topic):
    def load(fmt):
        return spark.read.format(fmt).option("kafka.bootstrap.servers", bootstrap).option("subscribe", written_topic)

    ours, oracle = _rows(load("kwire").load()), _rows(load("kafka").load())
    assert len(ours) == ROWS and len({r[1] for r in ours}) == ROWS
    assert ours == oracle
    assert len({r[2] for r in ours}) == PARTITIONS  # keys spread over every partition


def test_filters_give_the_same_rows_with_pushdown_where_the_release_has_it(spark, bootstrap, written_topic,
                                                                           read_stats_dir):
    query = "partition = 1 AND offset >= 10"
    oracle = _rows(spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap)
                   .option("subscribe", written_topic).load().where(query))
    for f in read_stats_dir.glob("reads-*.jsonl"):
        f.unlink()
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    try:
        df = (spark.read.format("kwire").option("kafka.bootstrap.servers", bootstrap)
              .option("subscribe", written_topic).load().where(query))
        assert _rows(df) == oracle and oracle
    finally:
        spark.conf.set("spark.sql.python.filterPushdown.enabled", "false")
    fetched = [line for f in read_stats_dir.glob("reads-*.jsonl") for line in f.read_text().splitlines()
               if written_topic in line]
    # With pushdown only partition 1 from offset 10 is fetched; without it (Spark 4.0) every partition is.
    assert len(fetched) == (1 if FILTER_PUSHDOWN else PARTITIONS), fetched


def _stream(spark, bootstrap, topic, **options):
    reader = (spark.readStream.format("kwire").option("kafka.bootstrap.servers", bootstrap)
              .option("subscribe", topic).option("startingOffsets", "earliest"))
    for name, value in options.items():
        reader = reader.option(name, str(value))
    return reader.load().selectExpr("CAST(value AS STRING) AS value", "partition", "offset")


def _batch_sizes(query) -> list[int]:
    return [sum(s["numInputRows"] for s in p["sources"]) for p in query.recentProgress]


def _batch_ranges(query) -> dict[int, tuple[dict, dict]]:
    """The offsets each micro-batch read, start and end per partition, by batch id; idle progress left out.
    Unlike numInputRows this sees a batch that a restart replays and the file sink skips as already written
    (it reports 0 input rows then)."""
    ranges = {}
    for progress in query.recentProgress:
        source = json.loads(progress.json)["sources"][0]  # PySpark 4.0's progress["sources"] holds offsets as repr()
        end, start = _per_partition(source["endOffset"]), _per_partition(source["startOffset"])
        if end is None:
            continue
        start = start or {partition: 0 for partition in end}
        if start != end:
            ranges[progress["batchId"]] = (start, end)
    return ranges


def _per_partition(offsets) -> dict[str, int] | None:
    """One topic's offsets by partition from a progress's JSON offsets (an object, JSON text, null or "null")."""
    offsets = json.loads(offsets) if isinstance(offsets, str) else offsets
    if offsets is None:
        return None
    (by_partition,) = offsets.values()
    return by_partition


def _size(batch_range) -> int:
    start, end = batch_range
    return sum(end[partition] - start.get(partition, 0) for partition in end)


def _wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.5)


def test_processing_time_stream_stays_within_the_cap_also_after_restarts_in_either_read_mode(
        spark, bootstrap, written_topic, tmp_path):
    """Read on the driver, restarted on the driver, then restarted with tasks: one checkpoint, every row once."""
    out, checkpoint = str(tmp_path / "out"), str(tmp_path / "checkpoint")
    ranges = {}

    def start(mode):
        return (_stream(spark, bootstrap, written_topic, maxOffsetsPerTrigger=CAP, streamReadMode=mode)
                .writeStream.format("parquet").option("path", out).option("checkpointLocation", checkpoint)
                .trigger(processingTime="0 seconds").start())

    def read_so_far(query):
        return sum(_size(r) for r in {**ranges, **_batch_ranges(query)}.values())

    for mode, rows in (("driver", CAP), ("driver", 2 * CAP), ("tasks", ROWS)):
        query = start(mode)
        _wait_for(lambda: read_so_far(query) >= rows or query.exception(), 180, f"{rows} rows")
        if rows == ROWS:
            query.processAllAvailable()
        query.stop()
        assert query.exception() is None
        # A batch stopped before its commit is replayed by the next run: same id, same offsets.
        this_run = _batch_ranges(query)
        assert all(ranges[batch] == this_run[batch] for batch in this_run if batch in ranges), (ranges, this_run)
        ranges.update(this_run)
    # Each restart's first batch starts where the last one ended, in the other mode too.
    batches = [ranges[batch] for batch in sorted(ranges)]
    assert sorted(ranges) == list(range(len(ranges)))
    assert all(before[1] == after[0] for before, after in zip(batches, batches[1:])), batches
    values = [r.value for r in spark.read.parquet(out).collect()]
    assert sorted(values) == sorted(f"value-{i}" for i in range(ROWS))  # every row, exactly once
    assert max(map(_size, batches)) <= CAP and sum(map(_size, batches)) == ROWS, batches


def _available_now(spark, bootstrap, topic, checkpoint, **options):
    """Run an AvailableNow query into a parquet folder beside `checkpoint`: (query, finished, every value in
    that folder). finished is None when the query failed."""
    out = checkpoint + "-out"
    query = (_stream(spark, bootstrap, topic, **options).writeStream.format("parquet").option("path", out)
             .option("checkpointLocation", checkpoint).trigger(availableNow=True).start())
    try:
        finished = query.awaitTermination(240)
    except Exception:  # noqa: BLE001 - the test reads query.exception()
        finished = None
    written = os.path.isdir(out) and any(name.endswith(".parquet") for name in os.listdir(out))
    values = [r.value for r in spark.read.parquet(out).collect()] if written else []
    return query, finished, values


def test_available_now_without_a_cap_reads_everything_once(spark, bootstrap, written_topic, tmp_path):
    query, finished, values = _available_now(spark, bootstrap, written_topic, str(tmp_path / "cp"))
    assert finished and query.exception() is None
    assert sorted(values) == sorted(f"value-{i}" for i in range(ROWS))


@pytest.mark.skipif(not READ_LIMIT_API, reason="the single-batch behaviour of Spark < 4.2 is tested below")
def test_available_now_with_a_cap_reads_everything_once_in_capped_batches(spark, bootstrap, written_topic,
                                                                          tmp_path):
    query, finished, values = _available_now(spark, bootstrap, written_topic, str(tmp_path / "cp"),
                                             maxOffsetsPerTrigger=CAP)
    assert finished and query.exception() is None
    assert sorted(values) == sorted(f"value-{i}" for i in range(ROWS))
    sizes = [n for n in _batch_sizes(query) if n]
    assert max(sizes) <= CAP and len(sizes) == -(-ROWS // CAP), sizes


@pytest.mark.skipif(bool(READ_LIMIT_API), reason="Spark 4.2+ runs capped AvailableNow batches (tested above)")
def test_available_now_with_a_cap_before_spark_4_2(spark, bootstrap, written_topic, tmp_path):
    """Spark < 4.2 runs AvailableNow on a Python source as one batch and does not tell the source which trigger
    runs it. With Spark's AvailableNow wrapper the query is refused before reading anything; without it, the
    one batch stays within the cap and each run goes on where the last one ended (README, release table)."""
    spark.conf.set("spark.sql.streaming.triggerAvailableNowWrapper.enabled", "true")
    try:
        query, finished, values = _available_now(spark, bootstrap, written_topic, str(tmp_path / "wrapped"),
                                                 maxOffsetsPerTrigger=CAP)
    finally:
        spark.conf.unset("spark.sql.streaming.triggerAvailableNowWrapper.enabled")
    assert finished is None and values == []
    message = str(query.exception())
    assert "Trigger.AvailableNow with maxOffsetsPerTrigger" in message and READ_LIMIT_API.since in message, message

    checkpoint, values = str(tmp_path / "single"), []
    for _ in range(-(-ROWS // CAP)):
        read_before = len(values)
        query, finished, values = _available_now(spark, bootstrap, written_topic, checkpoint,
                                                 maxOffsetsPerTrigger=CAP)
        assert finished and query.exception() is None
        assert 0 < len(values) - read_before <= CAP
    assert sorted(values) == sorted(f"value-{i}" for i in range(ROWS))  # run by run, exactly once


def test_stream_write_delivers_every_row_once(spark, bootstrap, written_topic, create_topic, tmp_path):
    target = create_topic(f"releases-out-{uuid.uuid4().hex[:8]}", partitions=2)
    query = (_stream(spark, bootstrap, written_topic).selectExpr("value")
             .writeStream.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("topic", target)
             .option("checkpointLocation", str(tmp_path / "cp")).trigger(availableNow=True).start())
    assert query.awaitTermination(240) and query.exception() is None
    values = [r.v for r in spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap)
              .option("subscribe", target).load().selectExpr("CAST(value AS STRING) AS v").collect()]
    assert sorted(values) == sorted(f"value-{i}" for i in range(ROWS))
    # Spark 4.0 has no Arrow stream writer class; its write worker still hands kwire Arrow batches.
    from spark_kwire.spark.writing.writer import KwireStreamWriter
    from pyspark.sql.datasource import DataSourceArrowWriter

    assert ARROW_STREAM_WRITER or issubclass(KwireStreamWriter, DataSourceArrowWriter)


def test_a_refused_stream_option_reaches_the_user_readably(spark, bootstrap, written_topic, tmp_path):
    """Options are checked when the stream is defined (load()), as Spark's kafka source does; whichever
    step raises, the user sees kwire's message, not Spark hiding it behind an UnboundLocalError."""
    with pytest.raises(Exception) as raised:
        query = (_stream(spark, bootstrap, written_topic, startingOffset="earliest")  # typo: startingOffsets
                 .writeStream.format("noop").option("checkpointLocation", str(tmp_path / "cp"))
                 .trigger(availableNow=True).start())
        query.awaitTermination(120)
    message = str(raised.value)  # Spark hands sources lower-cased option names
    assert "Unknown option 'startingoffset'" in message and "Did you mean 'startingOffsets'" in message, message
    assert "UnboundLocalError" not in message


def test_write_from_a_thread_pool_with_the_active_session_set(spark, bootstrap, create_topic):
    """PySpark (4.3 at least) loses Python data sources in writes started from another thread unless that
    thread sets the active session first: docs/writing.md's workaround, kept working here on every release."""
    topic = create_topic(f"releases-thread-{uuid.uuid4().hex[:8]}")
    errors = []

    def write():
        try:
            spark._jvm.org.apache.spark.sql.SparkSession.setActiveSession(spark._jsparkSession)
            (spark.range(10).selectExpr("CAST(id AS STRING) AS value").write.format("kwire")
             .option("kafka.bootstrap.servers", bootstrap).option("topic", topic).mode("append").save())
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    worker = threading.Thread(target=write)
    worker.start()
    worker.join(180)
    assert not errors, errors
    assert spark.read.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic) \
        .load().count() == 10
