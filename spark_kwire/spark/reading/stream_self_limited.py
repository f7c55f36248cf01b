"""Stream reads on Spark 4.0 and 4.1, whose Python stream readers get `latestOffset()` with no arguments.

Without the ReadLimit API (`capabilities.READ_LIMIT_API`, Spark 4.2) Spark tells a Python source neither
where the next batch starts nor what limit applies, so this reader does what Spark's own `kafka` source
does: it remembers where the previous batch ended and applies maxOffsetsPerTrigger, minOffsetsPerTrigger
and maxTriggerDelay itself. What Spark 4.0/4.1 call, measured with a logging source:

* fresh query: latestOffset(), initialOffset(), partitions(start, end), then latestOffset() per trigger;
* restart from a checkpoint: partitions(X, X) first, X being the end of the last planned batch (Spark's
  setLatestSeenOffset), then the unfinished batch again if there is one, then latestOffset();
* Trigger.AvailableNow and Trigger.Once: the calls of the first processing-time trigger, then the query
  stops. Spark runs them as a single batch for Python sources and the source cannot tell them apart.
* with spark.sql.streaming.triggerAvailableNowWrapper.enabled=true, AvailableNow calls latestOffset()
  once to fix the end of its only batch, and again (for the progress report) before planning it.

So the start of the next batch is the end of the last partitions() call, or the initial offsets when
there was none. A second latestOffset() while a batch with new data is offered and not planned is the
AvailableNow wrapper: if the offered batch was capped, the query is refused there, before any record is
read, because that batch would be the only one.
"""

from __future__ import annotations

import logging

from spark_kwire.spark.capabilities import READ_LIMIT_API, UnsupportedOnThisSparkError
from spark_kwire.spark.reading.stream import KwireStreamReaderBase, Offsets, from_json_offsets, to_json_offsets

log = logging.getLogger("spark_kwire")


class SelfLimitingStreamReader(KwireStreamReaderBase):
    """The stream reader for Spark releases without the ReadLimit API (4.0, 4.1)."""

    def __init__(self, options) -> None:
        super().__init__(options)
        self._next_start: Offsets | None = None   # end of the last batch Spark planned
        self._offered: Offsets | None = None      # a batch with new data offered, not planned yet
        self._offered_capped = False
        self._warned_single_batch = False

    def _start(self) -> Offsets:
        if self._next_start is not None:
            return dict(self._next_start)
        return from_json_offsets(self.initialOffset())

    def latestOffset(self) -> dict:
        if self._offered is not None:
            # Spark asks again without planning the batch it was offered: the AvailableNow wrapper, which
            # took the previous answer as the end of its only batch.
            if self._offered_capped:
                raise UnsupportedOnThisSparkError(
                    "Trigger.AvailableNow with maxOffsetsPerTrigger (more records are available than one batch "
                    "may hold)", READ_LIMIT_API,
                    "Here Spark runs AvailableNow as one batch, so the query could not read everything that "
                    "was available without exceeding the limit; nothing was read. Use a processing-time "
                    "trigger with the limit (and query.processAllAvailable() then query.stop() to end once "
                    "caught up), or drop maxOffsetsPerTrigger for AvailableNow queries.",
                )
            return to_json_offsets(self._offered)
        begin = self._start()
        options = self.options
        end = self._end_offsets(begin, options.max_offsets_per_trigger, options.min_offsets_per_trigger)
        if end != begin:
            self._offered = dict(end)
            self._offered_capped = end != self.latest_seen
            if self._offered_capped and not self._warned_single_batch:
                self._warned_single_batch = True
                waiting = sum(self.latest_seen[tp] - end.get(tp, 0) for tp in self.latest_seen)
                log.warning(
                    "kwire: maxOffsetsPerTrigger=%d caps this micro-batch; %d more records wait. This Spark has "
                    "no %s (%s brings it): it runs Trigger.AvailableNow and Trigger.Once as a single batch and "
                    "does not tell the source which trigger runs it. A processing-time query reads the rest in "
                    "the next batches; an AvailableNow or Once query stops after this batch and leaves them for "
                    "its next run. Set spark.sql.streaming.triggerAvailableNowWrapper.enabled=true to have "
                    "such AvailableNow queries refused at start instead.",
                    options.max_offsets_per_trigger, waiting, READ_LIMIT_API.name, READ_LIMIT_API.since,
                )
        return to_json_offsets(end)

    def partitions(self, start: dict, end: dict):
        if start == end:
            # setLatestSeenOffset after a restart: where the last planned batch ended.
            self._next_start = from_json_offsets(end)
            return []
        self._next_start = from_json_offsets(end)
        self._offered = None
        return super().partitions(start, end)

    def commit(self, end: dict) -> None:
        if self._next_start is None:
            self._next_start = from_json_offsets(end)
        super().commit(end)
