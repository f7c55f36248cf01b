"""Structured streaming with readStream/writeStream.format("kwire") against a real broker.

Spark's own `kafka` streaming source does not run on PySpark 4.3 (see machine-facts), so these tests
check streaming on its own terms: exactly-once counts by (partition, offset) and key in a file sink
across restarts, batch sizes in the query progress, Kafka's ConsumerGroupCommand for committed offsets.
"""

from __future__ import annotations

import json
import random
import re
import threading
import time

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewPartitions
from pyspark.errors import StreamingQueryException
from pyspark.sql import functions as F
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows, ReadMinRows

from spark_kwire import admin
from spark_kwire.spark.options.parsing import ReadOptions
from spark_kwire.spark.reading.stream import KwireStreamReader, from_json_offsets, to_json_offsets
from harness import run_java_tool
from tests.spark.spark_oracle import spark_offset_ranges, spark_rate_limit


# -- helpers ------------------------------------------------------------------------------------------
def produce(bootstrap, topic, records, partition=None):
    """records: iterable of (key, value) or (key, value, headers); waits for every acknowledgement."""
    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5})
    errors = []
    for record in records:
        key, value, headers = (*record, None)[:3]
        kwargs = {"partition": partition} if partition is not None else {}
        p.produce(topic, key=key, value=value, headers=headers,
                  on_delivery=lambda err, _m: errors.append(err) if err else None, **kwargs)
    assert p.flush(30) == 0 and not errors, errors


class ProducerThread(threading.Thread):
    """Keeps writing keyed records k0000000, k0000001, ... until stopped; can be paused."""

    def __init__(self, bootstrap, topic, *, chunk=20, interval=0.02, paused=False):
        super().__init__(daemon=True)
        self.bootstrap, self.topic, self.chunk, self.interval = bootstrap, topic, chunk, interval
        self.paused = threading.Event()
        if paused:
            self.paused.set()
        self.stopping = threading.Event()
        self.sent = self.delivered = 0
        self.errors: list = []

    def _ack(self, err, _msg):
        if err:
            self.errors.append(err)
        else:
            self.delivered += 1

    def run(self):
        p = Producer({"bootstrap.servers": self.bootstrap, "enable.idempotence": True, "linger.ms": 5})
        while not self.stopping.is_set():
            if self.paused.is_set():
                time.sleep(0.01)
                continue
            for _ in range(self.chunk):
                p.produce(self.topic, key=f"k{self.sent:07d}", value=f"v{self.sent}", on_delivery=self._ack)
                self.sent += 1
            p.poll(0)
            time.sleep(self.interval)
        p.flush(30)

    def finish(self) -> int:
        self.stopping.set()
        self.join(60)
        assert not self.errors and self.delivered == self.sent, (self.errors[:3], self.delivered, self.sent)
        return self.sent


def wait_until(condition, timeout=60, query=None, what="condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return
        if query is not None and query.exception() is not None:
            raise AssertionError(f"query failed while waiting for {what}: {query.exception()}")
        time.sleep(0.2)
    progress = query.lastProgress if query is not None else None
    raise AssertionError(f"timed out after {timeout}s waiting for {what}; last progress: {progress}")


def stream(spark, bootstrap, **options):
    reader = spark.readStream.format("kwire").option("kafka.bootstrap.servers", bootstrap)
    for key, value in options.items():
        reader = reader.option(key, str(value))
    return reader.load()


def sink_name(topic: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_]", "_", topic)


def source_progress(query):
    return [(p["numInputRows"], p["sources"][0]) for p in query.recentProgress]


def offsets_of(progress_json: str | None, topic: str) -> dict[int, int]:
    return {int(p): o for p, o in (json.loads(progress_json or "null") or {}).get(topic, {}).items()}


@pytest.fixture
def checkpoint(tmp_path):
    return str(tmp_path / "checkpoint")


# -- exactly once across restarts -----------------------------------------------------------------------
@pytest.mark.parametrize("modes", [("tasks",) * 4, ("driver", "tasks", "driver", "driver")],
                         ids=["tasks", "driver-and-tasks"])
def test_exactly_once_to_a_file_sink_across_restarts_while_a_producer_writes(
        spark, bootstrap, create_topic, topic_name, tmp_path, checkpoint, modes):
    """Stopped three times while a producer writes, and restarted in the read mode of `modes` each time (the two
    modes share offsets and checkpoint)."""
    create_topic(topic_name, 3)
    out = str(tmp_path / "out")
    producer = ProducerThread(bootstrap, topic_name)
    producer.start()
    runs = 0

    def run_query():
        df = stream(spark, bootstrap, subscribe=topic_name, startingOffsets="earliest", maxOffsetsPerTrigger=3000,
                    streamReadMode=modes[runs])
        return (df.select(F.col("key").cast("string").alias("key"), F.col("value").cast("string").alias("value"),
                          "partition", "offset")
                .writeStream.format("parquet").option("path", out).option("checkpointLocation", checkpoint)
                .outputMode("append").start())

    rng = random.Random(7)
    try:
        for _ in range(3):  # 3 runs stopped while the producer writes
            query = run_query()
            runs += 1
            wait_until(lambda: any(p["numInputRows"] > 0 for p in query.recentProgress), 90, query, "a batch")
            time.sleep(rng.uniform(0.0, 1.5))  # stop at an arbitrary point, often inside a batch
            query.stop()
            assert query.exception() is None
        total = producer.finish()
        query = run_query()  # the 3rd restart drains what is left
        runs += 1
        query.processAllAvailable()
        progress = query.recentProgress
        query.stop()
    finally:
        producer.stopping.set()
    assert runs == 4 and total > 1000

    rows = spark.read.parquet(out)
    assert rows.count() == total
    assert rows.select("partition", "offset").distinct().count() == total
    keys = {r.key for r in rows.select("key").collect()}
    assert keys == {f"k{i:07d}" for i in range(total)}
    # value and key travel together, and offsets are dense per partition
    assert rows.filter(F.concat(F.lit("v"), F.col("key").substr(2, 7).cast("int").cast("string")) != F.col("value")).count() == 0
    per_partition = rows.groupBy("partition").agg(F.min("offset").alias("lo"), F.max("offset").alias("hi"),
                                                  F.count("*").alias("n")).collect()
    assert all(r.lo == 0 and r.hi == r.n - 1 for r in per_partition)
    latest = admin.latest_offsets(bootstrap, topic_name)
    assert sum(latest.values()) == total
    assert any(offsets_of(p["sources"][0]["endOffset"], topic_name) == latest for p in progress)
    if modes[-1] == "driver":  # Spark asks a driver-mode source for no latest offsets to report
        assert all(p["sources"][0]["latestOffset"] in (None, "null") for p in progress)
        return
    # the progress reports the latest offsets next to the end offsets: how far behind the query is
    # (not for a batch replayed after a restart: Spark asks no latest offset for it)
    reported = 0
    for p in progress:
        source = p["sources"][0]
        ends, latests = offsets_of(source["endOffset"], topic_name), offsets_of(source["latestOffset"], topic_name)
        if p["numInputRows"] and latests:
            reported += 1
            assert set(ends) == set(latests) == {0, 1, 2}
            assert all(latests[k] >= ends[k] for k in ends)
    assert reported > 0


# -- admission control and AvailableNow -----------------------------------------------------------------
@pytest.mark.parametrize("mode", ["tasks", "driver"])
def test_max_offsets_per_trigger_and_available_now_read_exactly_what_was_there_at_start(
        spark, bootstrap, create_topic, topic_name, checkpoint, mode):
    create_topic(topic_name, 3)
    backlog = {0: 590, 1: 7, 2: 3}  # uneven, so that Spark's rounding of small shares matters
    for partition, size in backlog.items():
        produce(bootstrap, topic_name, [(None, f"{partition}-{i}") for i in range(size)], partition=partition)
    producer = ProducerThread(bootstrap, topic_name, paused=True)
    producer.start()
    name = sink_name(topic_name)
    query = (stream(spark, bootstrap, subscribe=topic_name, startingOffsets="earliest", maxOffsetsPerTrigger=150,
                    streamReadMode=mode)
             .writeStream.format("memory").queryName(name).option("checkpointLocation", checkpoint)
             .trigger(availableNow=True).start())
    try:
        # more records arrive as soon as the first batch is done: the query must not read them
        wait_until(lambda: len(query.recentProgress) > 0, 90, query, "the first batch")
        producer.paused.clear()
        assert query.awaitTermination(120), "AvailableNow did not terminate"
    finally:
        producer.finish()
    assert query.exception() is None
    batches = [p for p in query.recentProgress if p["numInputRows"] > 0]
    # Each batch ends where Spark's own rateLimit (its code, called through py4j) puts it.
    target = {(topic_name, p): size for p, size in backlog.items()}
    position, expected_ends = {tp: 0 for tp in target}, []
    while position != target:
        position = spark_rate_limit(spark, position, target, 150)
        expected_ends.append({p: position[(topic_name, p)] for p in backlog})
    assert [offsets_of(b["sources"][0]["endOffset"], topic_name) for b in batches] == expected_ends
    assert expected_ends[0] == {0: 147, 1: 1, 2: 1}  # 147.5 and 1.75 rounded down, 0.75 up: 149 of 150
    if mode == "tasks":  # (Spark asks a driver-mode source for no latest offsets to report)
        assert offsets_of(batches[0]["sources"][0]["latestOffset"], topic_name) == backlog
    got = spark.sql(f"select partition, offset from {name}").collect()
    assert sorted((r.partition, r.offset) for r in got) == sorted(
        (p, o) for p, size in backlog.items() for o in range(size))
    assert producer.sent > 0 and sum(admin.latest_offsets(bootstrap, topic_name).values()) == 600 + producer.sent


def _ranges(parts) -> list:
    """The offset ranges of a micro-batch's Spark partitions, in order (packed ones flattened)."""
    return [r for part in parts for r in getattr(part, "ranges", (part,))]


def _reader(bootstrap, **options) -> KwireStreamReader:
    return KwireStreamReader(ReadOptions.parse(
        {"kafka.bootstrap.servers": bootstrap, **{k: str(v) for k, v in options.items()}}, streaming=True))


def test_min_offsets_per_trigger_waits_for_records_or_max_trigger_delay(spark, bootstrap, create_topic, topic_name):
    create_topic(topic_name, 2)
    reader = _reader(bootstrap, subscribe=topic_name, startingOffsets="earliest", minOffsetsPerTrigger=50,
                     maxTriggerDelay="2s")
    limit = reader.getDefaultReadLimit()
    assert limit == ReadMinRows(50)
    start = reader.initialOffset()
    assert start == {topic_name: {"0": 0, "1": 0}}
    produce(bootstrap, topic_name, [(None, b"x")] * 10, partition=0)
    # the first trigger is not held back (as in Spark's source)
    end = reader.latestOffset(start, limit)
    assert end == {topic_name: {"0": 10, "1": 0}}
    produce(bootstrap, topic_name, [(None, b"x")] * 10, partition=1)
    assert reader.latestOffset(end, limit) == end  # 10 < 50 waiting, 2s not over
    produce(bootstrap, topic_name, [(None, b"x")] * 40, partition=0)
    end2 = reader.latestOffset(end, limit)
    assert end2 == {topic_name: {"0": 50, "1": 10}}  # 50 waiting: go
    produce(bootstrap, topic_name, [(None, b"x")] * 5, partition=1)
    assert reader.latestOffset(end2, limit) == end2
    time.sleep(2.1)
    assert reader.latestOffset(end2, limit) == {topic_name: {"0": 50, "1": 15}}  # maxTriggerDelay passed
    # ReadAllAvailable from the engine (Trigger.Once) overrides the options
    assert reader.latestOffset(start, ReadAllAvailable()) == {topic_name: {"0": 50, "1": 15}}
    assert reader.reportLatestOffset() == {topic_name: {"0": 50, "1": 15}}

    both = _reader(bootstrap, subscribe=topic_name, startingOffsets="earliest", minOffsetsPerTrigger=20,
                   maxOffsetsPerTrigger=30)
    assert both.getDefaultReadLimit() == ReadMaxRows(30)
    both.last_trigger_ms = time.time() * 1000
    held = {topic_name: {"0": 40, "1": 15}}
    assert both.latestOffset(held, ReadMaxRows(30)) == held  # 10 < 20 waiting
    assert both.latestOffset({topic_name: {"0": 35, "1": 10}}, ReadMaxRows(30)) == {topic_name: {"0": 50, "1": 15}}
    zero = {(topic_name, 0): 0, (topic_name, 1): 0}
    expected = spark_rate_limit(spark, zero, {(topic_name, 0): 50, (topic_name, 1): 15}, 30)
    assert both.latestOffset({topic_name: {"0": 0, "1": 0}}, ReadMaxRows(30)) == to_json_offsets(expected)
    assert expected == {(topic_name, 0): 23, (topic_name, 1): 6}  # 23.08 and 6.92 both rounded down


def test_available_now_target_never_lies_behind_a_latest_start(bootstrap, create_topic, topic_name):
    """Spark may call prepareForTriggerAvailableNow before initialOffset; with startingOffsets=latest
    and records arriving between the two calls, the batch must still not look like data loss."""
    create_topic(topic_name, 1)
    produce(bootstrap, topic_name, [(None, b"x")] * 5)
    reader = _reader(bootstrap, subscribe=topic_name)  # startingOffsets=latest by default
    reader.prepareForTriggerAvailableNow()
    produce(bootstrap, topic_name, [(None, b"x")] * 5)
    start = reader.initialOffset()
    assert start == {topic_name: {"0": 10}}
    end = reader.latestOffset(start, ReadAllAvailable())
    assert end == start and reader.partitions(start, end) == []


def test_starting_timestamp_and_assign(spark, bootstrap, create_topic, topic_name):
    create_topic(topic_name, 2)
    now = int(time.time() * 1000)
    produce(bootstrap, topic_name, [(None, b"old")] * 3, partition=0)
    p = Producer({"bootstrap.servers": bootstrap})
    for i in range(3):
        p.produce(topic_name, value=b"new", partition=0, timestamp=now + 60_000 + i)
    p.flush(30)
    reader = _reader(bootstrap, assign=json.dumps({topic_name: [0]}), startingTimestamp=now + 60_000)
    start = reader.initialOffset()
    assert start == {topic_name: {"0": 3}}
    end = reader.latestOffset(start, ReadAllAvailable())
    assert end == {topic_name: {"0": 6}}
    assert [(r.partition, r.start, r.end) for r in _ranges(reader.partitions(start, end))] == [(0, 3, 6)]
    split = _reader(bootstrap, subscribe=topic_name, startingOffsets="earliest", minPartitions=4)
    ranges = split.partitions(split.initialOffset(), split.latestOffset(split.initialOffset(), ReadAllAvailable()))
    # A micro-batch is cut as Spark's KafkaOffsetRangeCalculator cuts it (its code, through py4j): 1, 1, 2, 2.
    expected = spark_offset_ranges(spark, [(topic_name, 0, 0, 6)], min_partitions=4, max_records=None)
    assert sorted((r.topic, r.partition, r.start, r.end) for r in ranges) == sorted(expected)
    assert len(expected) == 4


# -- consumer group commits -------------------------------------------------------------------------------
def _describe_group(bootstrap, group) -> dict[tuple[str, int], tuple[int, int, int]]:
    """{(topic, partition): (current offset, log end offset, lag)} from Kafka's ConsumerGroupCommand."""
    out = run_java_tool("org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
                        "--bootstrap-server", bootstrap, "--describe", "--group", group).stdout
    lines = [line.split() for line in out.splitlines() if line.strip()]
    header = next(i for i, cols in enumerate(lines) if cols[:3] == ["GROUP", "TOPIC", "PARTITION"])
    cols = lines[header]
    result = {}
    for row in lines[header + 1:]:
        if len(row) < 6 or row[0] != group:
            continue
        get = dict(zip(cols, row))
        result[(get["TOPIC"], int(get["PARTITION"]))] = (
            int(get["CURRENT-OFFSET"]), int(get["LOG-END-OFFSET"]), int(get["LAG"]))
    return result


@pytest.mark.parametrize("mode", ["tasks", "driver"])
def test_commit_offsets_to_group_shows_in_consumer_group_command(spark, bootstrap, create_topic, topic_name, checkpoint,
                                                                    mode):
    create_topic(topic_name, 2)
    group = f"{topic_name}-group"
    produce(bootstrap, topic_name, [(None, b"x")] * 30, partition=0)
    produce(bootstrap, topic_name, [(None, b"y")] * 12, partition=1)
    query = (stream(spark, bootstrap, subscribe=topic_name, startingOffsets="earliest", commitOffsetsToGroup=group,
                    maxOffsetsPerTrigger=21, streamReadMode=mode)
             .writeStream.format("noop").option("checkpointLocation", checkpoint).trigger(availableNow=True).start())
    assert query.awaitTermination(120)
    assert query.exception() is None
    assert [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]] == [21, 21]
    described = _describe_group(bootstrap, group)
    assert described == {(topic_name, 0): (30, 30, 0), (topic_name, 1): (12, 12, 0)}


def test_starting_offsets_group_resumes_from_committed_offsets(spark, bootstrap, create_topic, topic_name, tmp_path):
    create_topic(topic_name, 3)
    group = f"{topic_name}-group"
    for partition in range(3):
        produce(bootstrap, topic_name, [(None, f"{partition}-{i}".encode()) for i in range(20)], partition=partition)
    # partition 2 has no committed offset: it starts at its earliest offset
    admin.commit_offsets(bootstrap, group, {(topic_name, 0): 15, (topic_name, 1): 20})

    def run(n):
        name = f"{sink_name(topic_name)}_{n}"
        query = (stream(spark, bootstrap, subscribe=topic_name, startingOffsets="group", commitOffsetsToGroup=group)
                 .writeStream.format("memory").queryName(name)
                 .option("checkpointLocation", str(tmp_path / f"cp{n}")).trigger(availableNow=True).start())
        assert query.awaitTermination(120) and query.exception() is None
        return sorted((r.partition, r.offset) for r in spark.sql(f"select partition, offset from {name}").collect())

    assert run(1) == [(0, o) for o in range(15, 20)] + [(2, o) for o in range(20)]
    assert admin.committed_offsets(bootstrap, group) == {(topic_name, p): 20 for p in range(3)}
    produce(bootstrap, topic_name, [(None, b"more")] * 4, partition=1)
    # a new query (new checkpoint) resumes where the group is
    assert run(2) == [(1, o) for o in range(20, 24)]


# -- kwire -> transform -> kwire ------------------------------------------------------------------------
def test_pipeline_kafka_to_kafka_with_headers(spark, bootstrap, create_topic, topic_name, checkpoint):
    """Read on the driver (streamReadMode's default, auto, on this small stream with Spark 4.2+): headers there."""
    source, target = create_topic(f"{topic_name}-in", 3), create_topic(f"{topic_name}-out", 2)
    records = [(f"key{i % 40}".encode(), f"value {i}".encode(), [("n", str(i).encode())]) for i in range(500)]
    produce(bootstrap, source, records)
    df = stream(spark, bootstrap, subscribe=source, startingOffsets="earliest", includeHeaders="true")
    transformed = df.select(
        "key",
        F.upper(F.col("value").cast("string")).alias("value"),
        F.concat("headers", F.array(F.struct(F.lit("from").alias("key"),
                                             F.col("offset").cast("string").cast("binary").alias("value")))).alias("headers"),
    ).where(~F.col("value").cast("string").endswith("7"))
    query = (transformed.writeStream.format("kwire").option("kafka.bootstrap.servers", bootstrap)
             .option("topic", target).option("checkpointLocation", checkpoint).outputMode("append")
             .trigger(availableNow=True).start())
    assert query.awaitTermination(120)
    assert query.exception() is None

    back = (spark.read.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("subscribe", target)
            .option("includeHeaders", "true").load().collect())
    expected = {(k, v.decode().upper()): h[0][1].decode() for k, v, h in records if not v.decode().endswith("7")}
    assert len(back) == len(expected) == 450
    got = {}
    for r in back:
        headers = {h["key"]: h["value"] for h in r.headers}
        got[(bytes(r.key), bytes(r.value).decode())] = bytes(headers["n"]).decode()
        assert "from" in headers
    assert got == expected
    # one key, one partition: the sink partitions by key
    partitions_per_key = {}
    for r in back:
        partitions_per_key.setdefault(bytes(r.key), set()).add(r.partition)
    assert all(len(p) == 1 for p in partitions_per_key.values())
    assert {r.partition for r in back} == {0, 1}


# -- topology changes ------------------------------------------------------------------------------------
def test_new_partitions_and_new_matching_topics_are_read_from_offset_zero(
        spark, bootstrap, create_topic, topic_name, checkpoint):
    """In the driver's read mode (where a batch's end offsets come from: shared with the tasks' mode)."""
    first = create_topic(f"{topic_name}-a", 2)
    produce(bootstrap, first, [(None, b"a0")] * 10, partition=0)
    produce(bootstrap, first, [(None, b"a1")] * 10, partition=1)
    name = sink_name(topic_name)
    query = (stream(spark, bootstrap, subscribePattern=re.escape(topic_name) + "-.*", startingOffsets="latest",
                    streamReadMode="driver")
             .writeStream.format("memory").queryName(name).option("checkpointLocation", checkpoint)
             .trigger(processingTime="500 milliseconds").start())

    def rows():
        return spark.sql(f"select topic, partition, offset from {name}").collect()

    try:
        wait_until(lambda: len(query.recentProgress) > 0, 90, query, "the first batch")
        produce(bootstrap, first, [(None, b"a0")] * 3, partition=0)  # after the start: read
        wait_until(lambda: len(rows()) == 3, 60, query, "3 rows")
        kafka_admin = AdminClient({"bootstrap.servers": bootstrap})
        kafka_admin.create_partitions([NewPartitions(first, 4)])[first].result(30)
        second = create_topic(f"{topic_name}-b", 1)
        produce(bootstrap, first, [(None, b"a2")] * 4, partition=2)
        produce(bootstrap, first, [(None, b"a3")] * 5, partition=3)
        produce(bootstrap, second, [(None, b"b0")] * 6, partition=0)
        wait_until(lambda: len(rows()) == 18, 60, query, "18 rows")
        time.sleep(1)
        got = sorted((r.topic, r.partition, r.offset) for r in rows())
    finally:
        query.stop()
    assert query.exception() is None
    assert got == sorted([(first, 0, o) for o in range(10, 13)] + [(first, 2, o) for o in range(4)]
                         + [(first, 3, o) for o in range(5)] + [(second, 0, o) for o in range(6)])


# (the checks are StreamOffsets', shared by both read modes: each mode takes one side)
@pytest.mark.parametrize("fail_on_data_loss, mode", [(True, "driver"), (False, "tasks")])
def test_deleted_topic_follows_fail_on_data_loss(spark, bootstrap, create_topic, topic_name, checkpoint,
                                                 fail_on_data_loss, mode):
    kept, doomed = create_topic(f"{topic_name}-kept", 1), create_topic(f"{topic_name}-doomed", 2)
    name = sink_name(topic_name)
    query = (stream(spark, bootstrap, subscribe=f"{kept},{doomed}", startingOffsets="earliest",
                    failOnDataLoss=str(fail_on_data_loss).lower(), streamReadMode=mode)
             .writeStream.format("memory").queryName(name).option("checkpointLocation", checkpoint)
             .trigger(processingTime="500 milliseconds").start())

    def count():
        return spark.sql(f"select count(*) from {name}").collect()[0][0]

    try:
        produce(bootstrap, kept, [(None, b"k")] * 5)
        produce(bootstrap, doomed, [(None, b"d")] * 5)
        wait_until(lambda: count() == 10, 90, query, "10 rows")
        kafka_admin = AdminClient({"bootstrap.servers": bootstrap})
        kafka_admin.delete_topics([doomed])[doomed].result(30)
        if fail_on_data_loss:
            with pytest.raises(StreamingQueryException) as failure:  # DID NOT RAISE: it went on
                query.awaitTermination(60)
            message = str(failure.value)
            assert "DataLossError" in message and doomed in message and "failOnDataLoss" in message
            assert f"{doomed}-0, {doomed}-1" in message
        else:
            produce(bootstrap, kept, [(None, b"k")] * 5)
            wait_until(lambda: count() == 15, 60, query, "15 rows")
            time.sleep(1.5)
            assert query.isActive and query.exception() is None
            last = query.lastProgress["sources"][0]
            assert set(json.loads(last["endOffset"])) == {kept}
    finally:
        if query.isActive:
            query.stop()


def test_offsets_that_went_back_follow_fail_on_data_loss(bootstrap, create_topic, topic_name):
    create_topic(topic_name, 1)
    produce(bootstrap, topic_name, [(None, b"x")] * 3)
    start = {topic_name: {"0": 10}}  # e.g. the topic was deleted and recreated with fewer records
    strict = _reader(bootstrap, subscribe=topic_name, maxOffsetsPerTrigger=100)
    end = strict.latestOffset(start, ReadMaxRows(100))
    assert end == {topic_name: {"0": 3}}
    with pytest.raises(Exception, match=rf"{topic_name}-0: the latest offset went back from 10 to 3.*failOnDataLoss"):
        strict.partitions(start, end)
    lenient = _reader(bootstrap, subscribe=topic_name, failOnDataLoss="false")
    assert lenient.partitions(start, end) == []
    produce(bootstrap, topic_name, [(None, b"x")] * 2)
    after = lenient.latestOffset(end, ReadAllAvailable())
    assert [(r.start, r.end) for r in _ranges(lenient.partitions(end, after))] == [(3, 5)]
    assert from_json_offsets(after) == {(topic_name, 0): 5}


def test_replayed_first_batch_with_a_moved_latest_start_is_reported(bootstrap, create_topic, topic_name):
    """Spark replays an unfinished batch 0 with start = initialOffset() of a new reader; with
    startingOffsets=latest that is no longer the start the batch was planned with."""
    create_topic(topic_name, 1)
    first = _reader(bootstrap, subscribe=topic_name)
    start = first.initialOffset()
    produce(bootstrap, topic_name, [(None, b"x")] * 3)
    end = first.latestOffset(start, ReadAllAvailable())
    assert [(r.start, r.end) for r in _ranges(first.partitions(start, end))] == [(0, 3)]
    produce(bootstrap, topic_name, [(None, b"x")] * 2)
    restarted = _reader(bootstrap, subscribe=topic_name)
    with pytest.raises(Exception, match="first micro-batch, replayed after a restart, ends at offset 3 but "
                                        "startingOffsets resolved again to 5"):
        restarted.partitions(restarted.initialOffset(), end)
