"""kwire's batch write against a null Python sink: how close the write comes to what Spark's Python hand-off allows.

The null sink is a `DataSourceArrowWriter` that only counts the rows Spark hands it (the driver checks the
count). Both write the same cached DataFrame (N rows, 100 B values, 12 B keys unless --no-keys) in the same
Spark session, alternating, each warmed by one untimed write first; kwire writes into a fresh topic each time
and every record is checked to be in Kafka. Prints records/s of both (medians) and the ratio kwire / null sink.

    python benchmarks/write_vs_null_sink.py [--records 2000000] [--runs 5] [--partitions 8] [--compression lz4]
        [--no-keys] [--profile]   # also: where kwire's time went, summed over the tasks of the timed runs (KWIRE_PROFILE)

It also prints the CPU seconds each side's runs used, per process: Spark's JVM (the driver, which runs the
tasks in local mode), Spark's Python workers and, with the local broker, the broker's JVM. On a machine
whose cores the broker shares, a write is bound by their sum; the last line gives the ratio the write could
reach if kwire's Python work cost nothing (the null sink's CPU against the null sink's plus the broker's).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile

from _common import broker, parse_args, print_machine, report, spark_session, timed
from harness.processes import descendants_running, spark_python_workers
from null_sink import NullSink


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


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (its threads included), 0 when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class CpuAccount:
    """CPU seconds used during timed runs by Spark's JVM, Spark's Python workers and the local broker."""

    def __init__(self, spark_jvm_pid: int) -> None:
        self.spark_jvm_pid = spark_jvm_pid
        self.runs: dict[str, list[dict[str, float]]] = {}

    def _sample(self) -> dict[int, tuple[str, float]]:
        pids = {self.spark_jvm_pid: "Spark JVM"}
        pids.update({pid: "Spark Python workers" for pid in spark_python_workers(os.getpid())})
        pids.update({pid: "broker JVM" for pid in descendants_running(os.getpid(), b"kafka.Kafka")})
        return {pid: (what, cpu_seconds(pid)) for pid, what in pids.items()}

    def timed(self, side: str, fn) -> float:
        before = self._sample()
        seconds = timed(fn)
        after = self._sample()
        used: dict[str, float] = {}
        for pid, (what, cpu) in after.items():
            used[what] = used.get(what, 0.0) + cpu - before.get(pid, (what, 0.0))[1]
        self.runs.setdefault(side, []).append(used)
        return seconds

    def print(self, baseline: str, contender: str) -> None:
        print("\nCPU seconds per run (medians), by process:")
        medians = {}
        for side, runs in self.runs.items():
            kinds = sorted({k for r in runs for k in r})
            medians[side] = {k: statistics.median(r.get(k, 0.0) for r in runs) for k in kinds}
            parts = ", ".join(f"{k} {v:.2f}" for k, v in medians[side].items())
            print(f"  {side:<24} {sum(medians[side].values()):.2f} in all: {parts}")
        base, broker_cpu = sum(medians[baseline].values()), medians[contender].get("broker JVM", 0.0)
        if broker_cpu:
            print(f"  the broker alone used {broker_cpu:.2f} CPU s per {contender} run: with the cores shared, "
                  f"{contender} could reach at most {base / (base + broker_cpu):.2f}x of the null sink if its own "
                  f"Python work cost nothing")


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
        # Topics are made before the runs: creating one is not part of a write (nor of its CPU seconds).
        names = [f"bench-null-{os.getpid()}-{i}" for i in range(args.runs + 1)]
        for topic in names:
            admin.create_topic(bootstrap, topic, partitions=args.partitions)
        topics = iter(names)

        def kwire():
            topic = next(topics)
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
        account = CpuAccount(int(spark.sparkContext._jvm.ProcessHandle.current().pid()))
        for _ in range(args.runs):
            seconds["null Python sink"].append(account.timed("null Python sink", null_sink))
            seconds["kwire"].append(account.timed("kwire", kwire))
        report(f"Batch write of {args.records:,} {'keyed ' if keyed else ''}rows x {args.record_size} B, "
               f"{args.partitions} partitions, {args.compression}, local[2]: kwire vs a null Python Arrow sink",
               args.records, seconds, baseline="null Python sink")
        account.print("null Python sink", "kwire")
        if profile:
            summarize_profile(os.environ["KWIRE_PROFILE"], first_line)
        spark.stop()


if __name__ == "__main__":
    main()
