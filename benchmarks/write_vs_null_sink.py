"""kwire's batch write against a null Python sink: how close the write comes to what Spark's Python hand-off allows.

The null sink is a `DataSourceArrowWriter` that only counts the rows Spark hands it (the driver checks the
count). Both write the same cached DataFrame (N rows, 100 B values, 12 B keys unless --no-keys) in the same
Spark session, alternating, each warmed by one untimed write first; kwire writes into a fresh topic each time
and every record is checked to be in Kafka. Prints records/s of both (medians) and the ratio kwire / null sink.

    python benchmarks/write_vs_null_sink.py [--records 2000000] [--runs 5] [--partitions 8] [--compression lz4]
        [--no-keys] [--profile]   # also: where kwire's time went, summed over the tasks of the timed runs (KWIRE_PROFILE)
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

from _common import broker, parse_args, print_machine, report, spark_session, timed

from pyspark.sql.datasource import DataSource, DataSourceArrowWriter, WriterCommitMessage


class CountOnly(WriterCommitMessage):
    def __init__(self, rows: int) -> None:
        self.rows = rows


class NullArrowWriter(DataSourceArrowWriter):
    """Touches nothing but each Arrow batch's row count; commit (in a Python process of the driver) writes the
    total to the file option `count_file`."""

    def __init__(self, count_file: str) -> None:
        self.count_file = count_file

    def write(self, iterator):
        return CountOnly(sum(batch.num_rows for batch in iterator))

    def commit(self, messages):
        with open(self.count_file, "w", encoding="utf-8") as f:
            f.write(str(sum(m.rows for m in messages)))


class NullSink(DataSource):
    @classmethod
    def name(cls):
        return "null_arrow_sink"

    def writer(self, schema, overwrite):
        return NullArrowWriter(self.options["count_file"])


def print_first_tasks(tasks: list[dict]) -> None:
    """Task seconds of the first task a Python worker ran vs its later ones (worker start, imports, caches)."""
    import statistics

    first = [t["seconds"] for t in tasks if t["task_in_process"] == 1]
    later = [t["seconds"] for t in tasks if t["task_in_process"] > 1]
    if first and later:
        print(f"  kwire task time, first task of a Python worker: median {1000 * statistics.median(first):.1f} ms "
              f"({len(first)} tasks); later tasks: median {1000 * statistics.median(later):.1f} ms ({len(later)})")


def summarize_profile(path: str, first_line: int) -> None:
    """Adds up the per-task phase times kwire wrote to `path` from line `first_line` on."""
    with open(path, encoding="utf-8") as f:
        tasks = [json.loads(line) for line in f][first_line:]
    if not tasks:
        print("  (no profile lines: KWIRE_PROFILE did not reach the Python workers)")
        return
    total = sum(t["seconds"] for t in tasks)
    phases: dict[str, list[float]] = {}
    for t in tasks:
        for name, figures in t["phases"].items():
            entry = phases.setdefault(name, [0.0, 0])
            entry[0] += figures["seconds"]
            entry[1] += figures["calls"]
    print_first_tasks(tasks)
    print(f"\nWhere kwire's write time went: {len(tasks)} tasks, {total:.2f} task-seconds in all "
          "(sender-thread phases overlap the task's own)")
    for name, (seconds, calls) in sorted(phases.items(), key=lambda kv: -kv[1][0]):
        print(f"  {name:<22} {seconds:8.3f} s  {100 * seconds / total:5.1f}%  ({calls} calls)")


def main() -> None:
    argv = list(sys.argv)
    profile, keyed = "--profile" in argv, "--no-keys" not in argv
    sys.argv = [a for a in argv if a not in ("--profile", "--no-keys")]  # the flags _common does not know
    args = parse_args(__doc__, 2_000_000)
    sys.argv = argv
    if profile:  # set before Spark starts, so that its Python workers inherit it
        os.environ["KWIRE_PROFILE"] = tempfile.mkstemp(prefix="kwire-profile-", suffix=".jsonl")[1]
    print_machine()
    from pyspark.sql import functions as F

    from spark_kwire import admin

    with broker(args) as bootstrap:
        spark = spark_session()
        spark.dataSource.register(NullSink)
        pad = "x" * max(0, args.record_size - 12)
        columns = [F.concat(F.lpad(F.col("id").cast("string"), 12, "0"), F.lit(pad)).alias("value")]
        if keyed:
            columns.insert(0, F.col("id").cast("string").alias("key"))
        rows = spark.range(args.records, numPartitions=2).select(*columns).cache()
        rows.count()
        counter = iter(range(10_000))

        def kwire():
            topic = f"bench-null-{next(counter)}"
            admin.create_topic(bootstrap, topic, partitions=args.partitions)
            (rows.write.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("topic", topic)
             .option("kafka.compression.type", args.compression).mode("append").save())
            written = sum(admin.latest_offsets(bootstrap, topic).values())
            assert written == args.records, ("kwire", written)

        count_file = tempfile.mkstemp(prefix="kwire-null-sink-")[1]

        def null_sink():
            with open(count_file, "w", encoding="utf-8"):
                pass
            rows.write.format("null_arrow_sink").option("count_file", count_file).mode("append").save()
            with open(count_file, encoding="utf-8") as f:
                counted = f.read()
            assert counted == str(args.records), ("null sink", counted)

        kwire(), null_sink()  # warm-up, untimed: Python workers, numba caches, connections
        first_line = 0
        if profile:
            with open(os.environ["KWIRE_PROFILE"], encoding="utf-8") as f:
                first_line = sum(1 for _ in f)
        seconds = {"null Python sink": [], "kwire": []}
        for _ in range(args.runs):
            seconds["null Python sink"].append(timed(null_sink))
            seconds["kwire"].append(timed(kwire))
        report(f"Batch write of {args.records:,} {'keyed ' if keyed else ''}rows x {args.record_size} B, "
               f"{args.partitions} partitions, {args.compression}, local[2]: kwire vs a null Python Arrow sink",
               args.records, seconds, baseline="null Python sink")
        if profile:
            summarize_profile(os.environ["KWIRE_PROFILE"], first_line)
        spark.stop()


if __name__ == "__main__":
    main()
