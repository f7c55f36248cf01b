"""A Spark driver for the crash tests: a kwire stream into a parquet file sink, run as a subprocess.

Prints ``STARTED`` once the query runs and ``BATCH <id> rows=<n>`` for each micro-batch that completed;
stops the query and exits 0 when ``--stop-file`` appears. The tests SIGKILL it (with its JVM) at random
moments and start it again on the same checkpoint.
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--stop-file", required=True)
    ap.add_argument("--trigger-ms", type=int, default=500)
    args = ap.parse_args()

    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]").appName("kwire-driver-crash")
             .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
             .config("spark.driver.memory", "1g")
             # C1 only: a JVM that is started again and again starts ~40% faster (the work is in Python)
             .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    query = (spark.readStream.format("kwire").option("kafka.bootstrap.servers", args.bootstrap)
             .option("subscribe", args.topic).option("startingOffsets", "earliest")
             .option("maxOffsetsPerTrigger", "20000").load()
             .select("partition", "offset", "value")
             .writeStream.format("parquet").option("path", args.out).option("checkpointLocation", args.checkpoint)
             .trigger(processingTime=f"{args.trigger_ms} milliseconds").start())
    print("STARTED", flush=True)
    seen = -1
    while query.isActive:
        for progress in query.recentProgress:
            if progress["batchId"] > seen:
                seen = progress["batchId"]
                print(f"BATCH {seen} rows={progress['numInputRows']}", flush=True)
        if os.path.exists(args.stop_file):
            query.stop()
            break
        time.sleep(0.1)
    error = query.exception()
    if error is not None:
        print(f"FAILED {error}", flush=True)
        return 1
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
