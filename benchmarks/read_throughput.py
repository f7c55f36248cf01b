"""Batch read throughput: kwire vs Spark's built-in `kafka` source, same topic, same Spark, same run.

Writes (once per run) N records of 100 B into an 8-partition topic with the Java ProducerPerformance tool,
then runs count(*) and sum(length(value)) through both sources, alternating, and prints records/s and the ratio.
    python benchmarks/read_throughput.py [--records 5000000] [--runs 3] [--bootstrap host:port]
"""

from __future__ import annotations

import uuid

from _common import broker, parse_args, print_machine, report, spark_session, timed

from harness import run_java_tool


def produce(bootstrap: str, topic: str, args) -> None:
    from spark_kwire import admin

    admin.create_topic(bootstrap, topic, partitions=args.partitions)
    run_java_tool(
        "org.apache.kafka.tools.ProducerPerformance", "--topic", topic, "--num-records", str(args.records),
        "--record-size", str(args.record_size), "--throughput", "-1", "--producer-props",
        f"bootstrap.servers={bootstrap}", f"compression.type={args.compression}", "batch.size=1048576",
        "linger.ms=20", "acks=1", timeout=1800,
    )


def main() -> None:
    args = parse_args(__doc__, 5_000_000)
    print_machine()
    with broker(args) as bootstrap:
        topic = f"bench-read-{args.records}-{args.partitions}-{args.compression}-{uuid.uuid4().hex[:6]}"  # brokers may be shared
        produce(bootstrap, topic, args)
        spark = spark_session()
        expected = args.records * args.record_size

        def run(fmt: str):
            row = (spark.read.format(fmt).option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
                   .load().selectExpr("count(*) AS n", "sum(length(value)) AS bytes").collect()[0])
            assert (row.n, row.bytes) == (args.records, expected), (fmt, row)

        run("kwire"), run("kafka")  # warm-up: JIT, numba cache, Python workers
        seconds = {"kafka (Spark built-in)": [], "kwire": []}
        for _ in range(args.runs):
            seconds["kafka (Spark built-in)"].append(timed(lambda: run("kafka")))
            seconds["kwire"].append(timed(lambda: run("kwire")))
        report(f"Batch read of {args.records:,} records x {args.record_size} B, {args.partitions} partitions, "
               f"{args.compression}, local[2]", args.records, seconds, baseline="kafka (Spark built-in)")
        spark.stop()


if __name__ == "__main__":
    main()
