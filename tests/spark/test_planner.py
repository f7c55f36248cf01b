"""Planning arithmetic: range splitting, rate limiting and data-loss checks (no broker needed).

Splitting and rate limiting are compared with Spark's own code (the 4.0.0 `kafka` connector in the test
session's JVM, see spark_oracle.py) on generated uneven inputs, not with answers written down here.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from spark_kwire.spark.reading.planner import (
    DataLossError, OffsetRange, calculate_ranges, check_data_loss, split_ranges
)
from spark_kwire.spark.reading.stream import from_json_offsets, rate_limit, to_json_offsets
from tests.spark.spark_oracle import spark_offset_ranges, spark_rate_limit

_ORACLE = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def kwire_ranges(ranges, *, min_partitions, max_records):
    out = calculate_ranges([OffsetRange(*r) for r in ranges], min_partitions=min_partitions, max_records=max_records)
    return [(r.topic, r.partition, r.start, r.end) for r in out]


def test_one_spark_partition_per_topic_partition_unless_cut_as_spark_decides():
    ranges = [OffsetRange("t", 0, 0, 100), OffsetRange("t", 1, 5, 5), OffsetRange("t", 2, 10, 20)]
    # Spark's source keeps an empty topic-partition as a Spark partition when it cuts nothing...
    assert split_ranges(ranges, min_partitions=None, max_records=None) == ranges
    assert split_ranges(ranges, min_partitions=3, max_records=100) == ranges  # 3 partitions, empty one counted
    # Spark compares maxRecordsPerPartition with the sizes as the options give them: earliest (-2) to latest (-1) is 1.
    assert split_ranges(ranges, min_partitions=None, max_records=99, sizes_as_given=[1, 1, 1]) == ranges
    # ... and cuts (dropping empty ranges) when minPartitions exceeds them all or a range exceeds the maximum.
    assert len(split_ranges(ranges, min_partitions=4, max_records=None)) == 4
    assert len(split_ranges(ranges, min_partitions=None, max_records=99)) == 3


@pytest.mark.parametrize("sizes, min_partitions, max_records", [
    ([500, 500], 5, None),            # halves round up: 3 + 3
    ([1000, 10, 10], 10, None),       # small partitions stay whole, the rest share what is left
    ([700, 300, 0, 5], 7, None),
    ([700, 300, 0, 5], 7, 100),
    ([1000, 10, 10], 40, 300),        # a partition cut by maxRecordsPerPartition whose last piece is small
    ([3, 1], 10, None),               # more parts than offsets
    ([101, 99, 1], None, 50),
])
def test_splitting_is_sparks_on_the_issue_cases(spark, sizes, min_partitions, max_records):
    ranges = [("t", p, 10 * p, 10 * p + size) for p, size in enumerate(sizes)]
    expected = spark_offset_ranges(spark, ranges, min_partitions=min_partitions, max_records=max_records)
    assert sorted(kwire_ranges(ranges, min_partitions=min_partitions, max_records=max_records)) == sorted(expected)


_sizes = st.one_of(st.integers(0, 40), st.integers(0, 5000), st.sampled_from([0, 1, 2, 999, 1000, 1001, 10**6]))


@_ORACLE
@given(
    st.lists(st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 10**9), _sizes), min_size=1, max_size=8),
    st.one_of(st.none(), st.integers(1, 64)),
    st.one_of(st.none(), st.integers(1, 3000)),
)
def test_splitting_matches_sparks_range_calculator(spark, parts, min_partitions, max_records):
    ranges = [(topic, p, start, start + size) for p, (topic, start, size) in enumerate(parts)]
    assume(max_records is None or sum(-(-size // max_records) for _t, _s, size in parts) <= 5000)
    expected = spark_offset_ranges(spark, ranges, min_partitions=min_partitions, max_records=max_records)
    assert sorted(kwire_ranges(ranges, min_partitions=min_partitions, max_records=max_records)) == sorted(expected)


@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=6), st.integers(1, 50), st.integers(1, 5000))
def test_splitting_keeps_every_offset_exactly_once(sizes, min_partitions, max_records):
    ranges = [OffsetRange("t", p, 7, 7 + size) for p, size in enumerate(sizes)]
    out = split_ranges(ranges, min_partitions=min_partitions, max_records=max_records)
    assert all(r.size <= max_records for r in out)
    for p, size in enumerate(sizes):
        pieces = sorted((r.start, r.end) for r in out if r.partition == p)
        covered = [o for s, e in pieces for o in range(s, e)]
        assert covered == list(range(7, 7 + size))


def test_data_loss_fails_or_warns():
    earliest, latest = {("t", 0): 10}, {("t", 0): 50}
    with pytest.raises(DataLossError, match="t-0.*below the log start offset 10.*failOnDataLoss"):
        check_data_loss({("t", 0): 3}, {("t", 0): 50}, earliest, latest, fail_on_data_loss=True)
    start, end = check_data_loss({("t", 0): 3}, {("t", 0): 70}, earliest, latest, fail_on_data_loss=False)
    assert start == {("t", 0): 10} and end == {("t", 0): 50}


def test_rate_limit_is_sparks_where_rounding_matters(spark):
    # Shares of 9.9 are rounded down and of 0.05 up (no partition starves): the batch holds 11, not 10.
    start = {("t", 0): 0, ("t", 1): 0, ("t", 2): 0, ("t", 3): 40}
    latest = {("t", 0): 990, ("t", 1): 5, ("t", 2): 5, ("t", 3): 30}
    end = rate_limit(start, latest, 10)
    assert end == spark_rate_limit(spark, start, latest, 10)
    assert sum(end[tp] - start[tp] for tp in start if latest[tp] > start[tp]) == 11


_offset = st.one_of(st.integers(0, 2000), st.integers(0, 10**12))


@_ORACLE
@given(st.dictionaries(st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 30)), st.tuples(_offset, _offset),
                       min_size=1, max_size=12),
       st.one_of(st.integers(1, 100), st.integers(1, 10**7)))
def test_rate_limit_matches_sparks(spark, parts, limit):
    # Latest below start too: Spark's proration skips such partitions (partitions() reports the loss).
    start = {tp: a for tp, (a, _b) in parts.items()}
    latest = {tp: b for tp, (_a, b) in parts.items()}
    end = rate_limit(start, latest, limit)
    assert end == spark_rate_limit(spark, start, latest, limit)
    assert all(start[tp] < end[tp] <= latest[tp] for tp in latest if latest[tp] > start[tp])


def test_offsets_json_shape_is_sparks():
    offsets = {("a", 0): 5, ("a", 1): 7, ("b", 0): 0}
    assert to_json_offsets(offsets) == {"a": {"0": 5, "1": 7}, "b": {"0": 0}}
    assert from_json_offsets(to_json_offsets(offsets)) == offsets
