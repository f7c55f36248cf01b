"""A Spark batch job for the exactly-once retry test, run as a subprocess so that Spark retries failed tasks
(``local[2,3]``: up to 3 attempts; the session's ``local[2]`` never retries).

Writes ``--rows`` values ``t{i}`` with deliveryGuarantee=exactly-once; the task holding the last row fails
once, after its producer flushed rows of the attempt (a marker file says whether it already failed).
"""

from __future__ import annotations

import argparse
import os
import sys


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--rows", type=int, required=True)
    ap.add_argument("--marker", required=True)
    args = ap.parse_args()

    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    spark = (SparkSession.builder.master("local[2,3]").appName("kwire-eos-retry")
             .config("spark.ui.enabled", "false").config("spark.driver.memory", "1g").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    last, marker = args.rows - 1, args.marker

    # The UDF's Python worker runs ahead of the writer only by what the buffers between them hold: with many
    # rows per task, the failing last row comes after the writer's producer (buffer.memory set small) has
    # sent many rows of the attempt.
    @F.udf("string")
    def value(i):
        if i == last and not os.path.exists(marker):
            open(marker, "w").close()
            raise RuntimeError("first attempt fails on purpose after writing")
        return f"t{i}"

    rows = spark.range(0, args.rows, 1, 3).select(value(F.col("id")).alias("value"))
    (rows.write.format("kwire").option("kafka.bootstrap.servers", args.bootstrap).option("topic", args.topic)
     .option("deliveryGuarantee", "exactly-once").option("kafka.buffer.memory", "65536")
     .option("kafka.batch.size", "16384").mode("append").save())
    print("WRITTEN", flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
