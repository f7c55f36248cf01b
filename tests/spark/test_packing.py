"""Packing small offset ranges into fewer Spark partitions, and reading them with multi-partition Fetches.

The arithmetic is checked on generated inputs against properties any correct packing has (every offset
exactly once, one leader per task, contiguous pieces, sizes near the target); reads of packed plans are
compared with Spark's built-in source on wide, uneven topics, and the fetch statistics prove that the
reader batched its first Fetches instead of sending one per partition.
"""

from __future__ import annotations

import math

import pytest
from chispa import assert_df_equality
from hypothesis import given, settings, strategies as st

from spark_kwire.client.consumer.packed_fetch import PackedFetch
from spark_kwire.client.settings.config import ClientConfig
from spark_kwire.spark.errors import KwireOptionError
from spark_kwire.spark.options.parsing import DEFAULT_PACK_TARGET_RECORDS, ReadOptions
from spark_kwire.spark.reading.packing import PackedRanges, pack_ranges
from spark_kwire.spark.reading.planner import OffsetRange
from tests.spark.read_stats import read_stats_for


def _leaders(mapping):
    return lambda topic, partition: mapping[(topic, partition)]


_range_lists = st.lists(
    st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(0, 40), st.integers(0, 10**6),
              st.one_of(st.integers(0, 50), st.integers(0, 5000), st.integers(0, 300_000))),
    min_size=0, max_size=60, unique_by=lambda t: (t[0], t[1]))


@settings(max_examples=300, deadline=None)
@given(_range_lists, st.integers(1, 20_000), st.integers(1, 4))
def test_packing_keeps_every_offset_once_per_leader_contiguous(parts, target, brokers):
    ranges = [OffsetRange(t, p, start, start + size) for t, p, start, size in parts]
    # At most ~5,000 tasks: a tiny target under millions of records made single examples take seconds
    # (small targets are still drawn, with totals they suit).
    target = max(target, math.ceil(sum(r.size for r in ranges) / 5_000))
    leader = {(r.topic, r.partition): (hash((r.topic, r.partition)) % brokers) for r in ranges}
    packed = pack_ranges(ranges, _leaders(leader), target)
    # Every offset of every non-empty range exactly once, in order within its partition.
    got: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for task in packed:
        assert isinstance(task, PackedRanges) and task.ranges
        seen_in_task = set()
        for piece in task.ranges:
            tp = (piece.topic, piece.partition)
            assert piece.size > 0
            assert leader[tp] == task.node  # one leader per task
            assert tp not in seen_in_task      # a partition is one contiguous piece within a task
            seen_in_task.add(tp)
            got.setdefault(tp, []).append((piece.start, piece.end))
    for r in ranges:
        pieces = got.pop((r.topic, r.partition), [])
        if r.size == 0:
            assert not pieces
            continue
        pieces.sort()
        assert pieces[0][0] == r.start and pieces[-1][1] == r.end
        assert all(a[1] == b[0] for a, b in zip(pieces, pieces[1:]))
    assert not got
    # Per leader: ceil(total / target) tasks whose sizes differ by at most one record.
    for b in set(leader.values()):
        sizes = [t.size for t in packed if t.node == b]
        total = sum(r.size for r in ranges if leader[(r.topic, r.partition)] == b)
        assert len(sizes) == (math.ceil(total / target) if total else 0)
        if sizes:
            assert max(sizes) - min(sizes) <= 1 and max(sizes) <= target


def test_packing_groups_small_partitions_and_splits_large_ones():
    small = [OffsetRange("wide", p, 0, 781) for p in range(512)]
    leader = {("wide", p): p % 2 for p in range(512)}
    packed = pack_ranges(small, _leaders(leader), 100_000)
    assert len(packed) == 4  # 2 leaders x ceil(199,936 / 100,000)
    assert sorted(len(t.ranges) for t in packed) == [128] * 4  # 99,968 records each: no range cut
    big = pack_ranges([OffsetRange("big", 0, 10, 400_010)], _leaders({("big", 0): 1}), 100_000)
    assert [(t.ranges[0].start, t.ranges[0].end) for t in big] == [
        (10, 100_010), (100_010, 200_010), (200_010, 300_010), (300_010, 400_010)]


def test_packing_options():
    base = {"kafka.bootstrap.servers": "x:1", "subscribe": "t"}
    assert ReadOptions.parse(base).pack_target == DEFAULT_PACK_TARGET_RECORDS
    assert ReadOptions.parse({**base, "targetRecordsPerPartition": "5000"}).pack_target == 5000
    assert ReadOptions.parse({**base, "packPartitions": "false"}).pack_target is None
    # Spark's options cut exactly as Spark does: no packing, and asking for it as well is refused.
    assert ReadOptions.parse({**base, "minPartitions": "3"}).pack_target is None
    assert ReadOptions.parse({**base, "maxRecordsPerPartition": "10", "packPartitions": "false"}).pack_target is None
    for bad, words in [({"targetRecordsPerPartition": "0"}, "positive integer"),
                       ({"packPartitions": "maybe"}, "'true' or 'false'"),
                       ({"packPartitions": "false", "targetRecordsPerPartition": "10"}, "'packPartitions' is 'false'"),
                       ({"minPartitions": "4", "targetRecordsPerPartition": "10"}, "cannot be combined"),
                       ({"maxRecordsPerPartition": "4", "packPartitions": "true"}, "cannot be combined")]:
        with pytest.raises(KwireOptionError, match=words):
            ReadOptions.parse({**base, **bad})


# -- against a real broker ---------------------------------------------------------------------------------
def load(spark, fmt, bootstrap, **options):
    reader = spark.read.format(fmt).option("kafka.bootstrap.servers", bootstrap)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


@pytest.fixture(scope="module")
def wide_topic(create_topic, produce, topic_name):
    """96 partitions holding 0 to 95 records each (some empty), with headers and keys, lz4 and none."""
    name = create_topic(topic_name, partitions=96)
    records = [(f"k{i}".encode() if i % 3 else None, f"p{p}-{i}".encode() * (1 + i % 4),
                [("h", f"{i}".encode())] if i % 5 == 0 else None, None, p)
               for p in range(96) for i in range(p)]
    produce(name, records, **{"compression.type": "lz4", "batch.num.messages": 16})
    return name, len(records)


@pytest.fixture(scope="module")
def topic_name():
    import uuid
    return f"packing-{uuid.uuid4().hex[:8]}"


def test_packed_read_equals_builtin_on_a_wide_topic(spark, bootstrap, wide_topic, read_stats_dir):
    topic, count = wide_topic
    before = len(read_stats_for(read_stats_dir, topic))
    ours = load(spark, "kwire", bootstrap, subscribe=topic, includeHeaders="true", targetRecordsPerPartition="1500")
    theirs = load(spark, "kafka", bootstrap, subscribe=topic, includeHeaders="true")
    assert ours.rdd.getNumPartitions() == math.ceil(count / 1500) < theirs.rdd.getNumPartitions() == 96
    assert_df_equality(ours, theirs, ignore_row_order=True)
    # Within a Spark partition, each Kafka partition's records are contiguous and in offset order.
    rows = ours.rdd.mapPartitions(lambda it: [[(r.partition, r.offset) for r in it]]).collect()
    for task in rows:
        runs = [p for i, (p, _o) in enumerate(task) if i == 0 or task[i - 1][0] != p]
        assert len(runs) == len(set(runs))
        for (p1, o1), (p2, o2) in zip(task, task[1:]):
            assert p1 != p2 or o2 == o1 + 1
    # Every Kafka partition was read by exactly one task, pieces cut at task boundaries included.
    stats = read_stats_for(read_stats_dir, topic)[before:]
    fetched = sum(s["records_fetched"] for s in stats)
    assert fetched and fetched % count == 0, (fetched, count)  # each read above fetched every record once


def test_spark_options_turn_packing_off_exactly(spark, bootstrap, wide_topic):
    topic, _count = wide_topic
    for options in [{"minPartitions": "100"}, {"maxRecordsPerPartition": "50",
                                                 "endingOffsets": "latest"}, {"packPartitions": "false"}]:
        ours = load(spark, "kwire", bootstrap, subscribe=topic, **options)
        if "packPartitions" in options:
            options = {}
        theirs = load(spark, "kafka", bootstrap, subscribe=topic, **options)
        assert ours.rdd.getNumPartitions() == theirs.rdd.getNumPartitions(), options


def test_multi_partition_fetch_sends_one_request_per_window(bootstrap, wide_topic):
    from spark_kwire.spark.reading.reader import read_partition
    from spark_kwire.spark.shared_client import shared_client

    topic, count = wide_topic
    params = ClientConfig.from_kafka_options({"bootstrap.servers": bootstrap})
    client = shared_client(params)
    ranges = [OffsetRange(topic, p, 0, p) for p in range(1, 96)]
    batched = PackedFetch(client, ranges, window=64)
    handed = [batched.first_fetch(i) for i in range(len(ranges))]
    assert batched.requests_sent == 2  # one broker, 95 ranges in windows of 64
    assert all(h is not None for h in handed)
    task = PackedRanges(tuple(ranges), 0)
    batches = list(read_partition(params, task, include_headers=False, read_committed=False, fail_on_data_loss=True))
    assert sum(b.num_rows for b in batches) == count
    order = [(p, o) for b in batches for p, o in zip(b.column("partition").to_pylist(), b.column("offset").to_pylist())]
    assert order == [(p, o) for p in range(1, 96) for o in range(p)]


def test_micro_batches_are_packed_too(bootstrap, wide_topic):
    from spark_kwire.spark.source import stream_reader_class

    topic, count = wide_topic
    options = {"kafka.bootstrap.servers": bootstrap, "subscribe": topic, "startingOffsets": "earliest"}
    packed_reader = stream_reader_class()(ReadOptions.parse({**options, "targetRecordsPerPartition": "1000"},
                                                            streaming=True))
    start = packed_reader.initialOffset()
    end = {topic: {str(p): p for p in range(96)}}  # every record, as latestOffset would give it
    parts = packed_reader.partitions(start, end)
    assert len(parts) == math.ceil(count / 1000) and all(isinstance(p, PackedRanges) for p in parts)
    assert sum(p.size for p in parts) == count
    # With Spark's own option the micro-batch is cut as Spark cuts it: one range per non-empty partition.
    spark_cut = stream_reader_class()(ReadOptions.parse({**options, "maxRecordsPerPartition": "1000"}, streaming=True))
    plain = spark_cut.partitions(spark_cut.initialOffset(), end)
    assert [(r.partition, r.start, r.end) for r in plain] == [(p, 0, p) for p in range(1, 96)]


def test_small_batches_are_coalesced_in_order_and_large_ones_pass_through():
    import pyarrow as pa

    from spark_kwire.spark.reading.reader import COALESCE_ROWS, coalesce_small_batches

    def batch(partition, start, n):
        return pa.RecordBatch.from_arrays([pa.array([partition] * n, pa.int32()),
                                           pa.array(range(start, start + n), pa.int64())], names=["partition", "offset"])

    small = [batch(p, 0, 1000) for p in range(40)]            # 40,000 rows in 40 small batches
    large = batch(99, 0, COALESCE_ROWS + 1)
    out = list(coalesce_small_batches(iter(small[:5] + [large] + small[5:])))
    rows = [(p, o) for b in out for p, o in zip(b.column(0).to_pylist(), b.column(1).to_pylist())]
    expected = [(p, o) for b in small[:5] + [large] + small[5:] for p, o in zip(b.column(0).to_pylist(),
                                                                                b.column(1).to_pylist())]
    assert rows == expected
    assert [b.num_rows for b in out] == [5000, COALESCE_ROWS + 1, 33_000, 2000]


def test_one_range_read_in_many_small_fetches_is_handed_over_in_large_batches(bootstrap, create_topic, produce,
                                                                               topic_name):
    from spark_kwire.spark.reading.reader import COALESCE_ROWS, read_partition

    count = 2 * COALESCE_ROWS + 500
    topic_name = create_topic(topic_name + "-one-range")
    produce(topic_name, [(None, b"v%07d" % i) for i in range(count)], **{"batch.num.messages": 1000})
    # 16 KiB per fetch: dozens of fetches, each of about 1,000 records
    params = ClientConfig.from_kafka_options({"bootstrap.servers": bootstrap, "max.partition.fetch.bytes": "16384"})
    batches = list(read_partition(params, OffsetRange(topic_name, 0, 0, count), include_headers=False,
                                  read_committed=False, fail_on_data_loss=True))
    assert [b.num_rows for b in batches[:-1]] and all(b.num_rows >= COALESCE_ROWS for b in batches[:-1])
    assert sum(b.num_rows for b in batches) == count
    offsets = [o for b in batches for o in b.column("offset").to_pylist()]
    values = [v for b in batches for v in b.column("value").to_pylist()]
    assert offsets == list(range(count)) and values == [b"v%07d" % i for i in range(count)]
