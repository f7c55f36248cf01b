"""`make demo`: a local Apache Kafka broker, a kwire write, a batch read and a streaming read, with figures.

Run with `python -m harness.demo [--rows N] [--bootstrap host:port]`. Without --bootstrap it starts
a broker from the fetched jars (the embedded default) and stops it at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=200_000, help="rows to write (default 200000)")
    parser.add_argument("--bootstrap", help="use this Kafka cluster instead of starting a local broker")
    args = parser.parse_args(argv)

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession, functions as F

    from spark_kwire import admin
    from harness import KafkaCluster

    with contextlib.ExitStack() as stack:
        if args.bootstrap:
            bootstrap = args.bootstrap
            print(f"Using the Kafka cluster at {bootstrap}")
        else:
            started = time.monotonic()
            cluster = stack.enter_context(KafkaCluster(1))
            bootstrap = cluster.bootstrap_servers
            print(f"Started a local Apache Kafka broker at {bootstrap} in {time.monotonic() - started:.1f}s")

        topic = f"kwire-demo-{int(time.time())}"
        admin.create_topic(bootstrap, topic, partitions=4)
        spark = (SparkSession.builder.master("local[2]").appName("kwire-demo")
                 .config("spark.ui.enabled", "false").config("spark.sql.session.timeZone", "UTC").getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        stack.callback(spark.stop)

        df = spark.range(args.rows).select(
            F.col("id").cast("string").alias("key"),
            F.to_json(F.struct((F.col("id") * 7 % 1000).alias("amount"), F.lit("EUR").alias("currency"))).alias("value"),
        )
        started = time.monotonic()
        df.write.format("kwire").mode("append").option("kafka.bootstrap.servers", bootstrap).option("topic", topic).save()
        write_s = time.monotonic() - started

        started = time.monotonic()
        batch = (spark.read.format("kwire").option("kafka.bootstrap.servers", bootstrap)
                 .option("subscribe", topic).load())
        read_count = batch.count()
        read_s = time.monotonic() - started
        print("\nFirst rows, read back in batch:")
        batch.selectExpr("CAST(key AS STRING) AS key", "CAST(value AS STRING) AS value", "partition", "offset") \
            .orderBy("partition", "offset").show(5, truncate=False)

        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="kwire-demo-") as checkpoint:
            query = (spark.readStream.format("kwire").option("kafka.bootstrap.servers", bootstrap)
                     .option("subscribe", topic).option("startingOffsets", "earliest")
                     .option("maxOffsetsPerTrigger", str(max(1, args.rows // 4)))
                     .load().writeStream.format("memory").queryName("kwire_demo_stream")
                     .option("checkpointLocation", checkpoint).trigger(availableNow=True).start())
            query.awaitTermination(300)
            batches = len(query.recentProgress)
            streamed = spark.table("kwire_demo_stream").count()
        stream_s = time.monotonic() - started

        print("Summary (wall times include starting Spark's Python workers; for throughput against Spark's own\n"
              "connector run `make bench`, see docs/performance.md)")
        print(f"  written : {args.rows:>9,} rows in {write_s:6.2f}s")
        print(f"  read    : {read_count:>9,} rows in {read_s:6.2f}s")
        print(f"  streamed: {streamed:>9,} rows in {stream_s:6.2f}s  ({batches} micro-batches, Trigger.AvailableNow)")
        ok = read_count == args.rows and streamed == args.rows
        print("  result  : every row came back" if ok else "  result  : MISMATCH")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
