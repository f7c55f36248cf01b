"""The records a JSON read infers its schema from, fetched on the driver at load().

``sample_values(options, side)`` returns the keys or values (nulls left out: a tombstone is no document) of
at most ``records_per_partition`` records of each topic-partition the read covers, for
``spark_kwire.formats.json.inference.infer.infer_schema``:

* from the range the query will read: per partition the last records before its ending offset, the read's
  startingOffsets / endingOffsets (or timestamps, or a group's offsets) resolved as planning resolves them
  (and clamped to what the log holds: sampling never fails for data loss, the read itself says so);
* or, when that range holds no record (a stream starting at 'latest', a batch whose range is empty), from
  the tail of each partition: its last records.

At load() Spark does not say yet whether the DataFrame is a batch or a stream, so ``options`` are those parsed
with ``ReadOptions.parse(..., streaming=None)`` (whose startingOffsets default is 'latest': the tail). The
newest records are the ones sampled because they carry the fields a producer added last.

Bounds: ``records_per_partition`` (option ``samplingRecords``, default 1,000), a time bound for the whole
sampling (``samplingTimeoutMs``, default 30,000 ms; checked between fetch responses, a single request being
bounded by ``kafka.request.timeout.ms``) and 128 MiB of payloads. When the time bound ends it, what was fetched
is used (a warning says how much); nothing at all is an error, as is a topic with no records: a schema cannot
be inferred from none, the message says to give ``valueSchema`` / ``keySchema``. read_committed reads skip
aborted transactions, as the read does; compressed batches are decompressed as for any read.
"""

from __future__ import annotations

import logging
import time

import pyarrow as pa

from spark_kwire.client.consumer.fetcher import fetch_range
from spark_kwire.client.consumer.offsets import list_offsets
from spark_kwire.client.consumer.packed_fetch import PackedFetch
from spark_kwire.client.errors import KwireError
from spark_kwire.spark.errors import KwireOptionError
from spark_kwire.spark.options.parsing import ReadOptions
from spark_kwire.spark.reading.planner import OffsetRange, format_tps, resolve_bound, resolve_topic_partitions
from spark_kwire.spark.shared_client import shared_client
from spark_kwire.spark.options.inference import DEFAULT_SAMPLING_RECORDS, DEFAULT_SAMPLING_TIMEOUT_MS

__all__ = ["sample_values", "sampling_ranges", "DEFAULT_SAMPLING_RECORDS",
           "DEFAULT_SAMPLING_TIMEOUT_MS"]

log = logging.getLogger("spark_kwire")

SAMPLE_BYTES = 128 * 2**20
_WIDENINGS = 4  # times a window is widened backwards when offsets hold fewer records (compaction, markers)


def sample_values(options: ReadOptions, side: str = "value", *, records_per_partition: int = DEFAULT_SAMPLING_RECORDS,
                  timeout_ms: int = DEFAULT_SAMPLING_TIMEOUT_MS) -> pa.Array:
    """The non-null ``side`` ("key" or "value") payloads of the sampled records, as one binary array (see the
    module's docstring for which records). Raises KwireOptionError when there is nothing to infer from."""
    if side not in ("key", "value"):
        raise ValueError(f"side must be 'key' or 'value', got {side!r}")
    deadline = time.monotonic() + timeout_ms / 1000
    client = shared_client(options.kafka)
    ranges = sampling_ranges(client, options)
    what = f"the {side}s of {options.subscription.describe()}"
    if not any(r.size for r in ranges):
        raise KwireOptionError(
            f"Cannot infer the schema of {what}: no records to sample (partitions "
            f"{format_tps((r.topic, r.partition) for r in ranges)} are empty). A schema cannot be inferred from no "
            f"records: give it with option '{side}Schema' (a Spark DDL string such as 'id BIGINT, name STRING', or a "
            "StructType's JSON).")
    sampler = _Sampler(client, options.read_committed, side, records_per_partition, deadline)
    chunks = sampler.read(ranges)
    values = pa.concat_arrays(chunks) if chunks else pa.array([], pa.binary())
    values = values.filter(values.is_valid())
    if sampler.cut_short:
        log.warning("kwire: sampling %s for its JSON schema stopped at its time bound (samplingTimeoutMs=%d) or "
                    "its %d MiB bound after %d record(s) from %d of %d partition(s); the schema is inferred from "
                    "those", what, timeout_ms, SAMPLE_BYTES >> 20, sampler.records, sampler.partitions_read,
                    len(ranges))
    if len(values) == 0:
        if not sampler.records:
            within = f" within samplingTimeoutMs={timeout_ms}" if sampler.cut_short else ""
            retry = "Raise 'samplingTimeoutMs', or give" if sampler.cut_short else "Give"
            raise KwireOptionError(
                f"Cannot infer the schema of {what}: no record could be fetched{within}{sampler.last_error_text()}. "
                f"{retry} the schema with option '{side}Schema'.")
        raise KwireOptionError(
            f"Cannot infer the schema of {what}: the {sampler.records} sampled record(s) all have a null {side}"
            f"{sampler.last_error_text()}. Give the schema with option '{side}Schema'.")
    return values


def sampling_ranges(client, options: ReadOptions) -> list[OffsetRange]:
    """Per topic-partition, the offsets the sample is taken from (their last records): the range the read
    covers, or the whole partition when that range is empty everywhere."""
    tps = resolve_topic_partitions(client, options.subscription)
    if not tps:
        return []
    earliest, latest = (_log_ends(client, tps, spec, options.read_committed) for spec in ("earliest", "latest"))
    planned = _planned(client, options, tps, earliest, latest)
    if planned is None or not any(end > start for start, end in planned.values()):
        planned = {tp: (earliest[tp], latest[tp]) for tp in tps}
    return [OffsetRange(t, p, *planned[(t, p)]) for t, p in tps]


def _log_ends(client, tps, spec: str, read_committed: bool) -> dict:
    isolation = "read_committed" if read_committed else "read_uncommitted"
    return {tp: offset for tp, (offset, _ts) in list_offsets(client, tps, spec, isolation_level=isolation).items()}


def _planned(client, options: ReadOptions, tps, earliest: dict, latest: dict) -> dict | None:
    """{tp: (start, end)} of the range the read names, inside the log; None when its bounds cannot be resolved
    now (a stream may start at a timestamp no record has reached yet)."""
    try:
        start = resolve_bound(client, tps, options.starting, side="starting", read_committed=options.read_committed,
                              strategy=options.timestamp_strategy, earliest=earliest, latest=latest)
        end = latest if options.ending is None else resolve_bound(
            client, tps, options.ending, side="ending", read_committed=options.read_committed, earliest=earliest,
            latest=latest)
    except (KwireError, KwireOptionError) as error:
        log.info("kwire: sampling the partitions' tails: the read's offsets cannot be resolved now (%s)", error)
        return None
    result = {}
    for tp in tps:
        low, high = earliest[tp], latest[tp]
        s = min(max(start[tp], low), high)
        result[tp] = (s, min(max(end[tp], s), high))
    return result


class _Sampler:
    """Fetches the sampling ranges, the first Fetch of every range batched per leader, within the bounds."""

    def __init__(self, client, read_committed: bool, side: str, wanted: int, deadline: float) -> None:
        self.client = client
        self.isolation = "read_committed" if read_committed else "read_uncommitted"
        self.side = side
        self.wanted = wanted
        self.deadline = deadline
        self.records = 0
        self.bytes = 0
        self.partitions_read = 0
        self.cut_short = False
        self.errors: list[str] = []

    def last_error_text(self) -> str:
        return f" (last fetch error: {self.errors[-1]})" if self.errors else ""

    def _over(self) -> bool:
        if time.monotonic() >= self.deadline or self.bytes >= SAMPLE_BYTES:
            self.cut_short = True
        return self.cut_short

    def read(self, ranges: list[OffsetRange]) -> list[pa.Array]:
        chunks: list[pa.Array] = []
        wanted = [r for r in ranges if r.size > 0]
        if not wanted or self._over():
            return chunks
        tails = [OffsetRange(r.topic, r.partition, max(r.start, r.end - self.wanted), r.end) for r in wanted]
        packed = PackedFetch(self.client, tails, isolation_level=self.isolation)
        for index, rng in enumerate(wanted):
            if self._over():
                break
            chunks.extend(self._partition(rng, tails[index].start, packed.first_fetch(index)))
            self.partitions_read += 1
        return chunks

    def _partition(self, rng: OffsetRange, start: int, prefetched) -> list[pa.Array]:
        """The last ``wanted`` records of ``rng``: offsets [start, rng.end) first, then earlier windows, wider
        each time, while those offsets hold fewer records (compaction, transaction markers, aborted records)."""
        pieces: list[list[pa.Array]] = []
        count, end = 0, rng.end
        for widening in range(_WIDENINGS + 1):
            got, n = self._window(rng.topic, rng.partition, start, end, prefetched)
            prefetched = None
            pieces.insert(0, got)  # earlier offsets first
            count += n
            if count >= self.wanted or start <= rng.start or self._over():
                break
            end, start = start, max(rng.start, start - (self.wanted - count) * 2 ** (widening + 1))
        chunks = [chunk for piece in pieces for chunk in piece]
        if count > self.wanted:  # a widened window can hold more than the rest wanted: keep the last ones
            column = pa.concat_arrays(chunks)
            chunks = [column.slice(len(column) - self.wanted)]
        return chunks

    def _window(self, topic: str, partition: int, start: int, end: int, prefetched) -> tuple[list[pa.Array], int]:
        got, n = [], 0
        try:
            reader = fetch_range(self.client, topic, partition, start, end, isolation_level=self.isolation,
                                 prefetched=prefetched)
            for decoded in reader:
                column = decoded.key if self.side == "key" else decoded.value
                got.append(column if column.type == pa.binary() else column.cast(pa.binary()))
                n += len(column)
                self.records += len(column)
                self.bytes += column.nbytes
                if self._over():
                    reader.close()
                    break
        except KwireError as error:
            # Sampling is best effort (the read itself reports lost data); never silently: say what was skipped.
            self.errors.append(f"{topic}-{partition}: {error}")
            log.warning("kwire: sampling %s-%d offsets [%d, %d) for a JSON schema failed: %s", topic, partition,
                        start, end, error)
        return got, n
