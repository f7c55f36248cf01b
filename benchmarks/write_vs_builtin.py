"""Write shapes of issue #21, kwire vs Spark's built-in `kafka` sink: small writes (a streaming micro-batch's
fixed cost) and 400k-row writes into 1, 64 and 512 partitions.

Each shape writes the same cached DataFrame (rows of 100 B values, no key unless --keyed) through both sinks,
alternating, in one Spark session (local[2]), each sink into its own topic created beforehand (as a stream
writes to an existing topic again and again). Both are warmed by one untimed write per shape; every write must
add exactly its rows to the topic (checked). Prints per-shape medians (ms per write and records/s) and the ratio.
Both sinks run with their defaults; --kafka-option k=v (repeatable) is passed to both.

    python benchmarks/write_vs_builtin.py [--shapes 1000x1,400000x1,400000x64,400000x512] [--runs 7]
        [--tasks 2] [--keyed] [--kafka-option linger.ms=5] [--profile]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

from _common import broker, print_machine, spark_session


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shapes", default="1000x1,400000x1,400000x64,400000x512",
                        help="comma-separated ROWSxPARTITIONS")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--tasks", type=int, default=2, help="Spark partitions of the DataFrame written")
    parser.add_argument("--record-size", type=int, default=100)
    parser.add_argument("--keyed", action="store_true")
    parser.add_argument("--kafka-option", action="append", default=[], metavar="K=V")
    parser.add_argument("--profile", action="store_true", help="kwire's per-phase times (KWIRE_PROFILE)")
    parser.add_argument("--bootstrap", help="an existing cluster; default: start a local broker")
    return parser.parse_args()


def main() -> None:
    args = parse()
    if args.profile:  # before Spark starts, so that its Python workers inherit it
        os.environ["KWIRE_PROFILE"] = tempfile.mkstemp(prefix="kwire-profile-", suffix=".jsonl")[1]
    print_machine()
    from pyspark.sql import functions as F

    from spark_kwire import admin

    shapes = [tuple(int(x) for x in shape.split("x")) for shape in args.shapes.split(",")]
    options = dict(option.split("=", 1) for option in args.kafka_option)
    with broker(args) as bootstrap:
        spark = spark_session()
        pad = "x" * max(0, args.record_size - 12)
        summary = []
        for records, partitions in shapes:
            columns = [F.concat(F.lpad(F.col("id").cast("string"), 12, "0"), F.lit(pad)).alias("value")]
            if args.keyed:
                columns.insert(0, F.col("id").cast("string").alias("key"))
            rows = spark.range(records, numPartitions=args.tasks).select(*columns).cache()
            rows.count()
            topics = {}
            for fmt in ("kafka", "kwire"):
                topics[fmt] = f"bench-shape-{fmt}-{records}x{partitions}-{time.time_ns()}"
                admin.create_topic(bootstrap, topics[fmt], partitions=partitions)

            def write(fmt: str) -> float:
                before = sum(admin.latest_offsets(bootstrap, topics[fmt]).values())
                writer = rows.write.format(fmt).option("kafka.bootstrap.servers", bootstrap).option("topic", topics[fmt])
                for k, v in options.items():
                    writer = writer.option(f"kafka.{k}", v)
                started = time.perf_counter()
                writer.mode("append").save()
                seconds = time.perf_counter() - started
                after = sum(admin.latest_offsets(bootstrap, topics[fmt]).values())
                assert after - before == records, (fmt, after - before, records)
                return seconds

            warm_from = _profile_lines()
            write("kafka"), write("kwire")  # warm-up, untimed
            profile_from = _profile_lines()
            seconds = {"kafka": [], "kwire": []}
            for _ in range(args.runs):
                seconds["kafka"].append(write("kafka"))
                seconds["kwire"].append(write("kwire"))
            medians = {fmt: statistics.median(s) for fmt, s in seconds.items()}
            ratio = medians["kafka"] / medians["kwire"]
            print(f"\n{records:,} rows x {args.record_size} B into {partitions} partition(s), {args.tasks} tasks, "
                  f"{'keyed' if args.keyed else 'no key'}{', ' + str(options) if options else ''}")
            for fmt, label in (("kafka", "Spark built-in"), ("kwire", "kwire")):
                runs = ", ".join(f"{1000 * s:.0f}" for s in seconds[fmt])
                print(f"  {label:<15} median {1000 * medians[fmt]:8.1f} ms  {records / medians[fmt]:>10,.0f} rec/s"
                      f"   (runs, ms: {runs})")
            print(f"  ratio kwire / built-in (throughput): {ratio:.2f}x")
            summary.append((records, partitions, medians, ratio))
            if args.profile:
                import json

                from write_vs_null_sink import print_first_tasks, summarize_profile

                with open(os.environ["KWIRE_PROFILE"], encoding="utf-8") as f:
                    print_first_tasks([json.loads(line) for line in f][warm_from:])
                summarize_profile(os.environ["KWIRE_PROFILE"], profile_from)
            rows.unpersist()
        print("\nsummary: shape, built-in ms, kwire ms, ratio")
        for records, partitions, medians, ratio in summary:
            print(f"  {records}x{partitions}: {1000 * medians['kafka']:.1f} ms, {1000 * medians['kwire']:.1f} ms, "
                  f"{ratio:.2f}x")
        spark.stop()


def _profile_lines() -> int:
    path = os.environ.get("KWIRE_PROFILE")
    if not path:
        return 0
    with open(path, encoding="utf-8") as f:
        return sum(1 for _ in f)


if __name__ == "__main__":
    main()
