"""deliveryGuarantee=exactly-once batch writes: a job lands whole for read_committed readers, or not at all;
options checked before anything is sent."""

from __future__ import annotations

import time
import uuid

import pytest
from pyspark.sql import functions as F


def _write(df, bootstrap, **options):
    writer = df.write.format("kwire").mode("append").option("kafka.bootstrap.servers", bootstrap)
    for key, value in options.items():
        writer = writer.option(key, value)
    writer.save()


def _consume(bootstrap, topic, partitions, *, isolation, expected, quiet_s=3.0, timeout_s=60.0):
    """Every record of ``topic`` a librdkafka consumer with ``isolation`` sees (waits for ``expected``, then
    ``quiet_s`` more for extras)."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"eos-{uuid.uuid4().hex}",
                         "enable.auto.commit": False, "isolation.level": isolation})
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    got = []
    deadline = time.monotonic() + timeout_s
    try:
        while len(got) < expected and time.monotonic() < deadline:
            got.extend(m.value() for m in consumer.consume(1000, 0.5) if m.error() is None)
        quiet = time.monotonic() + quiet_s
        while time.monotonic() < quiet:
            got.extend(m.value() for m in consumer.consume(1000, 0.2) if m.error() is None)
    finally:
        consumer.close()
    return got


def test_job_lands_whole_for_read_committed_readers(spark, bootstrap, create_topic, topic_name):
    create_topic(topic_name, partitions=4)
    n = 6000
    rows = spark.range(0, n, 1, 3).select(F.col("id").cast("string").alias("key"),
                                          F.concat(F.lit("v-"), F.col("id").cast("string")).alias("value"))
    _write(rows, bootstrap, topic=topic_name, deliveryGuarantee="exactly-once")
    got = _consume(bootstrap, topic_name, 4, isolation="read_committed", expected=n)
    assert sorted(got) == sorted(f"v-{i}".encode() for i in range(n))


def test_failed_job_leaves_nothing_for_read_committed_readers(spark, bootstrap, create_topic, topic_name):
    """One task fails after the others wrote (Spark in local mode does not retry): the job is aborted and
    read_committed readers see nothing, although the records reached the log."""
    create_topic(topic_name, partitions=2)
    n = 3000

    @F.udf("string")
    def fail_in_last_partition(i):
        if i == n - 1:
            time.sleep(3)  # the other tasks have flushed their rows by now
            raise ValueError("task fails on purpose after the others wrote")
        return f"v-{i}"

    rows = spark.range(0, n, 1, 3).select(fail_in_last_partition(F.col("id")).alias("value"))
    with pytest.raises(Exception, match="on purpose"):
        _write(rows, bootstrap, topic=topic_name, deliveryGuarantee="exactly-once")
    assert _consume(bootstrap, topic_name, 2, isolation="read_committed", expected=1, timeout_s=8) == []
    written = _consume(bootstrap, topic_name, 2, isolation="read_uncommitted", expected=2 * n // 3, timeout_s=20)
    assert len(written) >= n // 3, "the tasks that succeeded should have written their rows (then aborted)"


def test_a_later_job_with_the_same_prefix_is_independent(spark, bootstrap, create_topic, topic_name):
    create_topic(topic_name, partitions=1)
    prefix = f"eos-same-{uuid.uuid4().hex[:6]}"
    for run in range(2):
        rows = spark.range(0, 100, 1, 2).select(F.concat(F.lit(f"r{run}-"), F.col("id").cast("string")).alias("value"))
        _write(rows, bootstrap, topic=topic_name, deliveryGuarantee="exactly-once", transactionalIdPrefix=prefix)
    got = _consume(bootstrap, topic_name, 1, isolation="read_committed", expected=200)
    assert sorted(got) == sorted(f"r{r}-{i}".encode() for r in range(2) for i in range(100))


@pytest.mark.parametrize("options, message", [
    ({"deliveryGuarantee": "twice"}, "'deliveryGuarantee' must be 'at-least-once' .* or 'exactly-once'"),
    ({"transactionalIdPrefix": "p"}, "applies only with deliveryGuarantee=exactly-once"),
    ({"kafka.transaction.timeout.ms": "1000"}, "applies only with deliveryGuarantee=exactly-once"),
    ({"deliveryGuarantee": "exactly-once", "kafka.transaction.timeout.ms": "soon"}, "positive number"),
    ({"deliveryGuarantee": "exactly-once", "transactionalIdPrefix": "  "}, "must not be empty"),
    ({"kafka.transactional.id": "x"}, "transactionalIdPrefix"),
])
def test_bad_options_refused_before_writing(spark, bootstrap, options, message):
    rows = spark.range(3).select(F.col("id").cast("string").alias("value"))
    with pytest.raises(Exception, match=message):
        _write(rows, bootstrap, topic="never-written", **options)


@pytest.mark.parametrize("option", ["deliveryGuarantee", "transactionalIdPrefix"])
def test_write_options_refused_on_reads(spark, bootstrap, option):
    with pytest.raises(Exception, match=f"'{option}' does not apply"):
        spark.read.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("subscribe", "t") \
            .option(option, "exactly-once").load().collect()


def test_transaction_timeout_above_the_broker_maximum_is_a_clear_error(spark, bootstrap, create_topic, topic_name):
    create_topic(topic_name, partitions=1)
    rows = spark.range(3).select(F.col("id").cast("string").alias("value"))
    with pytest.raises(Exception, match="transaction.max.timeout.ms"):
        _write(rows, bootstrap, topic=topic_name, deliveryGuarantee="exactly-once",
               **{"kafka.transaction.timeout.ms": str(3_600_000)})
