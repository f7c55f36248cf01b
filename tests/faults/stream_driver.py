"""A Spark driver for the crash tests, run as a subprocess: a kwire stream from ``--topic`` into a parquet folder
(``--parquet-out``) or into a kwire exactly-once sink (``--sink-topic``, Kafka to Kafka, each record with a
``from`` header naming its source partition and offset).

Prints ``STARTED`` once the query runs and ``BATCH <id> rows=<n>`` for each micro-batch that completed. It stops
the query and exits 0 when ``--stop-file`` appears, or, with ``--available-now``, once it has drained what the
source holds (then it prints ``DRAINED``). The tests SIGKILL it (with its JVM) at random moments and start it
again on the same checkpoint.
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def arguments(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic", required=True, help="the topic the stream reads")
    sink = ap.add_mutually_exclusive_group(required=True)
    sink.add_argument("--parquet-out", help="folder of the parquet file sink")
    sink.add_argument("--sink-topic", help="topic of the kwire exactly-once sink")
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--stop-file", help="stop the query and exit 0 when this file appears")
    ap.add_argument("--trigger-ms", type=int, default=500)
    ap.add_argument("--available-now", action="store_true")
    ap.add_argument("--max-offsets", type=int, default=20000, help="maxOffsetsPerTrigger")
    return ap.parse_args(argv)


def start_query(spark, args: argparse.Namespace):
    stream = (spark.readStream.format("kwire").option("kafka.bootstrap.servers", args.bootstrap)
              .option("subscribe", args.topic).option("startingOffsets", "earliest")
              .option("maxOffsetsPerTrigger", str(args.max_offsets)).load())
    if args.parquet_out:
        writer = (stream.select("partition", "offset", "value").writeStream.format("parquet")
                  .option("path", args.parquet_out))
    else:
        writer = (stream.selectExpr("key", "value", "array(named_struct('key', 'from', 'value', "
                                    "cast(concat(partition, ':', offset) as binary))) as headers")
                  .writeStream.format("kwire").option("kafka.bootstrap.servers", args.bootstrap)
                  .option("topic", args.sink_topic).option("deliveryGuarantee", "exactly-once"))
    writer = writer.option("checkpointLocation", args.checkpoint)
    if args.available_now:
        return writer.trigger(availableNow=True).start()
    return writer.trigger(processingTime=f"{args.trigger_ms} milliseconds").start()


def main() -> int:
    args = arguments()
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]").appName("kwire-driver-crash")
             .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
             .config("spark.driver.memory", "1g")
             # C1 only: a JVM that is started again and again starts ~40% faster (the work is in Python)
             .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    query = start_query(spark, args)
    print("STARTED", flush=True)
    seen = -1

    def report_batches() -> None:
        nonlocal seen
        for progress in query.recentProgress:
            if progress["batchId"] > seen:
                seen = progress["batchId"]
                print(f"BATCH {seen} rows={progress['numInputRows']}", flush=True)

    while query.isActive:
        report_batches()
        if args.stop_file and os.path.exists(args.stop_file):
            query.stop()
            break
        time.sleep(0.1)
    report_batches()
    error = query.exception()
    if error is not None:
        print(f"FAILED {error}", flush=True)
        return 1
    if args.available_now:
        print("DRAINED", flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
