"""streamReadMode: whether a stream's micro-batches are read by Spark tasks or on the driver, decided once per query.

Spark takes a Python source's `SimpleDataSourceStreamReader` (the driver's read mode, stream_driver.py) only when
`DataSource.streamReader()` raises `PySparkNotImplementedError`; it asks once, when the query starts, in the
driver's long-lived source process. Spark also plans the read tasks' function with a stream reader of its own,
in a planning worker: that one is always the tasks' reader, which reads the batches of both modes (a driver batch
reaches a task only when replayed after a restart). So only the source process decides, and only once.

`auto` (the default) reads on the driver when, at start, the topics carry little per micro-batch:

* the records appended in the last RECENT_WINDOW_S seconds (what a micro-batch of a trigger that long would
  hold; the default trigger's batches hold far less), and
* the backlog a new query starts with: from startingOffsets, or from the consumer group's committed offsets with
  commitOffsetsToGroup (a restarted query resumes about there; Spark shows a source its checkpoint only later),

both capped by maxOffsetsPerTrigger when it is set, fit DRIVER_BOUND in records and, at the average size of a
sample of recent records, in bytes. Otherwise, and wherever the driver's mode is not safe (see `driver_obstacle`),
it reads with tasks.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from spark_kwire.spark.capabilities import READ_LIMIT_API, SIMPLE_READER_SKIPS_IDLE_POLLS
from spark_kwire.spark.errors import KwireOptionError
from spark_kwire.spark.options.parsing import ReadOptions

log = logging.getLogger("spark_kwire")


@dataclass(frozen=True)
class DriverBound:
    """The most one micro-batch read on the driver holds: it keeps the driver's source process (and the block
    manager the rows go to) safe whatever the topics hold."""
    rows: int
    bytes: int

    def describe_bytes(self) -> str:
        return f"{self.bytes / 2**20:g} MiB" if self.bytes >= 2**20 else f"{self.bytes / 1000:g} kB"


DRIVER_BOUND = DriverBound(rows=100_000, bytes=32 * 2**20)

# auto's look at the topics: the records of this many seconds stand for what a micro-batch may hold.
RECENT_WINDOW_S = 10
# Records per partition auto reads to learn their average size (from the partitions with the most recent records).
SAMPLE_RECORDS = 32
SAMPLE_PARTITIONS = 8
# Kafka's default largest record (message.max.bytes): so many records fit the bound whatever their size.
LARGEST_RECORD_BYTES = 1024 * 1024


@dataclass(frozen=True)
class ModeChoice:
    """Where a query's micro-batches are read, and why."""
    mode: str  # "tasks" | "driver"
    asked: str  # the option's value: "auto" | "tasks" | "driver"
    reason: str = ""

    def describe(self) -> str:
        if self.asked != "auto":
            return f"streamReadMode={self.asked}"
        return f"streamReadMode=auto chose it at start: {self.reason}" if self.reason else "streamReadMode=auto"


@dataclass(frozen=True)
class StreamLoad:
    """What the topics carry, as auto sees them at start."""
    recent_rows: int  # records appended in the last RECENT_WINDOW_S seconds
    backlog_rows: int  # records between where the query starts and the latest offsets
    row_bytes: float | None  # average Arrow bytes of a recent record (None: nothing to sample)


def driver_obstacle(options: ReadOptions) -> str | None:
    """Why this read cannot be read on the driver, or None."""
    if options.delegation_token:
        return ("with delegationToken=true the tasks log in with a token that only the tasks' partitions carry, "
                "and a batch read on the driver is read again by a task when it is replayed after a restart")
    return None


def choose_read_mode(options: ReadOptions, *, in_source_process: bool, measure=None) -> ModeChoice:
    """The mode of this query. `in_source_process`: Spark's driver-side source process is asking (the one place
    where the choice is made); elsewhere (the planning worker) the tasks' reader serves both modes."""
    asked = options.stream_read_mode
    if asked == "tasks":
        return ModeChoice("tasks", asked)
    obstacle = driver_obstacle(options)
    if asked == "driver":
        if obstacle:
            raise KwireOptionError(f"Option streamReadMode=driver cannot be used here: {obstacle}. Use "
                                   "streamReadMode=tasks (or auto, which then reads with tasks).")
        if in_source_process and not SIMPLE_READER_SKIPS_IDLE_POLLS:
            log.warning("kwire: streamReadMode=driver on a PySpark whose simple stream reader keeps every idle poll "
                        "until the next micro-batch (%s brings the fix): the driver's memory grows while the "
                        "topics are idle.", SIMPLE_READER_SKIPS_IDLE_POLLS.since)
        return ModeChoice("driver" if in_source_process else "tasks", asked)
    if not in_source_process:
        return ModeChoice("tasks", asked)
    if obstacle:
        return _tasks(asked, obstacle)
    if not READ_LIMIT_API:
        return _tasks(asked, f"this Spark has no {READ_LIMIT_API.name} ({READ_LIMIT_API.since} brings it): it runs "
                             "Trigger.AvailableNow as one batch that the driver's bound would cut short")
    if not SIMPLE_READER_SKIPS_IDLE_POLLS:
        return _tasks(asked, f"this PySpark's simple stream reader keeps every idle poll in memory "
                             f"({SIMPLE_READER_SKIPS_IDLE_POLLS.since} brings the fix)")
    try:
        load = (measure or measure_load)(options)
    except Exception as error:  # noqa: BLE001 -- the tasks' reader meets the same problem and reports it
        return _tasks(asked, f"the topics could not be looked at ({error})")
    return judge(load, options, asked)


def judge(load: StreamLoad, options: ReadOptions, asked: str = "auto", bound: DriverBound = DRIVER_BOUND
          ) -> ModeChoice:
    """auto's rule (module docstring) applied to what the topics carry."""
    cap = options.max_offsets_per_trigger or None
    first = min(load.backlog_rows, cap) if cap else load.backlog_rows
    steady = min(load.recent_rows, cap) if cap else load.recent_rows
    rows = max(first, steady)
    seen = (f"{load.recent_rows} records in the last {RECENT_WINDOW_S} s, a backlog of {load.backlog_rows} at "
            f"start" + (f", maxOffsetsPerTrigger {cap}" if cap else ""))
    if rows > bound.rows:
        return _tasks(asked, f"{seen}: more than the driver's bound of {bound.rows} records a micro-batch")
    if load.row_bytes is not None and rows * load.row_bytes > bound.bytes:
        return _tasks(asked, f"{seen}, {load.row_bytes:.0f} bytes a record: more than the driver's bound of "
                             f"{bound.describe_bytes()} a micro-batch")
    choice = ModeChoice("driver", asked, f"{seen}, within the driver's bound of {bound.rows} records and "
                                         f"{bound.describe_bytes()} a micro-batch")
    log.info("kwire: reading the stream's micro-batches on the driver (%s)", choice.describe())
    return choice


def _tasks(asked: str, reason: str) -> ModeChoice:
    choice = ModeChoice("tasks", asked, reason)
    log.info("kwire: reading the stream's micro-batches with tasks (%s)", choice.describe())
    return choice


def measure_load(options: ReadOptions) -> StreamLoad:
    """Records of the last RECENT_WINDOW_S seconds, the backlog at start and the size of recent records."""
    from spark_kwire.client.admin.admin import Admin
    from spark_kwire.spark.reading.planner import lookup_offsets_by_timestamp
    from spark_kwire.spark.reading.stream_offsets import StreamOffsets

    offsets = StreamOffsets(options)
    tps = offsets._current_partitions()
    if not tps:
        return StreamLoad(0, 0, None)
    latest = offsets._offsets(tps, "latest")
    since = lookup_offsets_by_timestamp(offsets._client, {tp: int((time.time() - RECENT_WINDOW_S) * 1000)
                                                          for tp in latest}, offsets._isolation)
    recent = {tp: latest[tp] - since[tp] for tp in latest if since.get(tp, -1) >= 0}
    start = offsets._initial_offsets()
    if options.commit_group:
        committed = Admin(offsets._client).fetch_committed_offsets(options.commit_group, list(latest))
        start.update({tp: entry.offset for tp, entry in committed.items() if entry is not None and entry.offset >= 0})
    backlog = sum(max(0, latest[tp] - start.get(tp, latest[tp])) for tp in latest)
    rows = max(sum(recent.values()), backlog)
    row_bytes = None
    if rows * LARGEST_RECORD_BYTES > DRIVER_BOUND.bytes:  # fewer records fit whatever their size
        row_bytes = _sampled_row_bytes(options, latest, recent or {tp: latest[tp] - start.get(tp, 0) for tp in latest})
    return StreamLoad(sum(recent.values()), backlog, row_bytes)


def _sampled_row_bytes(options: ReadOptions, latest: dict, weights: dict) -> float | None:
    """The average Arrow bytes of the last SAMPLE_RECORDS records of the SAMPLE_PARTITIONS busiest partitions."""
    from spark_kwire.spark.reading.planner import OffsetRange
    from spark_kwire.spark.reading.reader import read_ranges

    busiest = sorted((tp for tp in weights if weights[tp] > 0), key=lambda tp: -weights[tp])[:SAMPLE_PARTITIONS]
    ranges = [OffsetRange(t, p, max(0, latest[(t, p)] - SAMPLE_RECORDS), latest[(t, p)]) for t, p in sorted(busiest)]
    rows = size = 0
    for _rng, batch in read_ranges(options.kafka, ranges, include_headers=options.include_headers,
                                   read_committed=options.read_committed, fail_on_data_loss=False):
        rows += batch.num_rows
        size += batch.nbytes
    return size / rows if rows else None
