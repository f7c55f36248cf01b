"""A Spark driver for the executor-kill tests: connects to a standalone master and reads or writes with kwire.

``read``: reads a whole topic (small tasks, maxRecordsPerPartition) and saves (partition, offset, value) as
parquet. ``write``: writes ``--rows`` keyed rows (key = value suffix = row id) in ``--tasks`` tasks to
``--write-topic`` (default ``--topic``). ``both``: read, print ``PHASE write``, then write (one driver start
for both). Prints ``RESULT {json}`` at the end, with the task attempts of each phase that failed (the
executor kills must interrupt running tasks). Executors write kwire's read statistics to ``--stats-dir``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def failed_task_attempts(spark, group: str) -> int:
    """Task attempts of the jobs of `group` that failed (an executor lost mid-task counts: ExecutorLostFailure)."""
    tracker = spark.sparkContext.statusTracker()
    failed = 0
    for job_id in tracker.getJobIdsForGroup(group):
        job = tracker.getJobInfo(job_id)
        for stage_id in (job.stageIds if job is not None else ()):
            stage = tracker.getStageInfo(stage_id)
            failed += stage.numFailedTasks if stage is not None else 0
    return failed


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["read", "write", "both"])
    ap.add_argument("--master", required=True)
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--write-topic")
    ap.add_argument("--stats-dir", required=True)
    ap.add_argument("--out")
    ap.add_argument("--max-records", type=int, default=10_000)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--tasks", type=int, default=8)
    args = ap.parse_args()

    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master(args.master).appName(f"kwire-executor-kill-{args.mode}")
             .config("spark.ui.enabled", "false")
             .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.executor.cores", "1").config("spark.executor.memory", "768m")
             .config("spark.cores.max", "2").config("spark.task.maxFailures", "4")
             .config("spark.pyspark.python", sys.executable)
             .config("spark.executorEnv.KWIRE_STATS_DIR", args.stats_dir)
             .config("spark.sql.shuffle.partitions", "2")
             # C1 only: these short-lived JVMs start ~40% faster (the work is in Python)
             .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1")
             .config("spark.executor.extraJavaOptions", "-XX:TieredStopAtLevel=1")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    result = {"mode": args.mode}
    if args.mode in ("read", "both"):
        spark.sparkContext.setJobGroup("read", "read phase")
        started = time.monotonic()
        df = (spark.read.format("kwire").option("kafka.bootstrap.servers", args.bootstrap)
              .option("subscribe", args.topic).option("startingOffsets", "earliest")
              .option("endingOffsets", "latest").option("maxRecordsPerPartition", str(args.max_records)).load()
              .select("partition", "offset", "value"))
        df.write.mode("overwrite").parquet(args.out)
        result["read_seconds"] = round(time.monotonic() - started, 2)
        result["read_failed_tasks"] = failed_task_attempts(spark, "read")
    if args.mode in ("write", "both"):
        spark.sparkContext.setJobGroup("write", "write phase")
        print("PHASE write", flush=True)
        started = time.monotonic()
        df = spark.range(args.rows, numPartitions=args.tasks).selectExpr(
            "cast(id as string) as key", "concat('v', cast(id as string)) as value")
        (df.write.format("kwire").option("kafka.bootstrap.servers", args.bootstrap)
         .option("topic", args.write_topic or args.topic).mode("append").save())
        result["write_seconds"] = round(time.monotonic() - started, 2)
        result["write_failed_tasks"] = failed_task_attempts(spark, "write")
    print("RESULT " + json.dumps(result), flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
