"""Streaming reads by tasks (streamReadMode=tasks): readStream.format("kwire") with Spark's offsets JSON,
admission control and AvailableNow.

Where batches begin and end is StreamOffsets' (stream_offsets.py), shared with the driver's read mode. Here:

* partitions(start, end) turns the two offset maps into offset ranges, packed into Spark partitions (packing.py)
  or cut as Spark's source cuts them; each becomes a read task (range_reading.py). A batch planned by the driver's
  read mode (stream_driver.py) and replayed after a restart reaches a task as Spark's SimpleInputPartition: it is
  read here too, the same records (see read()).
* Spark 4.2+ hands latestOffset the start offsets and a ReadLimit (`capabilities.READ_LIMIT_API`). On
  4.0 and 4.1 `latestOffset()` takes no arguments: `SelfLimitingStreamReader` (stream_self_limited.py)
  then remembers where the previous batch ended and applies the limits itself.
* latestOffset(start) commits `start` to the consumer group of commitOffsetsToGroup (StreamOffsets).
"""

from __future__ import annotations

import logging
from functools import partial

from pyspark.sql.datasource import DataSourceStreamReader

from spark_kwire.client.consumer.read_replica import planned_read_node
from spark_kwire.spark.capabilities import READ_LIMIT_API
from spark_kwire.spark.delegation import partitions_for_tasks
from spark_kwire.spark.reading.range_reading import ReadsPlannedRanges
from spark_kwire.spark.reading.planner import OffsetRange, calculate_ranges
from spark_kwire.spark.reading.packing import pack_ranges
from spark_kwire.spark.workers.stream_kernels import load_stream_kernels
from spark_kwire.spark.reading.stream_offsets import (  # noqa: F401 -- the offsets' helpers, imported from here too
    Offsets, StreamOffsets, from_json_offsets, rate_limit, to_json_offsets
)

log = logging.getLogger("spark_kwire")


class KwireStreamReaderBase(StreamOffsets, ReadsPlannedRanges, DataSourceStreamReader):
    """What every kwire stream reader that plans read tasks does, whatever the release's latestOffset signature."""

    def read(self, partition):
        import spark_kwire.spark.reading.reader  # noqa: F401 -- the decoding kernels, which only readers need

        load_stream_kernels("decode_headers" if self.options.include_headers else "decode")
        from spark_kwire.spark.reading.stream_driver import is_driver_batch, read_between_offsets

        if is_driver_batch(partition):  # a batch of the driver's read mode, replayed after a restart
            return read_between_offsets(self, partition.start, partition.end)
        return super().read(partition)

    def partitions(self, start: dict, end: dict) -> list[OffsetRange]:
        ranges = self._ranges(start, end)
        if self.options.pack_target:
            planned = pack_ranges(ranges, partial(planned_read_node, self._client), self.options.pack_target)
        else:
            # Spark's micro-batches cut resolved ranges with KafkaOffsetRangeCalculator alone (empty ones dropped).
            planned = calculate_ranges(ranges, min_partitions=self.options.min_partitions,
                                       max_records=self.options.max_records_per_partition)
        return partitions_for_tasks(planned, self.options)

    def stop(self) -> None:
        pass


if READ_LIMIT_API:
    from pyspark.sql.streaming.datasource import (
        ReadAllAvailable, ReadLimit, ReadMaxRows, ReadMinRows, SupportsTriggerAvailableNow,
    )

    class KwireStreamReader(KwireStreamReaderBase, SupportsTriggerAvailableNow):
        """The stream reader for Spark 4.2+: Spark passes start offsets and a ReadLimit to latestOffset, and
        runs Trigger.AvailableNow in as many batches as the limits ask for."""

        def prepareForTriggerAvailableNow(self) -> None:
            """Fix the offsets to read up to: the latest of every partition when the query starts."""
            self.available_now_target = self._latest()

        def getDefaultReadLimit(self) -> ReadLimit:
            # A Python source can give one ReadLimit only (no composite limit as in Scala); when both
            # maxOffsetsPerTrigger and minOffsetsPerTrigger are set, latestOffset applies both.
            if self.options.max_offsets_per_trigger:
                return ReadMaxRows(self.options.max_offsets_per_trigger)
            if self.options.min_offsets_per_trigger:
                return ReadMinRows(self.options.min_offsets_per_trigger)
            return ReadAllAvailable()

        def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
            if isinstance(limit, ReadAllAvailable):  # e.g. Trigger.Once: Spark lifts the limits
                max_rows = min_rows = None
            else:
                min_rows = limit.min_rows if isinstance(limit, ReadMinRows) else self.options.min_offsets_per_trigger
                max_rows = limit.max_rows if isinstance(limit, ReadMaxRows) else self.options.max_offsets_per_trigger
            return to_json_offsets(self._end_offsets(from_json_offsets(start), max_rows, min_rows))

        def reportLatestOffset(self) -> dict | None:
            """Shown as `latestOffset` in the query progress next to `endOffset`: how far behind the query is."""
            return to_json_offsets(self.latest_seen) if self.latest_seen else None
