"""Batch write throughput: kwire vs Spark's built-in `kafka` sink, same rows, same Spark, same run.

Writes N rows of 100 B (keyed) from spark.range through both sinks into fresh 8-partition topics, alternating,
both warmed by one untimed write first, and prints records/s and the ratio. Every write must leave the same
number of records in each partition (asserted). Then the same rows, read back as a file stream, through kwire's
stream sink (writeStream, one AvailableNow run) against kwire's batch sink: on Spark 4.0, which has no Arrow
stream writer class, this is the stream-writer path that differs.
    python benchmarks/write_throughput.py [--records 5000000] [--runs 3] [--bootstrap host:port]
"""

from __future__ import annotations

import tempfile

import uuid

from _common import broker, parse_args, print_machine, report, spark_session, timed


def main() -> None:
    args = parse_args(__doc__, 5_000_000)
    print_machine()
    from pyspark.sql import functions as F

    from spark_kwire import admin

    with broker(args) as bootstrap:
        spark = spark_session()
        pad = "x" * max(0, args.record_size - 12)
        rows = spark.range(args.records, numPartitions=2).select(
            F.col("id").cast("string").alias("key"),
            F.concat(F.lpad(F.col("id").cast("string"), 12, "0"), F.lit(pad)).alias("value"),
        ).cache()
        rows.count()
        counter = iter(range(1000))
        run_id = uuid.uuid4().hex[:6]

        def run(fmt: str):
            topic = f"bench-write-{fmt}-{run_id}-{next(counter)}"  # brokers may be shared between runs
            admin.create_topic(bootstrap, topic, partitions=args.partitions)
            (rows.write.format(fmt).option("kafka.bootstrap.servers", bootstrap).option("topic", topic)
             .option("kafka.compression.type", args.compression).option("kafka.linger.ms", "20")
             .option("kafka.batch.size", "1048576").mode("append").save())
            latest = admin.latest_offsets(bootstrap, topic)
            assert sum(latest.values()) == args.records, (fmt, sum(latest.values()))
            # Keyed rows land in the same partitions whichever sink writes them.
            layouts.setdefault("first", latest)
            assert latest == layouts["first"], (fmt, latest, layouts["first"])

        layouts: dict = {}
        run("kwire"), run("kafka")  # warm-up, untimed: JIT, numba cache, Python workers, producers
        seconds = {"kafka (Spark built-in)": [], "kwire": []}
        for _ in range(args.runs):
            seconds["kafka (Spark built-in)"].append(timed(lambda: run("kafka")))
            seconds["kwire"].append(timed(lambda: run("kwire")))
        report(f"Batch write of {args.records:,} keyed rows x {args.record_size} B into {args.partitions} partitions, "
               f"{args.compression}, local[2]", args.records, seconds, baseline="kafka (Spark built-in)")

        folder = tempfile.mkdtemp(prefix="kwire-bench-stream-")
        rows.write.parquet(f"{folder}/rows")

        def run_stream():
            topic = f"bench-write-stream-{run_id}-{next(counter)}"
            admin.create_topic(bootstrap, topic, partitions=args.partitions)
            query = (spark.readStream.schema(rows.schema).parquet(f"{folder}/rows").writeStream.format("kwire")
                     .option("kafka.bootstrap.servers", bootstrap).option("topic", topic)
                     .option("kafka.compression.type", args.compression).option("kafka.linger.ms", "20")
                     .option("kafka.batch.size", "1048576").option("checkpointLocation", f"{folder}/cp-{topic}")
                     .trigger(availableNow=True).start())
            query.awaitTermination()
            assert query.exception() is None, query.exception()
            latest = admin.latest_offsets(bootstrap, topic)
            assert sum(latest.values()) == args.records, ("stream", sum(latest.values()))

        streamed = {"kwire batch write": [], "kwire stream write": []}
        for _ in range(args.runs):
            streamed["kwire batch write"].append(timed(lambda: run("kwire")))
            streamed["kwire stream write"].append(timed(run_stream))
        report(f"Stream write (writeStream, AvailableNow from parquet files) vs batch write, same rows, "
               f"{args.compression}", args.records, streamed, baseline="kwire batch write",
               contender="kwire stream write")
        spark.stop()


if __name__ == "__main__":
    main()
