"""First query vs second: what a fresh environment pays for compiling kwire's record kernels.

Produces N records into an 8-partition topic, then starts two fresh Spark sessions in turn (each a new Python
process with new Python workers): the first with an empty numba cache (a new ``NUMBA_CACHE_DIR``, as after
``pip install`` on a new cluster), the second with the cache the first one wrote. Each session warms the JVM
with a query that involves neither connector, then times a batch read (``count(*)``, ``sum(length(value))``)
and a batch write of the same rows, twice each, through kwire first and then Spark's built-in ``kafka``
connector (which compiles nothing), and checks the results are equal.
    python benchmarks/first_query.py [--records 200000] [--bootstrap host:port]
The numba share of kwire's first query is its "empty cache" time minus its "cache written" time. Each kwire
read also reports its slowest task and the first task of each Python worker (from KWIRE_STATS_DIR, written by
kwire's reader), which isolate what the workers spend from what Spark spends around them.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import tempfile

from _common import REPO, broker, parse_args, spark_session, timed


def produce(bootstrap: str, topic: str, args) -> None:
    from harness import run_java_tool
    from spark_kwire import admin

    admin.create_topic(bootstrap, topic, partitions=args.partitions)
    run_java_tool(
        "org.apache.kafka.tools.ProducerPerformance", "--topic", topic, "--num-records", str(args.records),
        "--record-size", str(args.record_size), "--throughput", "-1", "--producer-props",
        f"bootstrap.servers={bootstrap}", f"compression.type={args.compression}", "batch.size=1048576",
        "linger.ms=20", "acks=1", timeout=1800,
    )


def child(bootstrap: str, topic: str, records: int, record_size: int, partitions: int, tag: str) -> dict:
    """One fresh Spark session: JVM warm-up, then reads and writes through both connectors."""
    from spark_kwire import admin

    spark = spark_session()
    spark.range(100_000, numPartitions=2).selectExpr("sum(id)").collect()  # JVM warm-up, no connector involved
    expected = (records, records * record_size)

    def read(fmt: str):
        row = (spark.read.format(fmt).option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
               .load().selectExpr("count(*) AS n", "sum(length(value)) AS bytes").collect()[0])
        assert (row.n, row.bytes) == expected, (fmt, row)

    rows = spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic) \
        .load().selectExpr("CAST(offset AS STRING) AS key", "value").cache()
    rows.count()
    counter = iter(range(1000))

    def write(fmt: str):
        out = f"{topic}-{tag}-{fmt}-{next(counter)}"
        admin.create_topic(bootstrap, out, partitions=partitions)
        rows.write.format(fmt).option("kafka.bootstrap.servers", bootstrap).option("topic", out).mode("append").save()
        assert sum(admin.latest_offsets(bootstrap, out).values()) == records, (fmt, out)

    def task_seconds() -> list[list[float]]:
        """Per Python worker, the seconds of each kwire read task since the last call (in order)."""
        workers = []
        for path in sorted(glob.glob(os.path.join(os.environ["KWIRE_STATS_DIR"], "*.jsonl"))):
            with open(path) as f:
                workers.append([json.loads(line)["seconds"] for line in f])
            os.remove(path)
        return workers

    times, tasks = {}, {}
    for what, fn in (("read", read), ("write", write)):
        for fmt in ("kwire", "kafka"):
            times[f"{what} {fmt}"] = []
            for run in ("first", "second"):
                times[f"{what} {fmt}"].append(timed(lambda: fn(fmt)))
                if what == "read" and fmt == "kwire":
                    tasks[run] = task_seconds()
    spark.stop()
    return {"times": times, "tasks": tasks}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        bootstrap, topic, records, record_size, partitions, tag = sys.argv[2:8]
        print(json.dumps(child(bootstrap, topic, int(records), int(record_size), int(partitions), tag)))
        return
    args = parse_args(__doc__, 200_000)
    with broker(args) as bootstrap, tempfile.TemporaryDirectory() as cache:
        topic = f"bench-first-{args.records}-{args.partitions}-{args.compression}-{os.getpid()}"
        produce(bootstrap, topic, args)
        print(f"{args.records:,} records x {args.record_size} B, {args.partitions} partitions, {args.compression}, "
              f"local[2]; seconds of each query, first and second in the same session")
        for tag in ("empty", "written"):
            stats = tempfile.mkdtemp()
            env = dict(os.environ, NUMBA_CACHE_DIR=cache, KWIRE_STATS_DIR=stats)
            out = subprocess.run(
                [sys.executable, __file__, "--child", bootstrap, topic, str(args.records), str(args.record_size),
                 str(args.partitions), tag], env=env, cwd=REPO, capture_output=True, text=True)
            if out.returncode:
                sys.exit(f"child failed:\n{out.stderr[-4000:]}")
            result = json.loads(out.stdout.strip().splitlines()[-1])
            times = result["times"]
            print(f"\nnumba cache {tag} (load average {os.getloadavg()[0]:.1f})")
            for name, (first, second) in times.items():
                print(f"  {name:<12} first {first:6.2f} s   second {second:6.2f} s   first - second {first - second:+6.2f} s")
            for what in ("read", "write"):
                extra = times[f"{what} kwire"][0] - times[f"{what} kafka"][0]
                print(f"  first {what}: kwire - kafka {extra:+6.2f} s")
            for run, workers in result["tasks"].items():
                firsts = ", ".join(f"{w[0]:.2f}" for w in workers if w)
                slowest = max((max(w) for w in workers if w), default=0.0)
                print(f"  {run} kwire read: first task of each Python worker {firsts} s; slowest task {slowest:.2f} s")


if __name__ == "__main__":
    main()
