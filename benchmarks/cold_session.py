"""One new Spark session timing one connector's first queries, warm queries and queries after a pause.

Run by ``first_query.py`` with the Python of the environment under test (a new virtualenv with kwire installed
from the wheel): it imports nothing from the repository, so kwire comes from that environment, and the
folder of this script (on the Python workers' PYTHONPATH too) only lends the do-nothing source and sink. Steps,
in order, each a separate Spark job:

* JVM warm-up (no connector), then the rows to write are cached (``spark.range``, no connector either);
* ``read first``, ``read second``: ``count(*)``, ``sum(length(value))`` over the topic (asserted);
* ``write first``, ``write second``: the cached rows (string key, binary value) appended to a new topic;
* ``read warm``, ``write warm``: once more, for the warm time of this session;
* with ``--pause S``: ``read after pause`` and ``write after pause``, each after S seconds without any job
  (Spark stops Python workers idle for a minute, so each starts new ones).

Prints one JSON line: the seconds of each step, the load average before it, and what kwire's tasks reported
about their first moments in each Python worker (``KWIRE_PROFILE``), when the connector is kwire.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def session(args):
    paths = [str(HERE), *(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)]
    os.environ["PYTHONPATH"] = os.pathsep.join(paths)  # the workers import null_source / null_sink from here
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = (SparkSession.builder.master("local[2]").appName("kwire-cold").config("spark.jars", args.jars)
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.memory", "2g").config("spark.sql.shuffle.partitions", "2"))
    for setting in args.conf:  # e.g. spark.python.daemon.module=spark_kwire.spark.daemon
        key, _, value = setting.partition("=")
        builder = builder.config(key, value)
    return builder.getOrCreate()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--connector", choices=("kwire", "kafka", "null"), required=True)
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--write-topics", required=True, help="comma-separated, created beforehand")
    parser.add_argument("--records", type=int, required=True)
    parser.add_argument("--record-size", type=int, default=100)
    parser.add_argument("--write-tasks", type=int, default=2)
    parser.add_argument("--read-tasks", type=int, default=1, help="tasks of the do-nothing source's read")
    parser.add_argument("--pause", type=float, default=0.0)
    parser.add_argument("--jars", required=True)
    parser.add_argument("--conf", action="append", default=[], help="extra Spark setting key=value")
    args = parser.parse_args()

    started = time.perf_counter()
    spark = session(args)
    session_seconds = time.perf_counter() - started
    spark.sparkContext.setLogLevel("ERROR")
    spark.range(100_000, numPartitions=2).selectExpr("sum(id)").collect()
    rows = spark.range(args.records, numPartitions=args.write_tasks).selectExpr(
        "CAST(id AS STRING) AS key", f"CAST(repeat('v', {args.record_size}) AS BINARY) AS value").cache()
    assert rows.count() == args.records
    if args.connector == "null":
        from null_sink import NullSink
        from null_source import NullSource

        spark.dataSource.register(NullSource)
        spark.dataSource.register(NullSink)
    write_topics = iter(args.write_topics.split(","))
    expected = (args.records, args.records * args.record_size)

    def read() -> None:
        if args.connector == "null":
            df = (spark.read.format("null_source").option("rows", args.records)
                  .option("partitions", args.read_tasks).option("value_bytes", args.record_size).load())
        else:
            df = (spark.read.format(args.connector).option("kafka.bootstrap.servers", args.bootstrap)
                  .option("subscribe", args.topic).load())
        row = df.selectExpr("count(*) AS n", "sum(length(value)) AS bytes").collect()[0]
        assert (row.n, row.bytes) == expected, (args.connector, row)

    def write() -> None:
        if args.connector == "null":
            rows.write.format("null_arrow_sink").mode("append").save()
        else:
            (rows.write.format(args.connector).option("kafka.bootstrap.servers", args.bootstrap)
             .option("topic", next(write_topics)).mode("append").save())

    steps = [("read first", read, 0), ("read second", read, 0), ("write first", write, 0),
             ("write second", write, 0), ("read warm", read, 0), ("write warm", write, 0)]
    if args.pause:
        steps += [("read after pause", read, args.pause), ("write after pause", write, args.pause)]
    seconds, load = {}, {}
    for name, fn, pause in steps:
        time.sleep(pause)
        load[name] = os.getloadavg()[0]
        t = time.perf_counter()
        fn()
        seconds[name] = time.perf_counter() - t
    spark.stop()
    print(json.dumps({"connector": args.connector, "session_seconds": session_seconds, "seconds": seconds,
                      "load": load}))


if __name__ == "__main__":
    main()
