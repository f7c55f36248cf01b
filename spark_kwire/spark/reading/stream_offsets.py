"""Where a stream's micro-batches begin and end: offsets, limits, AvailableNow, data loss and group commits.

Offsets are `{"topic": {"partition": nextOffset}}`, the shape Spark's `kafka` source checkpoints; both read modes
(tasks: stream.py, driver: stream_driver.py) write them, so a query restarts in either mode from the same checkpoint.
The reader object lives in one long-running Python process on the driver (Spark's python_streaming_source_runner),
so it keeps state between calls: the AvailableNow target, the time of the last trigger (for maxTriggerDelay) and
the latest offsets it saw (for the query progress).

* The end of a batch: the partitions the subscription names *now* and their latest offsets. Partitions that
  appeared since `start` (a topic got more partitions, a new topic matches subscribePattern) begin at their
  earliest offset. Partitions that vanished (a deleted topic) are left out of the end offsets, so that the
  batch's ranges see them and apply failOnDataLoss. maxOffsetsPerTrigger shares the limit across partitions in
  proportion to their backlog; minOffsetsPerTrigger holds a batch back until enough records wait or
  maxTriggerDelay has passed.
* The ranges of a batch (start, end) are deterministic for a given (start, end), which is what lets Spark replay a
  batch after a restart exactly. (Batch 0 is the exception: Spark replays it with start = initialOffset() of a new
  reader, and a Python source has no checkpoint directory to keep its initial offsets in, so 'latest' may resolve
  differently.)
* With commitOffsetsToGroup, the end offsets of every finished micro-batch are committed to that consumer group.
  Spark calls commit(end) for batch N-1 only while planning batch N, so the last batch would never be committed;
  the end of the next batch is computed from `start`, which is committed then (Spark asks for the next batch only
  once the previous one is in the commit log).
"""

from __future__ import annotations

import logging
import math
import time
from typing import Iterable

from spark_kwire.client.admin.admin import Admin
from spark_kwire.client.errors import UnknownTopicError
from spark_kwire.client.consumer.offsets import list_offsets
from spark_kwire.protocol.errors import KwireError
from spark_kwire.spark.errors import DataLossError, KwireCommitError
from spark_kwire.spark.options.parsing import ReadOptions
from spark_kwire.spark.reading.planner import (
    OffsetRange, TopicPartition, format_tps, resolve_bound, resolve_topic_partitions
)
from spark_kwire.spark.shared_client import shared_client

log = logging.getLogger("spark_kwire")

Offsets = dict[TopicPartition, int]


def to_json_offsets(offsets: Offsets) -> dict:
    result: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        result.setdefault(topic, {})[str(partition)] = int(offset)
    return result


def from_json_offsets(data: dict) -> Offsets:
    return {(topic, int(p)): int(o) for topic, parts in (data or {}).items() for p, o in parts.items()}


def rate_limit(start: Offsets, latest: Offsets, limit: int) -> Offsets:
    """maxOffsetsPerTrigger as Spark's `kafka` source prorates it (KafkaMicroBatchStream.rateLimit).

    Each partition with a backlog advances by its share of `limit`, limit * backlog / total backlog
    (in doubles): a share of at least one offset is rounded down, a smaller one up, so that no partition
    starves. The batch can therefore hold a few offsets more or less than `limit`. Partitions without a
    backlog (including those whose latest offset went below `start`, which partitions() reports as data
    loss) get their latest offset."""
    backlog = {tp: latest[tp] - start[tp] for tp in latest if tp in start and latest[tp] > start[tp]}
    total = float(sum(backlog.values()))
    if total < 1:
        return dict(latest)
    end = {}
    for tp, last in latest.items():
        if tp not in backlog:
            end[tp] = last
            continue
        share = float(limit) * (backlog[tp] / total)
        step = math.ceil(share) if share < 1 else math.floor(share)
        end[tp] = min(last, start[tp] + step)
    return end


class StreamOffsets:
    """Where a stream's micro-batches begin and end, for the readers of both read modes (no Spark base class:
    `initialOffset` and `commit` mean the same to Spark's `DataSourceStreamReader` and
    `SimpleDataSourceStreamReader`)."""

    def __init__(self, options: ReadOptions) -> None:
        self.options = options
        self.available_now_target: Offsets | None = None
        # As in Spark's source, the first trigger is never held back by minOffsetsPerTrigger.
        self.last_trigger_ms = 0.0
        self.latest_seen: Offsets | None = None
        self._initial: Offsets | None = None
        self._reported_missing: set[str] = set()
        self._group_committed: Offsets | None = None

    # -- helpers ------------------------------------------------------------------------------------
    @property
    def _client(self):
        return shared_client(self.options.kafka)

    @property
    def _isolation(self) -> str:
        return "read_committed" if self.options.read_committed else "read_uncommitted"

    def _current_partitions(self) -> list[TopicPartition]:
        """The partitions the subscription names now, from fresh metadata.

        Unlike a batch read, a missing topic is not an error here: it may be created later (it is then
        read from its earliest offset) or it was deleted (partitions() reports that)."""
        client, sub = self._client, self.options.subscription
        if sub.kind == "subscribePattern":
            selected = sub.topic_filter
            topics = [t for t in client.list_topics() if selected.matches(t)]
        else:
            topics = list(sub.topics)
            missing = client.refresh_metadata(topics)
            for topic in sorted(missing - self._reported_missing):
                log.warning("kwire: topic '%s' (%s) does not exist (yet); it is read once it does",
                            topic, sub.describe())
            self._reported_missing = set(missing)
        known = client.metadata.topics
        wanted = {}
        for topic, partition in sub.assignment:
            wanted.setdefault(topic, set()).add(partition)
        result = []
        for topic in sorted(topics):
            info = known.get(topic)
            if info is None:
                continue
            for partition in info.partition_ids:
                if sub.kind != "assign" or partition in wanted.get(topic, ()):
                    result.append((topic, partition))
        return result

    def _offsets(self, tps: Iterable[TopicPartition], spec: str) -> Offsets:
        """{tp: offset} for `spec` ("earliest"/"latest"); partitions of topics deleted meanwhile are left out."""
        remaining = sorted(set(tps))
        while remaining:
            try:
                found = list_offsets(self._client, remaining, spec, isolation_level=self._isolation)
                return {tp: offset for tp, (offset, _ts) in found.items()}
            except UnknownTopicError as e:
                gone = [tp for tp in remaining if tp[0] == e.topic and e.partition in (None, tp[1])]
                if not gone:
                    raise
                remaining = [tp for tp in remaining if tp not in gone]
        return {}

    def _latest(self) -> Offsets:
        return self._offsets(self._current_partitions(), "latest")

    def _initial_offsets(self) -> Offsets:
        sub = self.options.subscription
        # assign names its partitions: check them now, with the message of a batch read.
        tps = resolve_topic_partitions(self._client, sub) if sub.kind == "assign" else self._current_partitions()
        if not tps:
            return {}
        return resolve_bound(self._client, tps, self.options.starting, side="starting",
                             read_committed=self.options.read_committed, strategy=self.options.timestamp_strategy)

    # -- DataSourceStreamReader ---------------------------------------------------------------------
    def initialOffset(self) -> dict:
        """Called for a query without a checkpoint: twice for its first batch (for latestOffset, then for
        planning), and again by a new reader when batch 0 is replayed after a restart. Cached, so that
        both calls of one reader agree even when startingOffsets is 'latest'."""
        if self._initial is None:
            self._initial = self._initial_offsets()
        if self.available_now_target is not None:
            # prepareForTriggerAvailableNow ran first: the target must not lie behind the start
            # (startingOffsets=latest resolved after the target was taken).
            for tp, offset in self._initial.items():
                self.available_now_target[tp] = max(offset, self.available_now_target.get(tp, offset))
        return to_json_offsets(self._initial)

    def _end_offsets(self, begin: Offsets, max_rows: int | None, min_rows: int | None) -> Offsets:
        """Where the next batch from `begin` ends: the latest offsets (or the AvailableNow target), held back
        to `begin` by minOffsetsPerTrigger / maxTriggerDelay, capped by maxOffsetsPerTrigger."""
        if self.options.commit_group:
            # Spark plans a batch only when the previous one is done (its commit log written), and after
            # a restart replays an unfinished batch before asking for the next: `begin` is processed
            # (or is where a new query begins).
            self._commit_to_group(begin)
        if self.available_now_target is not None:
            latest = dict(self.available_now_target)
        else:
            latest = self._latest()
        self.latest_seen = dict(latest)
        if not max_rows and not min_rows:
            return latest
        new = [tp for tp in latest if tp not in begin]
        origin = {tp: begin[tp] for tp in latest if tp in begin}
        if new:
            # Partitions that appeared since the last batch are read from their beginning.
            origin.update(self._offsets(new, "earliest"))
        # Under AvailableNow, waiting for more records would wait for records the query must not read.
        if min_rows and self.available_now_target is None and self._hold_back(min_rows, begin, latest):
            return dict(begin)
        return rate_limit(origin, latest, max_rows) if max_rows else latest

    def _hold_back(self, min_rows: int, begin: Offsets, latest: Offsets) -> bool:
        """minOffsetsPerTrigger / maxTriggerDelay: True to skip this trigger. New records are counted as
        Spark's source counts them: latest minus the batch start, from offset 0 for a new partition."""
        now_ms = time.time() * 1000
        if now_ms - self.last_trigger_ms >= self.options.max_trigger_delay_ms:
            self.last_trigger_ms = now_ms
            return False
        waiting = sum(latest[tp] - begin.get(tp, 0) for tp in latest)
        if waiting < min_rows:
            return True
        self.last_trigger_ms = now_ms
        return False

    def _ranges(self, start: dict, end: dict) -> list[OffsetRange]:
        """The offset ranges of the batch (start, end), after the checks of failOnDataLoss: deterministic for a
        given (start, end) except for partitions new in `end`, read from their earliest offset."""
        begin, finish = from_json_offsets(start), from_json_offsets(end)
        # Spark replays an unfinished batch 0 after a restart with start = initialOffset() of a new reader.
        replaying_first_batch = self.latest_seen is None and begin == self._initial
        problems = []
        gone = [tp for tp in begin if tp not in finish]
        if gone:
            topics = sorted({t for t, _ in gone})
            problems.append(
                f"partitions {format_tps(gone)} of topic(s) {', '.join(repr(t) for t in topics)} are gone "
                "(topic deleted, or no longer named by the subscription); records not read yet from them are lost"
            )
        new = [tp for tp in finish if tp not in begin]
        earliest = self._offsets(new, "earliest") if new else {}
        ranges = []
        for tp in sorted(finish):
            stop = finish[tp]
            if tp in begin:
                first = begin[tp]
            elif tp in earliest:
                first = earliest[tp]
                if first != 0:
                    problems.append(
                        f"new partition {tp[0]}-{tp[1]} starts at offset {first} instead of 0 "
                        "(records were deleted before the query saw the partition)"
                    )
            else:
                problems.append(f"new partition {tp[0]}-{tp[1]} is gone already (topic deleted?)")
                continue
            if stop < first:
                if replaying_first_batch:
                    problems.append(
                        f"{tp[0]}-{tp[1]}: the first micro-batch, replayed after a restart, ends at offset {stop} "
                        f"but startingOffsets resolved again to {first}: a Python data source cannot keep its "
                        "initial offsets in the checkpoint, so records of that batch are skipped (use "
                        "startingOffsets 'earliest', JSON offsets or a timestamp for a reproducible start)"
                    )
                else:
                    problems.append(
                        f"{tp[0]}-{tp[1]}: the latest offset went back from {first} to {stop} "
                        "(topic deleted and recreated, or truncated?)"
                    )
                continue
            ranges.append(OffsetRange(tp[0], tp[1], first, stop))
        if problems:
            message = "Some data may have been lost: " + "; ".join(problems) + "."
            if self.options.fail_on_data_loss:
                raise DataLossError(
                    message + " If you want the query to go on with what is there, set the option "
                    "'failOnDataLoss' to 'false'."
                )
            log.warning("kwire: %s Continuing (failOnDataLoss=false).", message)
        return ranges

    def commit(self, end: dict) -> None:
        """Spark calls this for batch N-1 only once it has planned batch N, so it never comes for the
        last batch of an AvailableNow run or before an idle period; latestOffset commits too, so
        this one never moves the group back."""
        offsets = from_json_offsets(end)
        done = self._group_committed or {}
        if offsets and all(tp in done and done[tp] >= o for tp, o in offsets.items()):
            return
        self._commit_to_group(offsets)

    def _commit_to_group(self, offsets: Offsets) -> None:
        """With commitOffsetsToGroup, commit the end offsets of a finished micro-batch to that group so
        that Kafka's tools (kafka-consumer-groups.sh) show the query's position and lag."""
        group = self.options.commit_group
        if not group or not offsets or offsets == self._group_committed:
            return
        try:
            Admin(self._client).commit_offsets(group, offsets)
        except KwireError as e:
            raise KwireCommitError(
                f"Committing offsets {to_json_offsets(offsets)} to consumer group '{group}' "
                f"(option 'commitOffsetsToGroup') failed: {e}. A group with active members (consumers "
                "using it) rejects commits from outside; give the query a group of its own."
            ) from e
        self._group_committed = dict(offsets)
