"""The driver of test_check_executors.py, a process of its own (one SparkContext per process): reads the check table
on a Spark standalone cluster once per JSON options given, and prints ``RESULT <json>`` with the rows of each.

    python check_job.py --master spark://... --executors 2 '{"kafka.bootstrap.servers": ...}' ...
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--master", required=True)
    parser.add_argument("--executors", type=int, required=True)
    parser.add_argument("checks", nargs="+", help="each a JSON object of options")
    args = parser.parse_args()

    from pyspark.sql import SparkSession

    from spark_kwire.check import check_connection

    spark = (SparkSession.builder.master(args.master).appName("kwire-check-executors")
             .config("spark.executor.memory", "512m").config("spark.pyspark.python", sys.executable)
             .config("spark.python.authenticate.socketTimeout", "120s")
             .config("spark.ui.showConsoleProgress", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    deadline = time.monotonic() + 180
    while len(spark.sparkContext.statusTracker().getExecutorInfos()) < args.executors + 1:  # + the driver
        if time.monotonic() > deadline:
            raise SystemExit(f"only {len(spark.sparkContext.statusTracker().getExecutorInfos()) - 1} executors "
                             f"registered, {args.executors} expected")
        time.sleep(0.5)
    results = []
    for options in args.checks:
        report = check_connection(json.loads(options), spark=spark)
        results.append([row.as_dict() for row in report.rows])
    print("RESULT " + json.dumps(results), flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
