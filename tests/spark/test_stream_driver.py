"""streamReadMode: the driver's read mode (SimpleDataSourceStreamReader) beside the tasks' one, against a real broker.

The readers are called as Spark's source process calls them (read, readBetweenOffsets, commit), then whole queries
show where each mode reads (the Python process that fetched). Whole queries in both modes, restarted in the other
mode from the same checkpoint, with each option: tests/spark/test_stream.py.
"""

from __future__ import annotations

import copy
import glob
import json
import logging
import os
import uuid

import pyarrow as pa
import pytest
from confluent_kafka import Producer

from spark_kwire.spark.capabilities import READ_LIMIT_API
from spark_kwire.spark.errors import DataLossError, KwireOptionError
from spark_kwire.spark.options.parsing import ReadOptions
from spark_kwire.spark.reading.stream import to_json_offsets
from spark_kwire.spark.reading.stream_driver import driver_stream_reader_class
from spark_kwire.spark.reading.stream_mode import (
    DRIVER_BOUND, DriverBound, ModeChoice, StreamLoad, choose_read_mode, judge, measure_load
)
from spark_kwire.spark.source import stream_reader_class
from tests.spark.spark_oracle import spark_rate_limit

DRIVER = ModeChoice("driver", "driver")


def produce(bootstrap, topic, records, partition=None):
    """records: (key, value) or (key, value, headers); every acknowledgement awaited (test_stream.py's helper, which
    this file does not import: that one needs Spark 4.2's streaming API, and this file runs on every release)."""
    producer, errors = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5}), []
    for key, value, headers in ((*record, None)[:3] for record in records):
        producer.produce(topic, key=key, value=value, headers=headers, **({} if partition is None else
                                                                          {"partition": partition}),
                         on_delivery=lambda err, _m: errors.append(err) if err else None)
    assert producer.flush(30) == 0 and not errors, errors


def _options(bootstrap, **options) -> ReadOptions:
    return ReadOptions.parse({"kafka.bootstrap.servers": bootstrap, **{k: str(v) for k, v in options.items()}},
                             streaming=True)


def _driver(bootstrap, bound: DriverBound = DRIVER_BOUND, choice: ModeChoice = DRIVER, **options):
    return driver_stream_reader_class()(_options(bootstrap, **options), choice, bound)


def _rows(batches) -> list[tuple]:
    table = pa.Table.from_batches(list(batches))
    return sorted(zip(*(table.column(name).to_pylist() for name in ("partition", "offset", "key", "value"))))


def _read_all(reader, start: dict):
    """read() until the end offsets stop moving: [(rows, start, end) per batch], the last end."""
    batches = []
    while True:
        iterator, end = reader.read(start)
        rows = list(iterator)
        if end == start:
            assert rows == []
            return batches, end
        batches.append((rows, start, end))
        start = end


# -- the reader, as Spark's source process calls it -------------------------------------------------------------
def test_a_batch_read_on_the_driver_is_read_again_identically_by_replay_and_by_a_task(bootstrap, create_topic,
                                                                                   topic_name):
    from pyspark.sql.datasource_internal import SimpleInputPartition

    create_topic(topic_name, 3)
    for partition in range(3):
        produce(bootstrap, topic_name, [(f"k{partition}-{i}", f"v{i}", [("h", b"x")]) for i in range(50 + partition)],
                partition=partition)
    reader = _driver(bootstrap, subscribe=topic_name, startingOffsets="earliest", includeHeaders="true")
    start = reader.initialOffset()
    iterator, end = reader.read(start)
    assert end == {topic_name: {"0": 50, "1": 51, "2": 52}}
    # Spark keeps the iterator and copies it when it plans the batch: the copy gives the same batches
    batches = list(copy.copy(iterator))
    assert list(iterator) == batches and all(isinstance(b, pa.RecordBatch) for b in batches)
    assert batches[0].schema.names[-1] == "headers"
    rows = _rows(batches)
    assert len(rows) == 153 and rows[0] == (0, 0, b"k0-0", b"v0")
    # a restart replays the batch: on the driver, and in a task through the tasks' reader Spark planned with
    assert _rows(reader.readBetweenOffsets(start, end)) == rows
    tasks_reader = stream_reader_class()(_options(bootstrap, subscribe=topic_name, includeHeaders="true"))
    assert _rows(tasks_reader.read(SimpleInputPartition(start, end))) == rows
    # and the tasks' plan of the same batch reads the same records
    planned = [b for part in tasks_reader.partitions(start, end) for b in tasks_reader.read(part)]
    assert _rows(planned) == rows
    # an idle poll gives back the very start it was given, with no rows (Spark keeps nothing for it)
    idle_rows, idle_end = reader.read(end)
    assert idle_end is end and list(idle_rows) == []


def test_the_driver_bound_caps_records_and_bytes_and_names_the_tasks_mode(bootstrap, create_topic, topic_name,
                                                                         caplog):
    create_topic(topic_name, 2)
    produce(bootstrap, topic_name, [(None, b"x" * 2000)] * 300, partition=0)
    produce(bootstrap, topic_name, [(None, b"y" * 2000)] * 30, partition=1)
    # rows: shared out as maxOffsetsPerTrigger is, by backlog (Spark's rateLimit: 181.8 -> 181, 18.2 -> 18);
    # a stream auto put on the driver at start, that then outgrows the bound
    auto = ModeChoice("driver", "auto", "12 records in the last 10 s")
    by_rows = _driver(bootstrap, DriverBound(rows=200, bytes=2**30), auto, subscribe=topic_name,
                      startingOffsets="earliest")
    with caplog.at_level(logging.WARNING, logger="spark_kwire"):
        batches, _ = _read_all(by_rows, by_rows.initialOffset())
    assert batches[0][2] == {topic_name: {"0": 181, "1": 18}}
    assert sum(len(_rows(rows)) for rows, _, _ in batches) == 330
    assert "capped at the driver's bound of 200 records" in caplog.text and "streamReadMode=tasks" in caplog.text
    assert "streamReadMode=auto chose it at start: 12 records" in caplog.text
    assert caplog.text.count("outgrows reading on the driver") == 1  # once, not per batch
    # bytes: reading stops once the bound is reached (a fetched chunk, up to max.partition.fetch.bytes, at a time;
    # never before a first one), and the next batch goes on from there
    big = f"{topic_name}-big"
    create_topic(big, 2)
    produce(bootstrap, big, [(None, b"x" * 20_000)] * 300, partition=0)
    produce(bootstrap, big, [(None, b"y" * 20_000)] * 30, partition=1)
    by_bytes = _driver(bootstrap, DriverBound(rows=10**6, bytes=2 * 2**20), subscribe=big, startingOffsets="earliest")
    batches, last = _read_all(by_bytes, by_bytes.initialOffset())
    assert last == {big: {"0": 300, "1": 30}} and len(batches) >= 3
    seen = [row[:2] for rows, _, _ in batches for row in _rows(rows)]
    assert sorted(seen) == sorted(set(seen)) and len(seen) == 330  # every record once
    for rows, start, end in batches:
        assert 0 < sum(b.nbytes for b in rows) <= 2 * 2**20 + 65536  # (Arrow buffers of the joined chunks)
        # the end offsets say exactly which records the batch holds, so a replay reads the same ones
        assert _rows(by_bytes.readBetweenOffsets(start, end)) == _rows(rows)


def test_limits_are_applied_by_the_driver_reader_itself(spark, bootstrap, create_topic, topic_name):
    create_topic(topic_name, 3)
    backlog = {0: 590, 1: 7, 2: 3}
    for partition, size in backlog.items():
        produce(bootstrap, topic_name, [(None, f"{partition}-{i}") for i in range(size)], partition=partition)
    reader = _driver(bootstrap, subscribe=topic_name, startingOffsets="earliest", maxOffsetsPerTrigger=150)
    batches, _ = _read_all(reader, reader.initialOffset())
    target = {(topic_name, p): size for p, size in backlog.items()}
    position, expected = {tp: 0 for tp in target}, []
    while position != target:
        position = spark_rate_limit(spark, position, target, 150)
        expected.append(to_json_offsets(position))
    assert [end for _, _, end in batches] == expected

    held = _driver(bootstrap, subscribe=topic_name, startingOffsets="earliest", minOffsetsPerTrigger=700,
                   maxTriggerDelay="1h")
    start = held.initialOffset()
    _, first = held.read(start)  # the first trigger is never held back (as in Spark's source)
    assert first == {topic_name: {"0": 590, "1": 7, "2": 3}}
    produce(bootstrap, topic_name, [(None, b"z")] * 5, partition=1)
    rows, same = held.read(first)
    assert same is first and list(rows) == []  # 5 < 700 waiting and the delay is not over


@pytest.mark.skipif(not READ_LIMIT_API, reason="Spark < 4.2 runs AvailableNow as one batch (test_spark_releases.py)")
def test_available_now_target_is_fixed_when_the_driver_reader_prepares(bootstrap, create_topic, topic_name):
    create_topic(topic_name, 1)
    produce(bootstrap, topic_name, [(None, b"x")] * 10)
    reader = _driver(bootstrap, subscribe=topic_name, startingOffsets="earliest")
    reader.prepareForTriggerAvailableNow()
    produce(bootstrap, topic_name, [(None, b"x")] * 10)
    _, end = reader.read(reader.initialOffset())
    assert end == {topic_name: {"0": 10}}
    rows, same = reader.read(end)
    assert same is end and list(rows) == []


def test_read_committed_on_the_driver_skips_aborted_records(bootstrap, create_topic, topic_name):
    create_topic(topic_name, 1)
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"driver-{uuid.uuid4().hex[:6]}"})
    producer.init_transactions()
    for commit, tag in ((True, b"kept"), (False, b"aborted"), (True, b"kept")):
        producer.begin_transaction()
        for _ in range(5):
            producer.produce(topic_name, value=tag)
        producer.flush()
        (producer.commit_transaction if commit else producer.abort_transaction)()
    reader = _driver(bootstrap, subscribe=topic_name, startingOffsets="earliest",
                     **{"kafka.isolation.level": "read_committed"})
    batches, _ = _read_all(reader, reader.initialOffset())
    values = [row[3] for rows, _, _ in batches for row in _rows(rows)]
    assert values == [b"kept"] * 10


def test_data_loss_on_the_driver_follows_fail_on_data_loss(bootstrap, create_topic, topic_name):
    create_topic(topic_name, 1)
    produce(bootstrap, topic_name, [(None, b"x")] * 5)
    reader = _driver(bootstrap, subscribe=topic_name, startingOffsets="earliest")
    start = {topic_name: {"0": 0}, f"{topic_name}-gone": {"0": 3}}  # a partition the cluster no longer has
    with pytest.raises(DataLossError, match="are gone"):
        reader.read(start)
    lenient = _driver(bootstrap, subscribe=topic_name, startingOffsets="earliest", failOnDataLoss="false")
    rows, end = lenient.read(start)
    assert end == {topic_name: {"0": 5}} and len(_rows(rows)) == 5


# -- auto ------------------------------------------------------------------------------------------------------------
def test_auto_reads_small_streams_on_the_driver_and_large_ones_with_tasks():
    options = ReadOptions.parse({"kafka.bootstrap.servers": "h:1", "subscribe": "t"}, streaming=True)
    bound = DriverBound(rows=1000, bytes=100_000)
    assert judge(StreamLoad(500, 0, 50.0), options, bound=bound).mode == "driver"
    backlog = judge(StreamLoad(10, 5000, 50.0), options, bound=bound)
    assert backlog.mode == "tasks" and "a backlog of 5000" in backlog.reason
    assert judge(StreamLoad(5000, 0, 50.0), options, bound=bound).mode == "tasks"
    large = judge(StreamLoad(500, 0, 500.0), options, bound=bound)  # 250 kB a batch
    assert large.mode == "tasks" and "bytes a record" in large.reason
    capped = ReadOptions.parse({"kafka.bootstrap.servers": "h:1", "subscribe": "t", "maxOffsetsPerTrigger": "800"},
                               streaming=True)
    assert judge(StreamLoad(10, 10**6, 50.0), capped, bound=bound).mode == "driver"  # read in batches of 800 anyway


def test_the_mode_is_decided_in_spark_source_process_only(bootstrap, create_topic, topic_name):
    create_topic(topic_name, 1)
    options = _options(bootstrap, subscribe=topic_name)
    for asked in ("auto", "driver", "tasks"):
        chosen = _options(bootstrap, subscribe=topic_name, streamReadMode=asked)
        # the planning worker's reader reads the batches of both modes: it is always the tasks' one
        assert choose_read_mode(chosen, in_source_process=False).mode == "tasks"
    assert choose_read_mode(_options(bootstrap, subscribe=topic_name, streamReadMode="driver"),
                            in_source_process=True).mode == "driver"
    auto = choose_read_mode(options, in_source_process=True)
    assert auto.mode == ("driver" if READ_LIMIT_API else "tasks"), auto
    load = measure_load(_options(bootstrap, subscribe=topic_name, startingOffsets="earliest"))
    assert load == StreamLoad(0, 0, None)
    produce(bootstrap, topic_name, [(None, b"x" * 100)] * 40)
    load = measure_load(_options(bootstrap, subscribe=topic_name, startingOffsets="earliest"))
    assert load.recent_rows == 40 and load.backlog_rows == 40 and 100 < load.row_bytes < 400, load


def test_the_driver_mode_is_refused_with_delegation_tokens_and_auto_reads_with_tasks(bootstrap):
    base = {"kafka.bootstrap.servers": bootstrap, "subscribe": "t", "delegationToken": "true",
            "kafka.security.protocol": "SASL_PLAINTEXT", "kafka.sasl.mechanism": "SCRAM-SHA-512",
            "kafka.sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required '
                                      'username="u" password="p";'}
    with pytest.raises(KwireOptionError, match="streamReadMode=driver cannot be used here: with delegationToken"):
        choose_read_mode(ReadOptions.parse({**base, "streamReadMode": "driver"}, streaming=True),
                         in_source_process=True)
    auto = choose_read_mode(ReadOptions.parse(base, streaming=True), in_source_process=True)
    assert auto.mode == "tasks" and "delegationToken" in auto.reason


# -- whole queries -------------------------------------------------------------------------------------------------
def _programs(stats_dir, topic) -> set[str]:
    """The Python programs that fetched `topic` (the read statistics kwire writes with KWIRE_STATS_DIR)."""
    found = set()
    for name in glob.glob(os.path.join(str(stats_dir), "*.jsonl")):
        with open(name, encoding="utf-8") as f:
            found |= {line["program"] for line in map(json.loads, f) if line["topic"] == topic}
    return found


SOURCE_PROCESS = "python_streaming_source_runner.py"  # Spark's long-lived Python source process on the driver


def assert_read_where_the_mode_says(stats_dir, topic, mode):
    """`topic` was read where `mode` says (auto: on the driver where Spark has the read-limit API, 4.2+): only by
    Spark's source process on the driver, or only by Python workers."""
    on_driver = mode == "driver" or (mode == "auto" and bool(READ_LIMIT_API))
    programs = _programs(stats_dir, topic)
    if on_driver:
        assert programs == {SOURCE_PROCESS}, f"not read on the driver only: {programs}"
    else:
        assert programs and SOURCE_PROCESS not in programs, f"not read by tasks: {programs}"


@pytest.mark.parametrize("mode", ["driver", "tasks", "auto"])
def test_each_mode_reads_where_it_says(spark, bootstrap, create_topic, topic_name, read_stats_dir, tmp_path, mode):
    create_topic(topic_name, 2)
    produce(bootstrap, topic_name, [(f"k{i}", f"v{i}") for i in range(200)])
    name = f"modes_{mode}_{uuid.uuid4().hex[:6]}"
    query = (spark.readStream.format("kwire").option("kafka.bootstrap.servers", bootstrap)
             .option("subscribe", topic_name).option("startingOffsets", "earliest").option("streamReadMode", mode)
             .load().writeStream.format("memory").queryName(name)
             .option("checkpointLocation", str(tmp_path / "cp")).start())
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    assert spark.sql(f"select count(distinct key), count(*) from {name}").collect()[0] == (200, 200)
    assert_read_where_the_mode_says(read_stats_dir, topic_name, mode)
