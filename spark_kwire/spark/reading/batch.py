"""Batch reads: spark.read.format("kwire"), with pushdown of filters on partition, offset and timestamp.

Pushdown needs the filter classes of Spark 4.1+ (`capabilities.FILTER_PUSHDOWN`); on 4.0 Spark never asks
a reader to push filters, so the plain reader serves and Spark applies the filters itself."""

from __future__ import annotations

import datetime as dt
import math
import sys
from functools import partial
from typing import Iterator

from pyspark.sql import datasource as _api
from pyspark.sql.datasource import DataSourceReader

from spark_kwire.client.consumer.read_replica import planned_read_node
from spark_kwire.spark.capabilities import FILTER_PUSHDOWN
from spark_kwire.spark.delegation import partitions_for_tasks
from spark_kwire.spark.options.parsing import ReadOptions
from spark_kwire.spark.reading.packing import PackedRanges, pack_ranges
from spark_kwire.spark.reading.range_reading import ReadsPlannedRanges
from spark_kwire.spark.reading.planner import OffsetRange, lookup_offsets_by_timestamp, plan_batch
from spark_kwire.spark.shared_client import shared_client
from spark_kwire.spark.workers.garbage_collection import freeze_loaded_objects


class PushedBounds:
    """What pushed-down filters allow: a set of partitions, an offset interval, a lowest timestamp."""

    def __init__(self) -> None:
        self.partitions: set[int] | None = None
        self.min_partition, self.max_partition = -math.inf, math.inf
        self.min_offset, self.max_offset_exclusive = 0, math.inf
        self.min_timestamp_ms: int | None = None

    def narrow(self, client, read_committed: bool):
        def apply(tps, start, end):
            kept = [
                tp for tp in tps
                if self.min_partition <= tp[1] <= self.max_partition
                and (self.partitions is None or tp[1] in self.partitions)
            ]
            start = {tp: max(start[tp], self.min_offset) for tp in kept}
            end = {tp: int(min(end[tp], self.max_offset_exclusive)) for tp in kept}
            if self.min_timestamp_ms is not None and kept:
                isolation = "read_committed" if read_committed else "read_uncommitted"
                found = lookup_offsets_by_timestamp(client, {tp: self.min_timestamp_ms for tp in kept}, isolation)
                for tp in kept:
                    first = found.get(tp, -1)
                    start[tp] = end[tp] if first < 0 else max(start[tp], first)
            start = {tp: min(start[tp], end[tp]) for tp in kept}
            return kept, start, end
        return apply


def _timestamp_ms(value, *, strict: bool) -> int | None:
    """Smallest Kafka millisecond timestamp that satisfies `timestamp >= value` (or `>` when strict)."""
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.timezone.utc)
        micros = (value - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)) // dt.timedelta(microseconds=1)
    elif isinstance(value, (int, float)):
        micros = int(value)
    else:
        return None
    return micros // 1000 + 1 if strict else -(-micros // 1000)


class KwireBatchReader(ReadsPlannedRanges, DataSourceReader):
    """Plans offset ranges on the driver (in `partitions`) and reads them on executors (in `read`)."""

    def __init__(self, options: ReadOptions) -> None:
        self.options = options
        self.bounds = PushedBounds()

    def partitions(self) -> list[OffsetRange] | list[PackedRanges]:
        freeze_loaded_objects()
        client = shared_client(self.options.kafka)
        ranges = plan_batch(client, self.options, narrow=self.bounds.narrow(client, self.options.read_committed))
        if self.options.pack_target:
            ranges = pack_ranges(ranges, partial(planned_read_node, client), self.options.pack_target)
        return partitions_for_tasks(ranges, self.options)


def pushdown_enabled_by_caller() -> bool:
    """True when Spark is planning this read through its filter-pushdown worker.

    Spark refuses a reader that defines pushFilters while `spark.sql.python.filterPushdown.enabled` is
    false, and a DataSource cannot read that setting, so the reader class is chosen by the worker
    module that asked for it."""
    if not FILTER_PUSHDOWN:
        return False
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename.endswith("data_source_pushdown_filters.py"):
            return True
        frame = frame.f_back
    return False


class KwirePushdownBatchReader(KwireBatchReader):
    """The batch reader plus pushdown of filters on partition, offset and timestamp."""

    def pushFilters(self, filters: list) -> Iterator:
        for f in filters:
            if not self._absorb(f):
                yield f

    def _absorb(self, f) -> bool:
        """Narrow the read by `f`; True when the narrowing is exact so Spark need not apply `f` again."""
        # Only reached on Spark 4.1+ (pushdown_enabled_by_caller), where these classes exist.
        EqualTo, GreaterThan, GreaterThanOrEqual = _api.EqualTo, _api.GreaterThan, _api.GreaterThanOrEqual
        LessThan, LessThanOrEqual, In = _api.LessThan, _api.LessThanOrEqual, _api.In
        column = f.attribute[0] if len(f.attribute) == 1 else None
        b = self.bounds
        value = getattr(f, "value", None)
        if column in ("partition", "offset") and isinstance(f, In):
            values = [v for v in value if isinstance(v, int)]
            if len(values) != len(value) or not values:
                return False
            if column == "partition":
                b.partitions = set(values) if b.partitions is None else b.partitions & set(values)
                return True
            b.min_offset = max(b.min_offset, min(values))
            b.max_offset_exclusive = min(b.max_offset_exclusive, max(values) + 1)
            return False
        if column in ("partition", "offset") and isinstance(value, int) and not isinstance(value, bool):
            if column == "partition":
                lo, hi = b.min_partition, b.max_partition
                if isinstance(f, EqualTo):
                    lo, hi = max(lo, value), min(hi, value)
                elif isinstance(f, GreaterThan):
                    lo = max(lo, value + 1)
                elif isinstance(f, GreaterThanOrEqual):
                    lo = max(lo, value)
                elif isinstance(f, LessThan):
                    hi = min(hi, value - 1)
                elif isinstance(f, LessThanOrEqual):
                    hi = min(hi, value)
                else:
                    return False
                b.min_partition, b.max_partition = lo, hi
                return True
            if isinstance(f, EqualTo):
                b.min_offset, b.max_offset_exclusive = max(b.min_offset, value), min(b.max_offset_exclusive, value + 1)
            elif isinstance(f, GreaterThan):
                b.min_offset = max(b.min_offset, value + 1)
            elif isinstance(f, GreaterThanOrEqual):
                b.min_offset = max(b.min_offset, value)
            elif isinstance(f, LessThan):
                b.max_offset_exclusive = min(b.max_offset_exclusive, value)
            elif isinstance(f, LessThanOrEqual):
                b.max_offset_exclusive = min(b.max_offset_exclusive, value + 1)
            else:
                return False
            return True
        if column == "timestamp" and isinstance(f, (GreaterThan, GreaterThanOrEqual, EqualTo)):
            # Kafka timestamps need not grow with offsets, so only the lower bound narrows the range
            # (ListOffsets finds the first offset at or after a time), and Spark still applies the filter.
            ms = _timestamp_ms(value, strict=isinstance(f, GreaterThan))
            if ms is not None:
                b.min_timestamp_ms = ms if b.min_timestamp_ms is None else max(b.min_timestamp_ms, ms)
        return False
