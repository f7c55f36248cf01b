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
               .config("spark.ui.port", "0").config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.memory", "2g").config("spark.sql.shuffle.partitions", "2"))
    for setting in args.conf:  # e.g. spark.python.daemon.module=spark_kwire.spark.workers.daemon
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

    tasks = TaskReports() if args.connector == "kwire" else None
    started = time.perf_counter()
    spark = session(args)
    session_seconds = time.perf_counter() - started
    spark.sparkContext.setLogLevel("ERROR")
    spark.range(100_000, numPartitions=2).selectExpr("sum(id)").collect()
    rows = spark.range(args.records, numPartitions=args.write_tasks).selectExpr(
        "CAST(id AS STRING) AS key", f"CAST(repeat('v', {args.record_size}) AS BINARY) AS value").cache()
    assert rows.count() == args.records
    write_topics = iter(args.write_topics.split(","))
    expected = (args.records, args.records * args.record_size)

    registered = set()

    def register_once(source) -> None:
        # inside the timed step, as a user registers before a first query: Spark's first registration (like
        # the first format("kwire") or format("kafka")) runs its lookup of installed Python data sources
        if source.name() not in registered:
            spark.dataSource.register(source)
            registered.add(source.name())

    def read() -> None:
        if args.connector == "null":
            from null_source import NullSource

            register_once(NullSource)
            df = (spark.read.format("null_source").option("rows", args.records)
                  .option("partitions", args.read_tasks).option("value_bytes", args.record_size).load())
        else:
            df = (spark.read.format(args.connector).option("kafka.bootstrap.servers", args.bootstrap)
                  .option("subscribe", args.topic).load())
        row = df.selectExpr("count(*) AS n", "sum(length(value)) AS bytes").collect()[0]
        assert (row.n, row.bytes) == expected, (args.connector, row)

    def write() -> None:
        if args.connector == "null":
            from null_sink import NullSink

            register_once(NullSink)
            rows.write.format("null_arrow_sink").mode("append").save()
        else:
            (rows.write.format(args.connector).option("kafka.bootstrap.servers", args.bootstrap)
             .option("topic", next(write_topics)).mode("append").save())

    steps = [("read first", read, 0), ("read second", read, 0), ("write first", write, 0),
             ("write second", write, 0), ("read warm", read, 0), ("write warm", write, 0)]
    if args.pause:
        steps += [("read after pause", read, args.pause), ("write after pause", write, args.pause)]
    seconds, load, reports, phases, started = {}, {}, {}, {}, {}
    jobs = SparkJobs(spark)
    for name, fn, pause in steps:
        time.sleep(pause)
        load[name] = os.getloadavg()[0]
        started_at = started[name] = time.time()
        t = time.perf_counter()
        fn()
        seconds[name] = time.perf_counter() - t
        phases[name] = jobs.phases(started_at, started_at + seconds[name])
        if tasks:
            reports[name] = tasks.new()
    spark.stop()
    print(json.dumps({"connector": args.connector, "session_seconds": session_seconds, "seconds": seconds,
                      "load": load, "tasks": reports, "phases": phases,
                      "started_at": started}))


class SparkJobs:
    """Where a step's time went on Spark's side, from its status API (the UI's REST endpoints): before the first
    job of the step (planning, in Spark's driver and its Python planning workers), the jobs (tasks, and in them
    the slowest task's time to start its Python worker and deserialize), between and after them (a write's
    commit)."""

    def __init__(self, spark) -> None:
        self.url = spark.sparkContext.uiWebUrl
        self.app = spark.sparkContext.applicationId

    def _get(self, path: str):
        import urllib.request

        with urllib.request.urlopen(f"{self.url}/api/v1/applications/{self.app}/{path}", timeout=30) as response:
            return json.load(response)

    @staticmethod
    def _when(stamp: str) -> float:
        import calendar

        day, clock = stamp.replace("GMT", "").split("T")
        whole, _, millis = clock.partition(".")
        return calendar.timegm(time.strptime(f"{day}T{whole}", "%Y-%m-%dT%H:%M:%S")) + int(millis or 0) / 1000

    def phases(self, start: float, end: float) -> dict:
        try:
            jobs = [j for j in self._get("jobs") if "submissionTime" in j and "completionTime" in j
                    and start - 0.05 <= self._when(j["submissionTime"]) <= end + 0.05]
            if not jobs:
                return {}
            jobs.sort(key=lambda j: self._when(j["submissionTime"]))
            first, last = self._when(jobs[0]["submissionTime"]), max(self._when(j["completionTime"]) for j in jobs)
            in_jobs = sum(self._when(j["completionTime"]) - self._when(j["submissionTime"]) for j in jobs)
            slowest = {"run": 0.0, "deserialize": 0.0}
            for job in jobs:
                for stage in job.get("stageIds", []):
                    for attempt in self._get(f"stages/{stage}"):
                        for task in self._get(f"stages/{stage}/{attempt['attemptId']}/taskList?length=1000"):
                            metrics = task.get("taskMetrics", {})
                            run = task.get("duration", 0) / 1000
                            if run > slowest["run"]:
                                slowest = {"run": run,
                                           "deserialize": metrics.get("executorDeserializeTime", 0) / 1000}
            return {"before_jobs": round(first - start, 3), "jobs": round(in_jobs, 3), "jobs_count": len(jobs),
                    "after_jobs": round(end - last, 3), "slowest_task": round(slowest["run"], 3),
                    "its_deserialize": round(slowest["deserialize"], 3)}
        except Exception as exc:  # noqa: BLE001 - the timings stand without this breakdown
            return {"error": f"{type(exc).__name__}: {exc}"}


class TaskReports:
    """What kwire's tasks reported (KWIRE_STATS_DIR for reads, KWIRE_PROFILE for writes), step by step: set
    before Spark starts, so that its Python workers inherit them."""

    def __init__(self) -> None:
        import tempfile

        self.folder = tempfile.mkdtemp(prefix="kwire-cold-stats-")
        os.environ["KWIRE_STATS_DIR"] = self.folder
        os.environ["KWIRE_PROFILE"] = os.path.join(self.folder, "writes.jsonl")
        self.seen: dict[str, int] = {}

    def new(self) -> list[dict]:
        lines = []
        for name in sorted(os.listdir(self.folder)):
            with open(os.path.join(self.folder, name), encoding="utf-8") as f:
                rows = f.read().splitlines()
            lines += [json.loads(r) for r in rows[self.seen.get(name, 0):]]
            self.seen[name] = len(rows)
        return lines


if __name__ == "__main__":
    main()
