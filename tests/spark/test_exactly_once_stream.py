"""deliveryGuarantee=exactly-once streams: Kafka to Kafka through kwire, each micro-batch committed with its
transactions; a micro-batch replayed after its transactions were committed is not written twice."""

from __future__ import annotations

import os
import uuid

import pytest
from pyspark.sql import functions as F

from spark_kwire.spark.capabilities import READ_LIMIT_API

from tests.spark.test_exactly_once_write import _consume
from tests.spark.test_stream_driver import assert_read_where_the_mode_says


def _run_available_now(spark, bootstrap, source, sink, checkpoint, read_mode="auto", **options):
    """Runs the stream until everything in `source` is written, in micro-batches of at most 700 offsets: with
    Trigger.AvailableNow where Spark gives Python sources the ReadLimit API (4.2+); before that, where such a
    run reads one capped batch (docs/streaming.md, AvailableNow before Spark 4.2), as its workaround does: a
    processing-time trigger, processAllAvailable(), stop(). `read_mode` is the source's streamReadMode."""
    stream = (spark.readStream.format("kwire").option("kafka.bootstrap.servers", bootstrap)
              .option("subscribe", source).option("startingOffsets", "earliest").option("maxOffsetsPerTrigger", "700")
              .option("streamReadMode", read_mode).load()
              .select("key", F.concat(F.lit("out-"), F.col("value").cast("string")).alias("value")))
    writer = (stream.writeStream.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("topic", sink)
              .option("checkpointLocation", checkpoint).option("deliveryGuarantee", "exactly-once"))
    for key, value in options.items():
        writer = writer.option(key, value)
    if READ_LIMIT_API:
        query = writer.trigger(availableNow=True).start()
        query.awaitTermination(180)
    else:
        query = writer.trigger(processingTime="200 milliseconds").start()
        try:
            query.processAllAvailable()
        finally:
            query.stop()
    assert query.exception() is None, query.exception()
    return query


def _fill(produce, topic, n, partitions):
    produce(topic, [(f"k{i}".encode(), f"in-{i}".encode(), None, None, i % partitions) for i in range(n)])


@pytest.mark.parametrize("read_mode", ["auto", "tasks", "driver"])
def test_stream_writes_each_record_once_for_read_committed_readers(spark, bootstrap, create_topic, produce,
                                                                   tmp_path, read_stats_dir, read_mode):
    source, sink = (f"eos-stream-{kind}-{uuid.uuid4().hex[:6]}" for kind in ("in", "out"))
    create_topic(source, partitions=3)
    create_topic(sink, partitions=2)
    _fill(produce, source, 3000, 3)
    query = _run_available_now(spark, bootstrap, source, sink, str(tmp_path / "cp"), read_mode)
    assert_read_where_the_mode_says(read_stats_dir, source, read_mode)
    assert len(query.recentProgress) >= 2, "maxOffsetsPerTrigger should have cut several micro-batches"
    got = _consume(bootstrap, sink, 2, isolation="read_committed", expected=3000)
    assert sorted(got) == sorted(f"out-in-{i}".encode() for i in range(3000))


@pytest.mark.parametrize("read_mode", ["tasks", "driver"])
def test_micro_batch_replayed_after_its_kafka_commit_is_not_written_twice(spark, bootstrap, create_topic, produce,
                                                                          tmp_path, read_stats_dir, read_mode):
    """The crash between the Kafka commit and Spark's commit log, made deterministic: the last micro-batch's
    entry in the commit log is removed, so the restarted query runs that micro-batch again (a driver-mode batch
    replayed is read by a task: stream_mode.py)."""
    source, sink = (f"eos-replay-{kind}-{uuid.uuid4().hex[:6]}" for kind in ("in", "out"))
    create_topic(source, partitions=2)
    create_topic(sink, partitions=2)
    _fill(produce, source, 1000, 2)
    checkpoint = str(tmp_path / "cp")
    prefix = f"eos-replay-{uuid.uuid4().hex[:6]}"
    _run_available_now(spark, bootstrap, source, sink, checkpoint, read_mode, transactionalIdPrefix=prefix)
    # (checked after the first run only: a driver-mode batch replayed after a restart is read by a task)
    assert_read_where_the_mode_says(read_stats_dir, source, read_mode)
    commits = sorted(int(name) for name in os.listdir(os.path.join(checkpoint, "commits")) if name.isdigit())
    assert commits, "the first run committed no micro-batch"
    for name in (str(commits[-1]), f".{commits[-1]}.crc"):
        if os.path.exists(os.path.join(checkpoint, "commits", name)):
            os.remove(os.path.join(checkpoint, "commits", name))
    _run_available_now(spark, bootstrap, source, sink, checkpoint, read_mode, transactionalIdPrefix=prefix)
    assert str(commits[-1]) in os.listdir(os.path.join(checkpoint, "commits")), "the micro-batch was not replayed"
    got = _consume(bootstrap, sink, 2, isolation="read_committed", expected=1000)
    assert sorted(got) == sorted(f"out-in-{i}".encode() for i in range(1000))


def test_stream_with_the_session_checkpoint_conf_is_refused_without_a_prefix(spark, bootstrap, create_topic,
                                                                             topic_name, tmp_path):
    """With spark.sql.streaming.checkpointLocation instead of the option, the writer cannot learn where the
    query's checkpoint is: it asks for a transactionalIdPrefix instead of inventing one that changes on restart."""
    create_topic(topic_name, partitions=1)
    stream = (spark.readStream.format("kwire").option("kafka.bootstrap.servers", bootstrap)
              .option("subscribe", topic_name).load().select("value"))
    spark.conf.set("spark.sql.streaming.checkpointLocation", str(tmp_path / "session-cp"))
    try:
        with pytest.raises(Exception, match="transactionalIdPrefix"):
            query = (stream.writeStream.format("kwire").option("kafka.bootstrap.servers", bootstrap)
                     .option("topic", topic_name).option("deliveryGuarantee", "exactly-once")
                     .queryName(f"eos_{uuid.uuid4().hex[:6]}").trigger(availableNow=True).start())
            query.awaitTermination(120)
            raise AssertionError(f"accepted: {query.exception()}")
    finally:
        spark.conf.unset("spark.sql.streaming.checkpointLocation")


def test_a_new_query_with_the_same_prefix_is_not_taken_for_a_replay(spark, bootstrap, create_topic, produce,
                                                                     tmp_path):
    """A query started on a fresh checkpoint numbers its micro-batches from 0 again: the markers an earlier
    query left under the same transactionalIdPrefix must not make it skip them."""
    source, sink = (f"eos-newq-{kind}-{uuid.uuid4().hex[:6]}" for kind in ("in", "out"))
    create_topic(source, partitions=2)
    create_topic(sink, partitions=1)
    _fill(produce, source, 1500, 2)
    prefix = f"eos-newq-{uuid.uuid4().hex[:6]}"
    for run in ("first", "second"):
        _run_available_now(spark, bootstrap, source, sink, str(tmp_path / run), transactionalIdPrefix=prefix)
    got = _consume(bootstrap, sink, 1, isolation="read_committed", expected=3000)
    assert sorted(got) == sorted(f"out-in-{i}".encode() for i in range(1500) for _ in range(2))
