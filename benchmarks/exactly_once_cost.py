"""What deliveryGuarantee=exactly-once costs: kwire's batch sink at-least-once vs exactly-once, same rows,
same Spark, same run.

Writes N rows of 100 B (keyed) from spark.range through both modes into fresh 8-partition topics,
alternating, both warmed by one untimed write first, and prints records/s and the ratio. Every write must
leave the same records in each partition (asserted: an exactly-once partition holds the at-least-once count plus
one commit marker per task, and, moments after the job, its last stable offset equals its log end: no
transaction was left open).
    python benchmarks/exactly_once_cost.py [--records 2000000] [--runs 5] [--bootstrap host:port]
"""

from __future__ import annotations

import time

from _common import broker, parse_args, print_machine, report, spark_session, timed


TASKS = 2


def main() -> None:
    args = parse_args(__doc__, 2_000_000)
    print_machine()
    from pyspark.sql import functions as F

    from spark_kwire import admin
    from spark_kwire.client import KafkaClient, list_offsets

    with broker(args) as bootstrap:
        spark = spark_session()
        pad = "x" * max(0, args.record_size - 12)
        rows = spark.range(args.records, numPartitions=TASKS).select(
            F.col("id").cast("string").alias("key"),
            F.concat(F.lpad(F.col("id").cast("string"), 12, "0"), F.lit(pad)).alias("value"),
        ).cache()
        rows.count()
        counter = iter(range(1000))
        layouts: dict = {}

        def run(guarantee: str):
            topic = f"bench-eos-{guarantee}-{next(counter)}"
            admin.create_topic(bootstrap, topic, partitions=args.partitions)
            (rows.write.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("topic", topic)
             .option("kafka.compression.type", args.compression).option("kafka.batch.size", "1048576")
             .option("deliveryGuarantee", guarantee).mode("append").save())
            latest = admin.latest_offsets(bootstrap, topic)
            if guarantee == "exactly-once":
                # EndTxn returns once the coordinator logged the decision; it writes the markers just after, so
                # the last stable offset reaches the log end a moment later (untimed here, checked afterwards)
                checks.append((topic, latest))
                # each of the TASKS tasks wrote to every partition, and each of its transactions ends there
                # with one commit marker
                latest = {p: off - TASKS for p, off in latest.items()}
            assert sum(latest.values()) == args.records, (guarantee, sum(latest.values()))
            layouts.setdefault("first", latest)
            assert latest == layouts["first"], (guarantee, latest, layouts["first"])

        checks: list = []
        run("at-least-once"), run("exactly-once")  # warm-up, untimed
        seconds = {"at-least-once": [], "exactly-once": []}
        for _ in range(args.runs):
            seconds["at-least-once"].append(timed(lambda: run("at-least-once")))
            seconds["exactly-once"].append(timed(lambda: run("exactly-once")))
        time.sleep(5)
        with KafkaClient({"bootstrap.servers": bootstrap}) as client:
            for topic, latest in checks:
                stable = list_offsets(client, [(topic, p) for p in range(args.partitions)], "latest",
                                      isolation_level="read_committed")
                assert {tp[1]: off for tp, (off, _) in stable.items()} == latest, f"{topic}: a transaction was left open"
        report(f"Batch write of {args.records:,} keyed rows x {args.record_size} B into {args.partitions} partitions, "
               f"{args.compression}, local[2]: kwire exactly-once vs at-least-once", args.records, seconds,
               baseline="at-least-once", contender="exactly-once")


if __name__ == "__main__":
    main()
