"""Driver-side planning: which topic-partitions, which offsets, and how they are cut into Spark partitions."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

from pyspark.sql.datasource import InputPartition

from spark_kwire.client.admin.admin import Admin
from spark_kwire.client.consumer.offsets import list_offsets
from spark_kwire.spark.errors import DataLossError, KwireOptionError
from spark_kwire.spark.options.parsing import EARLIEST, LATEST, OffsetBound, ReadOptions, Subscription

log = logging.getLogger("spark_kwire")

TopicPartition = tuple[str, int]


@dataclass(frozen=True)
class OffsetRange(InputPartition):
    """One Spark partition's work: offsets [start, end) of one topic-partition. Small and picklable."""
    topic: str
    partition: int
    start: int
    end: int

    @property
    def size(self) -> int:
        return max(0, self.end - self.start)


def format_tps(tps) -> str:
    """'topic-0, topic-1, ...' for messages ('none' when empty)."""
    return ", ".join(f"{t}-{p}" for t, p in sorted(tps)) or "none"


def resolve_topic_partitions(client, subscription: Subscription) -> list[TopicPartition]:
    """The topic-partitions a subscription names, checked against the cluster."""
    # One Metadata request for all the topics, however many: never one per topic.
    if subscription.kind == "subscribePattern":
        selected = subscription.topic_filter
        topics = sorted(t for t in client.list_topics() if selected.matches(t))
        known = client.metadata.topics
        return [(t, p) for t in topics for p in sorted(known[t].partition_ids)]
    if subscription.kind == "subscribe":
        described = client.describe_topics(subscription.topics)
        return [(t, p) for t in subscription.topics for p in sorted(described[t].partition_ids)]
    described = client.describe_topics(sorted({topic for topic, _ in subscription.assignment}))
    result = []
    for topic, partition in subscription.assignment:
        existing = described[topic].partition_ids
        if partition not in existing:
            raise KwireOptionError(
                f"Option 'assign' names partition {partition} of topic '{topic}', which has partitions "
                f"0..{max(existing)}."
            )
        result.append((topic, partition))
    return result


def resolve_bound(client, tps: list[TopicPartition], bound: OffsetBound, *, side: str, read_committed: bool,
                  strategy: str = "error", earliest: dict | None = None, latest: dict | None = None) -> dict:
    """Concrete offsets for a starting or ending bound. `earliest`/`latest` may be passed in when known."""
    isolation = "read_committed" if read_committed else "read_uncommitted"

    def ends(spec: str) -> dict:
        known = earliest if spec == "earliest" else latest
        if known is not None:
            return known
        return {tp: off for tp, (off, _ts) in list_offsets(client, tps, spec, isolation_level=isolation).items()}

    if bound.kind in ("earliest", "latest"):
        return dict(ends(bound.kind))
    if bound.kind == "offsets":
        specified = bound.offset_map
        missing = [tp for tp in tps if tp not in specified]
        extra = [tp for tp in specified if tp not in set(tps)]
        if missing or extra:
            name = f"{side}Offsets"
            raise KwireOptionError(
                f"Option '{name}' must give an offset for every assigned topic-partition and no others; "
                f"missing: {format_tps(missing)}; not assigned: {format_tps(extra)}."
            )
        result = {}
        need_earliest = any(o == EARLIEST for o in specified.values())
        need_latest = any(o == LATEST for o in specified.values())
        e = ends("earliest") if need_earliest else {}
        l = ends("latest") if need_latest else {}
        for tp in tps:
            o = specified[tp]
            result[tp] = e[tp] if o == EARLIEST else l[tp] if o == LATEST else o
        return result
    if bound.kind in ("timestamp", "timestamps"):
        if bound.kind == "timestamp":
            wanted = {tp: bound.timestamp for tp in tps}
        else:
            wanted = bound.offset_map
            missing = [tp for tp in tps if tp not in wanted]
            if missing:
                raise KwireOptionError(
                    f"Option '{side}OffsetsByTimestamp' must give a timestamp for every assigned topic-partition; "
                    f"missing: {format_tps(missing)}."
                )
        found = lookup_offsets_by_timestamp(client, wanted, isolation)
        result = {}
        latest_offsets = None
        for tp in tps:
            offset = found.get(tp, -1)
            if offset < 0:
                # No record at or after the timestamp. Ending bounds fall back to latest, as Spark does;
                # starting bounds follow startingOffsetsByTimestampStrategy.
                if side == "starting" and strategy == "error":
                    raise KwireOptionError(
                        f"No offset matched timestamp {wanted[tp]} in {tp[0]}-{tp[1]}: no record there has a "
                        "timestamp at or after it. Set startingOffsetsByTimestampStrategy='latest' to start from "
                        "the latest offset instead."
                    )
                if latest_offsets is None:
                    latest_offsets = ends("latest")
                offset = latest_offsets[tp]
            result[tp] = offset
        return result
    if bound.kind == "group":
        committed = Admin(client).fetch_committed_offsets(bound.group, tps)
        result = {}
        earliest_offsets = None
        for tp in tps:
            entry = committed.get(tp)
            offset = entry.offset if entry is not None else -1
            if offset < 0:
                if earliest_offsets is None:
                    earliest_offsets = ends("earliest")
                offset = earliest_offsets[tp]
            result[tp] = offset
        return result
    raise AssertionError(bound.kind)


def lookup_offsets_by_timestamp(client, wanted: dict[TopicPartition, int], isolation: str) -> dict[TopicPartition, int]:
    """First offset whose timestamp is >= the given one, per partition (-1 when none)."""
    by_ts: dict[int, list[TopicPartition]] = {}
    for tp, ts in wanted.items():
        by_ts.setdefault(ts, []).append(tp)
    found = {}
    for ts, group in by_ts.items():
        for tp, (offset, _t) in list_offsets(client, group, ts, isolation_level=isolation).items():
            found[tp] = offset
    return found


def check_data_loss(start: dict, end: dict, earliest: dict, latest: dict, *, fail_on_data_loss: bool) -> tuple[dict, dict]:
    """Apply failOnDataLoss to offsets outside [log start, log end]; returns adjusted (start, end).

    A starting offset past the ending one is an error whatever failOnDataLoss says, as in Spark's source
    (it asserts the two before reading): the bounds contradict each other."""
    start, end = dict(start), dict(end)
    backwards = sorted(tp for tp in start if start[tp] > end[tp])
    if backwards:
        detail = "; ".join(f"{t}-{p}: {start[(t, p)]} > {end[(t, p)]}" for t, p in backwards[:5])
        raise KwireOptionError(
            f"The starting offset is after the ending offset in {detail}. The starting offsets or timestamps "
            "lie past the ending ones (or past the latest offset when the read ends at 'latest'); no setting of "
            "failOnDataLoss reads such a range."
        )
    for tp in list(start):
        problems = []
        if start[tp] < earliest[tp]:
            problems.append(
                f"starting offset {start[tp]} is below the log start offset {earliest[tp]} "
                "(records were deleted by retention or compaction)"
            )
            start[tp] = earliest[tp]
        if end[tp] > latest[tp]:
            problems.append(f"ending offset {end[tp]} is above the latest offset {latest[tp]}")
            end[tp] = latest[tp]
        if start[tp] > end[tp]:  # both moved into the log's bounds: what the range held was deleted
            start[tp] = end[tp]
        if problems:
            where = f"{tp[0]}-{tp[1]}"
            if fail_on_data_loss:
                raise DataLossError(
                    f"Some data may have been lost in {where}: {'; '.join(problems)}. If you want the query to "
                    "go on with what is there, set the option 'failOnDataLoss' to 'false'."
                )
            log.warning("kwire: possible data loss in %s: %s; continuing (failOnDataLoss=false)", where, "; ".join(problems))
    return start, end


def split_ranges(ranges: list[OffsetRange], *, min_partitions: int | None, max_records: int | None,
                 sizes_as_given: list[int] | None = None) -> list[OffsetRange]:
    """The Spark partitions of a batch read of `ranges` (one per topic-partition), as Spark's kafka source
    (4.0) makes them.

    Ranges are cut only when `min_partitions` exceeds the number of topic-partitions (empty ones counted)
    or a range is larger than `max_records`; they are then cut by `calculate_ranges`, which drops empty
    ones. Otherwise each topic-partition is one Spark partition, an empty one too. Spark compares
    `max_records` with the ranges as the options give them, before 'earliest' (-2) and 'latest' (-1) are
    resolved: `sizes_as_given` (see `sizes_as_spark_compares_them`), so that a read from earliest to
    latest is cut by maxRecordsPerPartition only along with minPartitions, exactly as with Spark."""
    given = sizes_as_given if sizes_as_given is not None else [r.size for r in ranges]
    if (min_partitions and min_partitions > len(ranges)) or (max_records and any(s > max_records for s in given)):
        return calculate_ranges(ranges, min_partitions=min_partitions, max_records=max_records)
    if max_records and any(r.size > max_records for r in ranges):
        log.warning("kwire: maxRecordsPerPartition=%d cuts nothing here: as Spark's kafka source, a batch read "
                    "compares it with the offsets as given ('earliest' is -2, 'latest' -1), not with the "
                    "records in the topic; set minPartitions or numeric offsets to cut the read", max_records)
    return list(ranges)


def sizes_as_spark_compares_them(tps: list[TopicPartition], options: ReadOptions, start: dict,
                                 end: dict) -> list[int]:
    """end - start of each topic-partition with 'earliest'/'latest' left as Spark's batch planner leaves
    them when it decides whether to cut: -2 and -1. Offsets found from timestamps are resolved ones."""
    def given(bound: OffsetBound, resolved: dict, default: int) -> dict:
        if bound.kind == "earliest":
            return {tp: EARLIEST for tp in tps}
        if bound.kind == "latest":
            return {tp: LATEST for tp in tps}
        if bound.kind == "offsets":
            return {tp: bound.offset_map.get(tp, default) for tp in tps}
        return {tp: resolved[tp] for tp in tps}

    starts, ends = given(options.starting, start, EARLIEST), given(options.ending, end, LATEST)
    return [ends[tp] - starts[tp] for tp in tps]


def calculate_ranges(ranges: list[OffsetRange], *, min_partitions: int | None,
                     max_records: int | None) -> list[OffsetRange]:
    """Cut offset ranges by the rules of Spark's KafkaOffsetRangeCalculator.getRanges (4.0).

    Empty ranges are dropped. With `max_records`, every range is first cut into ceil(size / max_records)
    pieces. Then, when there are fewer pieces than `min_partitions`, each piece gets a share of
    `min_partitions` proportional to its size, rounded half up: pieces whose share is 1 stay whole (and so
    do the other pieces of their topic-partition), and the rest share what is left of `min_partitions`
    in proportion to their sizes. A piece cut in n parts gets parts of floor(remaining / parts left), so
    the last parts take the round-off. The arithmetic is done in doubles, as Spark does it."""
    ranges = [r for r in ranges if r.size > 0]
    if max_records:
        ranges = [piece for r in ranges for piece in _divide(r, math.ceil(float(r.size) / float(max_records)))]
    if not min_partitions or len(ranges) >= min_partitions:
        return ranges
    total = sum(r.size for r in ranges)
    whole = [r for r in ranges if _share(r.size, total, min_partitions) == 1]
    kept_whole = {(r.topic, r.partition) for r in whole}
    rest_total = total - sum(r.size for r in whole)
    rest_partitions = max(min_partitions - len(whole), 1)
    result = []
    for r in ranges:
        parts = 1 if (r.topic, r.partition) in kept_whole else _share(r.size, rest_total, rest_partitions)
        result.extend(_divide(r, parts))
    return result


def _share(size: int, total: int, partitions: int) -> int:
    """Spark's part count: max(1, Math.round(size / total * partitions)), in doubles, halves rounded up."""
    exact = float(size) / float(total) * partitions
    below = math.floor(exact)
    return max(1, below + 1 if exact - below >= 0.5 else below)


def _divide(r: OffsetRange, parts: int) -> list[OffsetRange]:
    """`parts` consecutive pieces of `r`, each floor(remaining / parts left) long; empty pieces dropped."""
    pieces, begin, remaining = [], r.start, r.size
    # More parts than offsets leave empty leading parts and ones of length 1: the same as size parts.
    for left in range(min(parts, remaining), 0, -1):
        length = remaining // left
        remaining -= length
        if length > 0:
            pieces.append(OffsetRange(r.topic, r.partition, begin, begin + length))
            begin += length
    return pieces


def plan_batch(client, options: ReadOptions, *, narrow=None) -> list[OffsetRange]:
    """Resolve a batch read into offset ranges. `narrow(tps, start, end) -> (start, end)` applies pushed filters."""
    tps = resolve_topic_partitions(client, options.subscription)
    if not tps:
        return []
    isolation = "read_committed" if options.read_committed else "read_uncommitted"
    earliest = {tp: o for tp, (o, _) in list_offsets(client, tps, "earliest", isolation_level=isolation).items()}
    latest = {tp: o for tp, (o, _) in list_offsets(client, tps, "latest", isolation_level=isolation).items()}
    start = resolve_bound(client, tps, options.starting, side="starting", read_committed=options.read_committed,
                          strategy=options.timestamp_strategy, earliest=earliest, latest=latest)
    end = resolve_bound(client, tps, options.ending, side="ending", read_committed=options.read_committed,
                        earliest=earliest, latest=latest)
    given = dict(zip(tps, sizes_as_spark_compares_them(tps, options, start, end)))
    start, end = check_data_loss(start, end, earliest, latest, fail_on_data_loss=options.fail_on_data_loss)
    if narrow is not None:
        tps, start, end = narrow(tps, start, end)
    ranges = [OffsetRange(t, p, start[(t, p)], end[(t, p)]) for t, p in tps]
    return split_ranges(ranges, min_partitions=options.min_partitions, max_records=options.max_records_per_partition,
                        sizes_as_given=[given[tp] for tp in tps])
