"""A Spark driver for the exactly-once crash test: a kwire stream into a kwire exactly-once sink (Kafka to
Kafka), run as a subprocess.

Prints ``STARTED`` once the query runs and ``BATCH <id> rows=<n>`` for each micro-batch that completed. With
``--available-now`` it drains what the source holds and exits 0; otherwise it runs until SIGKILLed (the test
does that at random moments and starts it again on the same checkpoint).
"""

from __future__ import annotations

import argparse
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--sink", required=True)
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--trigger-ms", type=int, default=300)
    ap.add_argument("--available-now", action="store_true")
    ap.add_argument("--max-offsets", type=int, default=3000)
    args = ap.parse_args()

    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]").appName("kwire-eos-driver-crash")
             .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
             .config("spark.driver.memory", "1g")
             .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    writer = (spark.readStream.format("kwire").option("kafka.bootstrap.servers", args.bootstrap)
              .option("subscribe", args.source).option("startingOffsets", "earliest")
              .option("maxOffsetsPerTrigger", str(args.max_offsets)).load()
              .selectExpr("key", "value", "array(named_struct('key', 'from', 'value', "
                          "cast(concat(partition, ':', offset) as binary))) as headers")
              .writeStream.format("kwire").option("kafka.bootstrap.servers", args.bootstrap)
              .option("topic", args.sink).option("deliveryGuarantee", "exactly-once")
              .option("checkpointLocation", args.checkpoint))
    if args.available_now:
        query = writer.trigger(availableNow=True).start()
    else:
        query = writer.trigger(processingTime=f"{args.trigger_ms} milliseconds").start()
    print("STARTED", flush=True)
    seen = -1
    while query.isActive:
        for progress in query.recentProgress:
            if progress["batchId"] > seen:
                seen = progress["batchId"]
                print(f"BATCH {seen} rows={progress['numInputRows']}", flush=True)
        time.sleep(0.1)
    for progress in query.recentProgress:
        if progress["batchId"] > seen:
            seen = progress["batchId"]
            print(f"BATCH {seen} rows={progress['numInputRows']}", flush=True)
    error = query.exception()
    if error is not None:
        print(f"FAILED {error}", flush=True)
        return 1
    print("DRAINED", flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
