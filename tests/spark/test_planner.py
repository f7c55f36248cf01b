"""Pure planning logic: range splitting, rate limiting and data-loss checks (no broker needed)."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from spark_kwire.spark.planner import DataLossError, OffsetRange, check_data_loss, split_ranges
from spark_kwire.spark.stream import from_json_offsets, rate_limit, to_json_offsets


def test_one_spark_partition_per_topic_partition_by_default():
    ranges = [OffsetRange("t", 0, 0, 100), OffsetRange("t", 1, 5, 5), OffsetRange("t", 2, 10, 20)]
    assert split_ranges(ranges, min_partitions=None, max_records=None) == [ranges[0], ranges[2]]


def test_min_partitions_splits_proportionally_like_spark():
    ranges = [OffsetRange("t", 0, 0, 300), OffsetRange("t", 1, 0, 100)]
    out = split_ranges(ranges, min_partitions=4, max_records=None)
    assert [(r.partition, r.start, r.end) for r in out] == [(0, 0, 100), (0, 100, 200), (0, 200, 300), (1, 0, 100)]


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


@given(st.dictionaries(st.integers(0, 20), st.tuples(st.integers(0, 1000), st.integers(0, 1000)), min_size=1),
       st.integers(1, 3000))
def test_rate_limit_never_exceeds_the_limit_and_always_progresses(parts, limit):
    start = {("t", p): min(a, b) for p, (a, b) in parts.items()}
    latest = {("t", p): max(a, b) for p, (a, b) in parts.items()}
    end = rate_limit(start, latest, limit)
    taken = sum(end[tp] - start[tp] for tp in latest)
    backlog = sum(latest[tp] - start[tp] for tp in latest)
    assert taken == min(limit, backlog)
    assert all(start[tp] <= end[tp] <= latest[tp] for tp in latest)


def test_offsets_json_shape_is_sparks():
    offsets = {("a", 0): 5, ("a", 1): 7, ("b", 0): 0}
    assert to_json_offsets(offsets) == {"a": {"0": 5, "1": 7}, "b": {"0": 0}}
    assert from_json_offsets(to_json_offsets(offsets)) == offsets
