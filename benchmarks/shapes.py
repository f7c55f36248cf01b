"""The shapes users run, kwire against Spark's built-in `kafka` connector, side by side in one run.

Shapes (issue #21), each warmed once untimed, medians of --runs, results of both sides asserted equal. Spark stops
Python workers idle for a minute: a side idle that long (the other side's run took over 45 s) is warmed again
before its timed run, and that run is printed apart ("after its Python workers were stopped"):

* read N records of --record-size B spread evenly over 1, 64 and 512 partitions (count, bytes and a
  checksum of (partition, offset, value) asserted equal);
* write the same N keyed rows into topics of 1, 64 and 512 partitions, created before the timed runs (records
  per partition asserted equal); then one --small-rows write (a streaming micro-batch's size) into an existing
  topic, warm, beside a Python data source whose writer does nothing (the fixed cost of a Python write job);
* a stream writing --small-rows rows per micro-batch into an existing topic (a file source of parquet files,
  two files per trigger, AvailableNow): each sink's per-micro-batch addBatch and whole trigger, from the
  query's progress, beside the Python sink that does nothing (records per partition asserted equal);
* a micro-batch of about --micro-offsets offsets over 512 partitions: both sources read the same
  (start, end) offsets as a batch (Spark 4.0.0's streaming source does not run on PySpark 4.3); kwire also
  as one readStream trigger (AvailableNow, foreachBatch count), for what the stream machinery adds;
* one large partition (--large-mib MiB): peak resident memory of Spark's Python worker processes while
  kwire reads it (packed as by default, and as one task with packPartitions=false) against a no-op Python
  data source yielding the same number of rows of the same size in 50k-row Arrow batches; the built-in
  source's memory is in the JVM and not sampled here;
* planning a read over --plan-partitions partitions in --plan-topics topics (subscribePattern): time to
  get the number of Spark partitions, for both.

    python benchmarks/shapes.py [--records 400000] [--runs 3] [--large-mib 586] [--plan-partitions 5000]
    python benchmarks/shapes.py --records 20000 --runs 1 --large-mib 32 --plan-partitions 200 --only read,plan
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time

from _common import broker, print_machine, spark_session
from harness.processes import spark_python_workers

BUILTIN = "kafka (Spark built-in)"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=400_000)
    parser.add_argument("--record-size", type=int, default=100)
    parser.add_argument("--partition-counts", default="1,64,512")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--compression", default="lz4")
    parser.add_argument("--small-rows", type=int, default=1000)
    parser.add_argument("--micro-offsets", type=int, default=100_000)
    parser.add_argument("--large-mib", type=int, default=586)
    parser.add_argument("--plan-partitions", type=int, default=5000)
    parser.add_argument("--plan-topics", type=int, default=100)
    parser.add_argument("--stream-batches", type=int, default=12, help="micro-batches per streaming write")
    parser.add_argument("--only", default="read,write,small,streamwrite,micro,memory,plan",
                        help="comma-separated shapes to run")
    parser.add_argument("--bootstrap", help="an existing cluster; default: start a local broker")
    return parser.parse_args()


# -- helpers ---------------------------------------------------------------------------------------------
def produce_even(bootstrap: str, topic: str, partitions: int, records: int, size: int, compression: str) -> None:
    """`records` values of `size` bytes, partition i % partitions, through librdkafka (an independent client)."""
    from confluent_kafka import Producer

    from spark_kwire import admin

    admin.create_topic(bootstrap, topic, partitions=partitions)
    pool = os.urandom(size * 64 + 4096)
    producer = Producer({"bootstrap.servers": bootstrap, "compression.type": compression, "linger.ms": 20,
                         "batch.size": 1 << 20, "queue.buffering.max.messages": 1_000_000, "acks": 1})
    for i in range(records):
        at = (i * 7919) % (len(pool) - size)
        while True:
            try:
                producer.produce(topic, value=pool[at:at + size], partition=i % partitions)
                break
            except BufferError:
                producer.poll(0.05)
        if i % 10_000 == 0:
            producer.poll(0)
    assert producer.flush(300) == 0
    assert sum(admin.latest_offsets(bootstrap, topic).values()) == records


def load(spark, fmt: str, bootstrap: str, **options):
    reader = spark.read.format(fmt).option("kafka.bootstrap.servers", bootstrap)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def summary(df) -> tuple:
    """(count, bytes, checksum of partition, offset and value): equal only when the same records were read."""
    row = df.selectExpr("count(*) AS n", "sum(length(value)) AS b",
                        "sum(cast(xxhash64(partition, offset, value) AS decimal(38, 0))) AS h").collect()[0]
    return row.n, row.b, row.h


def report(title: str, records: int, seconds: dict[str, list[float]], baseline: str = BUILTIN,
           contender: str = "kwire") -> dict:
    print(f"\n{title}", flush=True)
    medians = {}
    for name, runs in seconds.items():
        medians[name] = statistics.median(runs)
        per_run = ", ".join(f"{s * 1000:,.0f} ms" for s in runs)
        print(f"  {name:<30} median {records / medians[name]:>12,.0f} records/s  {medians[name] * 1000:>9,.0f} ms"
              f"   (runs: {per_run})")
    if baseline in medians and contender in medians:
        print(f"  ratio {contender} / {baseline}: {medians[baseline] / medians[contender]:.2f}x", flush=True)
    return medians


# Spark stops Python workers idle for a minute (PythonWorkerFactory), so a side whose last run ended longer ago
# than this (the other side's run took that long) is warmed again before it is timed; that untimed run is
# reported apart, as what a first query after a pause costs.
REWARM_AFTER_IDLE_S = 45


def timed(fn) -> float:
    """Seconds fn() took, or the seconds it returns when it times its own essential part (a write whose
    before-and-after offset checks are not part of it)."""
    started = time.perf_counter()
    own = fn()
    return own if isinstance(own, float) else time.perf_counter() - started


def alternate(runs: int, sides: dict, warm: bool = True) -> dict[str, list[float]]:
    last_end = {}
    if warm:
        for name, fn in sides.items():
            once_more_on_failure(name, fn)
            last_end[name] = time.monotonic()
    seconds = {name: [] for name in sides}
    after_idle: dict[str, list[float]] = {}
    for _ in range(runs):
        for name, fn in sides.items():
            if warm and time.monotonic() - last_end.get(name, 0.0) > REWARM_AFTER_IDLE_S:
                after_idle.setdefault(f"{name}, after its Python workers were stopped (untimed)", []).append(
                    once_more_on_failure(name, lambda: timed(fn)))
            seconds[name].append(once_more_on_failure(name, lambda: timed(fn)))
            last_end[name] = time.monotonic()
    seconds.update(after_idle)
    return seconds


def once_more_on_failure(name: str, fn):
    """fn(), run again once if it fails (the failed attempt is not timed), saying so in the output. Seen: the
    built-in sink's Java producer expiring batches after 120 s on a fresh 64-partition topic of a busy broker."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 -- reported, then tried once more; a second failure propagates
        first_line = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
        print(f"  NOTE: a run of {name} failed and was run again (not timed): {first_line}", flush=True)
        return fn()


class WorkerMemory:
    """Peak resident memory (VmRSS, sampled every 20 ms) of Spark's Python worker processes."""

    def __init__(self) -> None:
        self.peak_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            for pid in spark_python_workers(os.getpid()):
                try:
                    with open(f"/proc/{pid}/status") as f:
                        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
                except (OSError, StopIteration):
                    continue
                self.peak_kib = max(self.peak_kib, rss)
            self._stop.wait(0.02)

    def __enter__(self) -> "WorkerMemory":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def noop_source_class(rows: int, size: int):
    """A Python data source yielding `rows` rows with the kafka schema and `size`-byte values, 50k per batch."""
    from pyspark.sql.datasource import DataSource, DataSourceReader

    class NoopKafkaShaped(DataSource):
        @classmethod
        def name(cls):
            return "noop_kafka_shaped"

        def schema(self):
            return ("key binary, value binary, topic string, partition int, offset long, timestamp timestamp, "
                    "timestampType int")

        def reader(self, schema):
            return NoopReader()

    class NoopReader(DataSourceReader):
        def read(self, partition):
            import numpy as np
            import pyarrow as pa

            value = os.urandom(size)
            done = 0
            while done < rows:
                n = min(50_000, rows - done)
                values = pa.array([value] * n, type=pa.binary())
                yield pa.RecordBatch.from_arrays([
                    pa.nulls(n, pa.binary()), values, pa.array(["t"] * n), pa.array(np.zeros(n, np.int32)),
                    pa.array(np.arange(done, done + n, dtype=np.int64)),
                    pa.array(np.zeros(n, np.int64), pa.timestamp("us", tz="UTC")), pa.array(np.zeros(n, np.int32)),
                ], names=["key", "value", "topic", "partition", "offset", "timestamp", "timestampType"])
                done += n

    return NoopKafkaShaped


# -- shapes ----------------------------------------------------------------------------------------------
def shape_reads(spark, bootstrap, args, counts) -> dict:
    results = {}
    for partitions in counts:
        topic = f"shapes-read-{args.records}-{partitions}-{time.time_ns() % 10**8}"
        produce_even(bootstrap, topic, partitions, args.records, args.record_size, args.compression)
        expected = {}

        def run(fmt):
            got = summary(load(spark, fmt, bootstrap, subscribe=topic))
            assert got == expected.setdefault("summary", got), (fmt, got, expected)
            assert got[0] == args.records

        seconds = alternate(args.runs, {BUILTIN: lambda: run("kafka"), "kwire": lambda: run("kwire")})
        results[partitions] = report(f"Read {args.records:,} x {args.record_size} B over {partitions} partition(s)",
                                     args.records, seconds)
    if len(counts) > 1:
        first, last = results[counts[0]]["kwire"], results[counts[-1]]["kwire"]
        print(f"\nkwire's read rate at {counts[-1]} partitions / at {counts[0]}: {first / last:.2f}")
    return results


def _keyed_rows(spark, start: int, end: int, size: int):
    """Rows start..end-1 in 2 partitions: key the id, value the zero-padded id filled up to `size` bytes."""
    from pyspark.sql import functions as F

    pad = "x" * max(0, size - 12)
    return spark.range(start, end, numPartitions=2).select(
        F.col("id").cast("string").alias("key"),
        F.concat(F.lpad(F.col("id").cast("string"), 12, "0"), F.lit(pad)).alias("value"))


def _write_rows(spark, records: int, size: int):
    rows = _keyed_rows(spark, 0, records, size).cache()
    rows.count()
    return rows


def _appended(bootstrap: str, topic: str, before: dict) -> dict:
    """Records appended to each partition of `topic` since its log end offsets were `before`."""
    from spark_kwire import admin

    after = admin.latest_offsets(bootstrap, topic)
    return {p: after[p] - before.get(p, 0) for p in after}


class _Writer:
    """Appends `rows` to one topic per side, created (with a leader for every partition) before any timed run,
    as a stream appends to an existing topic; `cleanup()` deletes the topics afterwards. Each run's records per
    partition (the change of the log end offsets) are asserted equal across runs and sides.

    Both sides' producers are cached per configuration across jobs (Spark's for its sink, kwire's leased
    producers), and each shape gets its own client.id per side, hence its own producers; after a failed write
    the side gets a new client.id (a new producer). Seen here when each run wrote into a topic created inside
    the timed run: Spark's cached Java producer, idempotent, failing with OutOfOrderSequenceException on a fresh
    64-partition topic and expiring its batches after 120 s, then failing the same way on the retry."""

    def __init__(self, rows, bootstrap, args, partitions: int, tag: str) -> None:
        from spark_kwire import admin

        self.rows, self.bootstrap, self.args, self.tag = rows, bootstrap, args, tag
        stamp = time.time_ns() % 10**8
        self.client_ids = {fmt: f"shapes-{tag}-{fmt}-{stamp}" for fmt in ("kafka", "kwire")}
        self.topics = {fmt: f"shapes-write-{tag}-{fmt}-{stamp}" for fmt in ("kafka", "kwire")}
        for topic in self.topics.values():
            admin.create_topic(bootstrap, topic, partitions=partitions)
        self.layout: dict | None = None

    def __call__(self, fmt: str) -> float:
        """One write by `fmt`; returns its seconds (the offset checks around it are not timed)."""
        from spark_kwire import admin

        topic = self.topics[fmt]
        before = admin.latest_offsets(self.bootstrap, topic)
        started = time.perf_counter()
        try:
            (self.rows.write.format(fmt).option("kafka.bootstrap.servers", self.bootstrap).option("topic", topic)
             .option("kafka.client.id", self.client_ids[fmt])
             .option("kafka.compression.type", self.args.compression).mode("append").save())
        except Exception:
            # a failed write may leave the side's cached producer unusable: the next attempt gets a new one
            self.client_ids[fmt] += "-again"
            raise
        seconds = time.perf_counter() - started
        written = _appended(self.bootstrap, topic, before)
        self.layout = self.layout or written
        assert written == self.layout, (fmt, "records per partition differ")
        return seconds

    def cleanup(self) -> None:
        from spark_kwire import admin

        for topic in self.topics.values():
            admin.delete_topic(self.bootstrap, topic, missing_ok=True)


def shape_writes(spark, bootstrap, args, counts) -> None:
    rows = _write_rows(spark, args.records, args.record_size)
    for partitions in counts:
        run = _Writer(rows, bootstrap, args, partitions, f"p{partitions}")
        seconds = alternate(args.runs, {BUILTIN: lambda: run("kafka"), "kwire": lambda: run("kwire")})
        run.cleanup()
        report(f"Write {args.records:,} keyed rows x {args.record_size} B into {partitions} partition(s)",
               args.records, seconds)
    rows.unpersist()


NULL_SINK = "Python sink doing nothing"


def shape_small_write(spark, bootstrap, args) -> None:
    rows = _write_rows(spark, args.small_rows, args.record_size)
    from null_sink import NullSink

    spark.dataSource.register(NullSink)
    run = _Writer(rows, bootstrap, args, 8, "small")
    seconds = alternate(max(5, args.runs * 3), {
        BUILTIN: lambda: run("kafka"), "kwire": lambda: run("kwire"),
        NULL_SINK: lambda: rows.write.format("null_arrow_sink").mode("append").save()})
    run.cleanup()
    medians = report(f"One {args.small_rows:,}-row write into an existing 8-partition topic (a micro-batch's "
                     f"size), warm", args.small_rows, seconds)
    print(f"  ratio kwire / {NULL_SINK} (the fixed cost of a Python data source write job): "
          f"{medians[NULL_SINK] / medians['kwire']:.2f}x; {NULL_SINK} / {BUILTIN}: "
          f"{medians[BUILTIN] / medians[NULL_SINK]:.2f}x", flush=True)


def _micro_batch_files(spark, rows_per_batch: int, batches: int, size: int) -> str:
    """A folder of parquet files, two per micro-batch of `rows_per_batch` keyed rows (as _write_rows makes them)."""
    import glob
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="kwire-shapes-stream-src-")
    for i in range(batches):
        staging = f"{folder}/staging-{i}"
        _keyed_rows(spark, i * rows_per_batch, (i + 1) * rows_per_batch, size).write.parquet(staging)
        for j, part in enumerate(sorted(glob.glob(f"{staging}/*.parquet"))):
            shutil.move(part, f"{folder}/batch-{i:05d}-{j}.parquet")
        shutil.rmtree(staging)
    return folder


def shape_stream_write(spark, bootstrap, args) -> None:
    """Per-micro-batch cost of each sink in a running stream (the stream writer is made once per query)."""
    import shutil
    import tempfile

    from null_sink import NullSink

    from spark_kwire import admin

    spark.dataSource.register(NullSink)
    batches, rows = args.stream_batches, args.small_rows
    folder = _micro_batch_files(spark, rows, batches, args.record_size)
    schema = spark.read.parquet(folder).schema
    stamp = time.time_ns() % 10**8
    topics = {fmt: f"shapes-stream-write-{fmt}-{stamp}" for fmt in ("kafka", "kwire")}
    for topic in topics.values():
        admin.create_topic(bootstrap, topic, partitions=8)
    layout: dict = {}
    skip = 2  # each query's first micro-batches make its writer, producers and connections

    def stream(fmt: str) -> dict[str, list[float]]:
        checkpoint = tempfile.mkdtemp(prefix="kwire-shapes-stream-ck-")
        writer = (spark.readStream.schema(schema).option("maxFilesPerTrigger", 2).parquet(folder).writeStream
                  .option("checkpointLocation", checkpoint).trigger(availableNow=True))
        topic = topics.get(fmt)
        if topic:
            writer = (writer.format(fmt).option("kafka.bootstrap.servers", bootstrap).option("topic", topic)
                      .option("kafka.compression.type", args.compression))
            before = admin.latest_offsets(bootstrap, topic)
        else:
            writer = writer.format(fmt)
        query = writer.start()
        query.awaitTermination()
        assert query.exception() is None, query.exception()
        progress = [p for p in query.recentProgress if p["numInputRows"] > 0]
        shutil.rmtree(checkpoint, ignore_errors=True)
        assert [p["numInputRows"] for p in progress] == [rows] * batches, [p["numInputRows"] for p in progress]
        if topic:
            written = _appended(bootstrap, topic, before)
            assert written == layout.setdefault("per_partition", written), (fmt, "records per partition differ")
        return {phase: [p["durationMs"].get(phase, 0) / 1000 for p in progress[skip:]]
                for phase in sorted({phase for p in progress for phase in p["durationMs"]})}

    sides = {BUILTIN: lambda: stream("kafka"), "kwire": lambda: stream("kwire"), NULL_SINK: lambda: stream(
        "null_arrow_sink")}
    phases: dict[str, dict[str, list[float]]] = {name: {} for name in sides}
    for _ in range(max(2, args.runs)):
        for name, fn in sides.items():
            for phase, seconds in once_more_on_failure(name, fn).items():
                phases[name].setdefault(phase, []).extend(seconds)
    for topic in topics.values():
        admin.delete_topic(bootstrap, topic, missing_ok=True)
    shutil.rmtree(folder, ignore_errors=True)
    title = (f"A stream writing {rows:,} rows per micro-batch into an existing 8-partition topic ({batches} "
             f"micro-batches per query, the first {skip} of each left out)")
    for phase, what in (("addBatch", "the sink's part (addBatch)"), ("triggerExecution", "the whole trigger")):
        medians = report(f"{title}: {what}", rows, {name: phase_of[phase] for name, phase_of in phases.items()})
        print(f"  ratio {NULL_SINK} / {BUILTIN}: {medians[BUILTIN] / medians[NULL_SINK]:.2f}x", flush=True)
    print("  median ms of every phase Spark reports per micro-batch:")
    for name, phase_of in phases.items():
        print(f"    {name:<30} " + ", ".join(f"{phase} {statistics.median(seconds) * 1000:.0f}"
                                              for phase, seconds in phase_of.items()), flush=True)


def shape_micro_batch(spark, bootstrap, args) -> None:
    import json

    from spark_kwire import admin

    partitions = 512
    per_partition = max(1, args.micro_offsets // partitions)
    topic = f"shapes-micro-{time.time_ns() % 10**8}"
    produce_even(bootstrap, topic, partitions, 3 * per_partition * partitions, args.record_size, args.compression)
    latest = admin.latest_offsets(bootstrap, topic)
    start = {topic: {str(p): o - per_partition for p, o in latest.items()}}
    end = {topic: {str(p): o for p, o in latest.items()}}
    records = per_partition * partitions
    options = {"subscribe": topic, "startingOffsets": json.dumps(start), "endingOffsets": json.dumps(end)}
    expected = {}

    def batch(fmt):
        got = summary(load(spark, fmt, bootstrap, **options))
        assert got == expected.setdefault("summary", got) and got[0] == records, (fmt, got)

    def stream():
        import tempfile
        seen = []
        query = (spark.readStream.format("kwire").option("kafka.bootstrap.servers", bootstrap)
                 .option("subscribe", topic).option("startingOffsets", json.dumps(start)).load()
                 .writeStream.foreachBatch(lambda df, _id: seen.append(summary(df)))
                 .option("checkpointLocation", tempfile.mkdtemp(prefix="kwire-shapes-"))
                 .trigger(availableNow=True).start())
        query.awaitTermination()
        assert query.exception() is None and [s for s in seen if s[0]] == [expected["summary"]], seen

    seconds = alternate(args.runs, {BUILTIN: lambda: batch("kafka"), "kwire": lambda: batch("kwire"),
                                    "kwire readStream trigger": stream})
    report(f"A micro-batch of {records:,} offsets over {partitions} partitions ({per_partition} each), read as "
           "a batch of those offsets; kwire also as one readStream trigger", records, seconds)


def shape_memory(spark, bootstrap, args) -> None:
    from spark_kwire import admin

    records = args.large_mib * 2**20 // args.record_size
    topic = f"shapes-large-{time.time_ns() % 10**8}"
    produce_even(bootstrap, topic, 1, records, args.record_size, args.compression)
    assert admin.latest_offsets(bootstrap, topic) == {0: records}
    spark.dataSource.register(noop_source_class(records, args.record_size))
    sides = {
        "no-op Python source": lambda: spark.read.format("noop_kafka_shaped").load(),
        "kwire (packed, default)": lambda: load(spark, "kwire", bootstrap, subscribe=topic),
        "kwire (packPartitions=false)": lambda: load(spark, "kwire", bootstrap, subscribe=topic,
                                                     packPartitions="false"),
    }
    print(f"\nOne partition of {records:,} records x {args.record_size} B ({args.large_mib} MiB of values): "
          "peak VmRSS of Spark's Python workers, sampled every 20 ms", flush=True)
    for name, df in sides.items():
        df().selectExpr("count(*)").collect()  # warm: workers started, caches loaded
        with WorkerMemory() as memory:
            seconds = timed(lambda: df().selectExpr("count(*) AS n", "sum(length(value)) AS b").collect())
        print(f"  {name:<30} peak worker RSS {memory.peak_kib / 1024:>7,.0f} MiB   {records / seconds:>12,.0f} "
              f"records/s", flush=True)


def shape_planning(spark, bootstrap, args) -> None:
    from spark_kwire import admin

    prefix = f"shapes-plan-{time.time_ns() % 10**8}-"
    per_topic = max(1, args.plan_partitions // args.plan_topics)
    for i in range(args.plan_topics):
        admin.create_topic(bootstrap, f"{prefix}{i:03d}", partitions=per_topic)
    total = per_topic * args.plan_topics

    def plan(fmt):
        # The topics are empty: without packing kwire makes one Spark partition per topic-partition, as Spark does.
        extra = {"packPartitions": "false"} if fmt == "kwire" else {}
        n = load(spark, fmt, bootstrap, subscribePattern=prefix + ".*", **extra).rdd.getNumPartitions()
        assert n == total, (fmt, n, total)

    seconds = alternate(args.runs, {BUILTIN: lambda: plan("kafka"), "kwire": lambda: plan("kwire")})
    report(f"Planning a read of {total:,} partitions in {args.plan_topics} topics (subscribePattern; "
           "rate = partitions planned per second)", total, seconds)


def main() -> None:
    args = parse_args()
    print_machine()
    only = set(args.only.split(","))
    counts = [int(c) for c in args.partition_counts.split(",")]
    with broker(args) as bootstrap:
        spark = spark_session()
        if "read" in only:
            shape_reads(spark, bootstrap, args, counts)
        if "write" in only:
            shape_writes(spark, bootstrap, args, counts)
        if "small" in only:
            shape_small_write(spark, bootstrap, args)
        if "streamwrite" in only:
            shape_stream_write(spark, bootstrap, args)
        if "micro" in only:
            shape_micro_batch(spark, bootstrap, args)
        if "memory" in only:
            shape_memory(spark, bootstrap, args)
        if "plan" in only:
            shape_planning(spark, bootstrap, args)
        spark.stop()


if __name__ == "__main__":
    main()
