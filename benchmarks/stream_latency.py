"""End-to-end latency of Kafka -> Spark -> Kafka streams, and what each micro-batch costs, per pipeline and release.

    python benchmarks/stream_latency.py [--rates 500,5000] [--warmup 10] [--seconds 30]
        [--pipeline kafka@.venv-spark-4.2 --pipeline kwire:kafka@.venv-spark-4.2 ...] [--bootstrap HOST:PORT]
        [--trace]

A pipeline is ``source:sink@virtualenv[@checkout]`` (``kind@virtualenv`` for ``kind:kind``), readStream ->
select(key, value) -> writeStream; ``@checkout`` runs the kwire of another checkout (a folder holding
``spark_kwire``, e.g. a ``git worktree`` of another revision) instead of this one, so that two revisions run
side by side in one invocation (``--pipeline kwire@.venv@/tmp/before --pipeline kwire@.venv``). Sources:

* ``kwire``: format("kwire") with its default options (streamReadMode=auto);
* ``kwire-tasks``, ``kwire-driver``: format("kwire") with streamReadMode=tasks (read by Spark tasks) or driver (read
  in the driver's source process); ``kwire-tasks-unpacked`` also sets packPartitions=false (a task per topic
  partition, as the built-in plans them, instead of small ranges packed into one task per broker);
* ``kafka``: Spark's built-in connector, the release's own: a virtualenv of PySpark X.Y gets the jars of
  ``jars/spark-kafka-X.Y`` when that folder has them (4.2: connector 4.2.0, `make jars`), else ``jars/spark-kafka``
  (4.0.0, whose stream runs on PySpark 4.0.x only);
* ``null``: a do-nothing Python stream source (null_source.py) offering rows at the same rate, read by tasks;
  with the ``null`` sink (null_sink.py), Spark's own cost per micro-batch for a Python source and sink: the floor
  under any Python connector.

Sinks: ``kwire``, ``kafka``, ``null``, and ``foreachbatch`` (each micro-batch written by kwire's batch writer).

Each pipeline runs in a Spark process of its own (``local[2]``, default trigger), started with its virtualenv's
Python and this checkout first on PYTHONPATH, one after the other against one broker, in this one invocation.
For each rate, a query reads a fresh 4-partition topic; this process produces to it (confluent-kafka, linger 0)
at a steady rate, each record's value holding its send time, for ``warmup + seconds``; the sink writes a fresh
topic with ``message.timestamp.type=LogAppendTime``. Latency = the output record's LogAppendTime minus its send
time, over the records sent after the warm-up; "through Spark" measures from the input record's LogAppendTime
instead (the input topic has it too), which leaves out the sending process's own delays on a busy machine.
Every record sent must come out exactly once (counted by key). The breakdown is the median of Spark's
``durationMs`` per micro-batch (the query progress) over the batches that started after the warm-up, the time
from one such batch's end to the next one's start ("between": triggers that found no data, whatever the query did
outside a reported trigger), and the CPU
the pipeline's processes (driver, JVM, Python workers) used then, in cores, and per micro-batch (ms of CPU per
batch with data, split into Spark's JVM and all of its Python processes), which depend less on the load than times.
Figures depend on how busy the machine is: the load average is printed.

``--trace`` also records, in every Python process of each pipeline (``batch_trace/sitecustomize.py``), the
requests kwire sends and the connections it opens, and the wall and CPU time of the source's and sink's calls,
and prints them per micro-batch (over the batches planned in the measured window).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

PARTITIONS = 4
PHASES = ("triggerExecution", "latestOffset", "queryPlanning", "walCommit", "addBatch", "commitOffsets", "getBatch")
# Issue 45's comparison: Spark's built-in on its own release (PySpark 4.2.1, connector 4.2.0), then kwire's source in
# each read mode into the built-in's (JVM) sink, then kwire at both ends.
DEFAULT_PIPELINES = ["kafka@.venv-spark-4.2", "kwire:kafka@.venv-spark-4.2", "kwire-tasks:kafka@.venv-spark-4.2",
                     "kwire@.venv-spark-4.2"]


# -- the child: one Spark session, one query per rate, driven by lines on stdin -----------------------------
SOURCES = ("kwire", "kwire-tasks", "kwire-tasks-unpacked", "kwire-driver", "kafka", "null")
SINKS = ("kwire", "kafka", "null", "foreachbatch")


def child(source_kind: str, sink_kind: str, bootstrap: str, progress_file: str, trigger: str | None,
          confs: list[str]) -> None:
    from _common import spark_session

    spark = spark_session()
    for setting in confs:
        spark.conf.set(*setting.split("=", 1))
    spark.conf.set("spark.sql.streaming.numRecentProgressUpdates", "100000")
    from null_sink import NullSink
    from null_source import NullSource

    for source in (NullSource, NullSink):
        spark.dataSource.register(source)
    query = None
    for line in sys.stdin:
        command, *args = line.split()
        if command == "start":
            label, rate, source, sink = args
            df = _source(spark, source_kind, bootstrap, float(rate), source)
            writer = _sink(df, sink_kind, bootstrap, sink).option("checkpointLocation", tempfile.mkdtemp())
            query = (writer.trigger(processingTime=trigger) if trigger else writer).start()
            _wait_first_batch(query)
            print("started", flush=True)
        elif command == "stop":
            progress = [json.loads(p.json()) for p in query._jsq.recentProgress()]
            query.stop()
            with open(progress_file, "a", encoding="utf-8") as out:
                for p in progress:
                    out.write(json.dumps({"label": args[0], **p}) + "\n")
            print("stopped", flush=True)
        elif command == "exit":
            break
    spark.stop()


def _source(spark, kind: str, bootstrap: str, rate: float, topic: str):
    if kind == "null":  # rows shaped as a Kafka source's, values about as long as the send times below
        return (spark.readStream.format("null_source").option("rate", rate).option("partitions", 1)
                .option("columns", "kafka").option("value_bytes", 18).load().select("key", "value"))
    reader = spark.readStream.format("kwire" if kind.startswith("kwire") else kind)
    if kind.startswith("kwire-"):
        reader = reader.option("streamReadMode", kind.split("-")[1])
    if kind.endswith("-unpacked"):  # one task per topic partition, as Spark's built-in source plans them
        reader = reader.option("packPartitions", "false")
    return (reader.option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
            .option("startingOffsets", "earliest").load().select("key", "value"))


def _sink(df, kind: str, bootstrap: str, topic: str):
    if kind == "null":
        return df.writeStream.format("null_arrow_sink")
    if kind == "foreachbatch":
        def write(batch, _batch_id):
            batch.write.format("kwire").mode("append").option("kafka.bootstrap.servers", bootstrap).option(
                "topic", topic).save()

        return df.writeStream.foreachBatch(write)
    return df.writeStream.format(kind).option("kafka.bootstrap.servers", bootstrap).option("topic", topic)


def _wait_first_batch(query, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while query.lastProgress is None:
        if query.exception() is not None:
            raise SystemExit(f"query failed: {query.exception()}")
        if time.monotonic() > deadline:
            raise SystemExit("the query ran no micro-batch in time")
        time.sleep(0.1)


# -- the parent: broker, topics, producer, consumer, report -------------------------------------------------
class Pipeline:
    """``source:sink@virtualenv``; ``kind@virtualenv`` is ``kind:kind@virtualenv``."""

    def __init__(self, spec: str) -> None:
        kinds, _, venv = spec.partition("@")
        venv, _, checkout = venv.partition("@")
        self.checkout = Path(checkout).resolve() if checkout else REPO
        if not (self.checkout / "spark_kwire").is_dir():
            raise SystemExit(f"--pipeline {spec!r}: {self.checkout} holds no spark_kwire")
        self.source, _, self.sink = kinds.partition(":")
        self.sink = self.sink or self.source.split("-")[0]  # kwire-tasks@venv: kwire-tasks:kwire
        if self.source not in SOURCES or self.sink not in SINKS or not venv:
            raise SystemExit(f"--pipeline {spec!r}: expected source[:sink]@virtualenv[@checkout], sources "
                             f"{', '.join(SOURCES)}, sinks {', '.join(SINKS)}")
        if (self.source == "null") != (self.sink == "null"):
            raise SystemExit(f"--pipeline {spec!r}: the null source goes with the null sink only")
        self.kind = kinds
        self.python = str((REPO / venv).resolve() / "bin" / "python") if not Path(venv).is_absolute() \
            else str(Path(venv) / "bin" / "python")
        self.release = subprocess.run([self.python, "-c", "import pyspark; print(pyspark.__version__)"],
                                      capture_output=True, text=True, check=True).stdout.strip()
        self.name = f"{self.kind} ({self.release})" if not checkout else \
            f"{self.kind} ({self.release}, {self.checkout.name})"


class Child:
    """A pipeline's Spark process, driven through its stdin."""

    def __init__(self, pipeline: Pipeline, bootstrap: str, progress_file: str, trigger_and_confs: list[str],
                 trace: str | None = None) -> None:
        paths = [str(pipeline.checkout), str(HERE)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                                                       if p]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "PYSPARK_PYTHON": pipeline.python}
        connector = REPO / "jars" / f"spark-kafka-{'.'.join(pipeline.release.split('.')[:2])}" / "target" / "lib"
        if connector.is_dir():  # Spark's built-in connector of this release (its stream needs its own release's)
            env["KWIRE_SPARK_KAFKA_LIB"] = str(connector)
        if trace:
            env["PYTHONPATH"] = os.pathsep.join([str(HERE / "batch_trace"), env["PYTHONPATH"]])
            env["KWIRE_BATCH_TRACE"] = trace
        # Spark's log (and the noise of queries stopped mid-batch) goes to a file, shown when something fails.
        self.log = tempfile.NamedTemporaryFile("w+", prefix="latency-spark-", suffix=".log")
        self.process = subprocess.Popen(
            [pipeline.python, str(Path(__file__).resolve()), "--child", f"{pipeline.source}:{pipeline.sink}",
             "--bootstrap", bootstrap, "--progress-file", progress_file, *trigger_and_confs],
            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True)

    def ask(self, line: str, answer: str) -> None:
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        while True:
            got = self.process.stdout.readline()
            if got.strip() == answer:
                return
            if not got:
                self.process.kill()
                self.log.seek(0)
                sys.stderr.write(self.log.read()[-5000:])
                raise SystemExit(f"the pipeline's process ended instead of answering {line!r} (its log is above)")
            sys.stderr.write(got)  # whatever else Spark printed

    def close(self) -> None:
        try:
            self.process.stdin.write("exit\n")
            self.process.stdin.close()
            self.process.wait(timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
        self.log.close()


def produce(bootstrap: str, topic: str, rate: float, seconds: float) -> int:
    """Send `rate` records/s for `seconds`: key = sequence number, value = send time (s since the epoch)."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "acks": "all"})
    total = int(rate * seconds)
    started = time.perf_counter()
    for seq in range(total):
        due = started + seq / rate
        wait = due - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
        producer.produce(topic, key=str(seq).encode(), value=repr(time.time()).encode())
        producer.poll(0)
    if producer.flush(30):
        raise SystemExit(f"the producer could not deliver everything to {topic}")
    return total


def consume(bootstrap: str, topic: str, expected: int, timeout: float) -> list[tuple[int, float, int]]:
    """(seq, send time, LogAppendTime ms) of the records in `topic`, read until `expected` came or `timeout` (s)
    passed with none coming; then a second more, to see duplicates that arrive late."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"latency-{topic}", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    records: list[tuple[int, float, int]] = []
    quiet_since = time.monotonic()
    grace_until = None
    while True:
        now = time.monotonic()
        if grace_until is None and len(records) >= expected:
            grace_until = now + 1.0
        if (grace_until is not None and now > grace_until) or now - quiet_since > timeout:
            break
        for msg in consumer.consume(10_000, 0.2):
            if msg.error():
                raise SystemExit(f"consuming {topic}: {msg.error()}")
            _type, appended = msg.timestamp()
            records.append((int(msg.key()), float(msg.value()), appended))
            quiet_since = time.monotonic()
    consumer.close()
    return records


def create_topics(bootstrap: str, names: list[str], config: dict | None = None) -> None:
    from spark_kwire import admin

    for name in names:
        admin.create_topic(bootstrap, name, partitions=PARTITIONS, config=config)


def run_pipeline(index: int, pipeline: Pipeline, bootstrap: str, args, progress_file: str) -> list[dict]:
    rows = []
    extra = (["--trigger", args.trigger] if args.trigger else []) + [f"--conf={c}" for c in args.conf]
    trace = tempfile.mkdtemp(prefix="latency-trace-") if args.trace else None
    child = Child(pipeline, bootstrap, progress_file, extra, trace)
    try:
        for rate in args.rates:
            label = f"{index}-{rate}"
            source, sink = f"latency-in-{label}", f"latency-out-{label}"
            if pipeline.source != "null":
                create_topics(bootstrap, [source, sink], {"message.timestamp.type": "LogAppendTime"})
            child.ask(f"start {label} {rate} {source} {sink}", "started")
            started = time.time()
            window = (started + args.warmup, started + args.warmup + args.seconds)
            row = {"pipeline": pipeline, "rate": rate, "label": label, "window": window, "trace": trace}
            cpu = threading.Timer(args.warmup, lambda: row.update(cpu_start=cpu_seconds(child.process.pid)))
            cpu.start()
            if pipeline.source == "null":
                time.sleep(args.warmup + args.seconds)
                row["cpu_end"] = cpu_seconds(child.process.pid)
            else:
                sent = produce(bootstrap, source, rate, args.warmup + args.seconds)
                row["cpu_end"] = cpu_seconds(child.process.pid)
                records = consume(bootstrap, sink, sent, timeout=60)
                arrived = {seq: appended for seq, _, appended in consume(bootstrap, source, sent, timeout=10)}
                row.update(latency_figures(records, sent, window[0], arrived))
            cpu.join()
            row["load"] = os.getloadavg()[0]  # the 1-minute load average, as this rate's measurement ends
            if row.get("cpu_start") is not None and row["cpu_end"] is not None:
                row["cpu_used"] = cpu_used_between(row["cpu_start"], row["cpu_end"])
                row["cpu"] = sum(row["cpu_used"].values()) / args.seconds  # cores busy, on average
            child.ask(f"stop {label}", "stopped")
            rows.append(row)
            print(f"  {pipeline.name} at {rate:g}/s: done", flush=True)
    finally:
        child.close()
    return rows


def cpu_seconds(pid: int) -> dict[int, tuple[str, float]] | None:
    """CPU seconds used so far by each of the pipeline's processes, by pid: ("jvm", s) for Spark's JVM,
    ("python", s) for the driver's Python process and every Python process under the JVM (source runner,
    planning and commit workers, task workers)."""
    try:
        import psutil
    except ImportError:
        return None
    used = {}
    root = psutil.Process(pid)
    for process in [root, *root.children(recursive=True)]:
        try:
            times = process.cpu_times()
            used[process.pid] = ("jvm" if "java" in process.name() else "python", times.user + times.system)
        except psutil.Error:
            continue  # ended meanwhile
    return used


def cpu_used_between(start: dict[int, tuple[str, float]], end: dict[int, tuple[str, float]]) -> dict[str, float]:
    """CPU seconds per kind of process between two cpu_seconds() samples. A process that ended before the
    second sample is not counted (Spark keeps its Python workers while a query runs); one started after the
    first counts from its start."""
    total = {"jvm": 0.0, "python": 0.0}
    for pid, (kind, seconds) in end.items():
        total[kind] += seconds - start.get(pid, (kind, 0.0))[1]
    return total


def latency_figures(records, sent: int, measured_from: float, arrived: dict[int, int]) -> dict:
    """Latencies from the send time, and through Spark alone: from the input record's LogAppendTime (`arrived`),
    which leaves out how long the sending process (Python, on a busy machine) took to get it to the broker."""
    counts: dict[int, int] = {}
    for seq, _, _ in records:
        counts[seq] = counts.get(seq, 0) + 1
    missing = sum(1 for seq in range(sent) if seq not in counts)
    duplicated = sum(n - 1 for n in counts.values() if n > 1)
    latencies = sorted(appended - send * 1000 for _, send, appended in records if send >= measured_from)
    through = sorted(appended - arrived[seq] for seq, send, appended in records if send >= measured_from)
    return {"sent": sent, "missing": missing, "duplicated": duplicated, "latencies": latencies, "through": through}


def percentile(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))]


def add_breakdown(rows: list[dict], progress_file: str) -> None:
    batches: dict[str, list[dict]] = {}
    with open(progress_file, encoding="utf-8") as f:
        for line in f:
            p = json.loads(line)
            batches.setdefault(p["label"], []).append(p)
    for row in rows:
        start, end = row["window"]
        # the progress timestamp is when the trigger started; only triggers that found data count here
        measured = [p for p in batches.get(row["label"], [])
                    if start <= _epoch(p["timestamp"]) <= end and p.get("numInputRows", 0) > 0]
        row["batches"] = len(measured)
        row["rows_per_batch"] = statistics.mean(p["numInputRows"] for p in measured) if measured else 0
        row["phases"] = {name: statistics.median(p["durationMs"].get(name, 0) for p in measured) if measured else 0
                         for name in PHASES}
        row["slowest"] = max((p["durationMs"].get("triggerExecution", 0) for p in measured), default=0)
        row["between"] = _median_time_between_batches(measured)
        if row.get("cpu_used") and measured:
            row["cpu_per_batch"] = {k: 1000 * v / len(measured) for k, v in row["cpu_used"].items()}


def _median_time_between_batches(measured: list[dict]) -> float:
    """Median ms from the end of a batch with data to the start of the next one: triggers that found no data
    (which Spark reports only every 10 s) and whatever else the query did outside a reported trigger."""
    gaps = [1000 * (_epoch(after["timestamp"]) - _epoch(before["timestamp"]))
            - before["durationMs"].get("triggerExecution", 0)
            for before, after in zip(measured, measured[1:]) if after["batchId"] == before["batchId"] + 1]
    return statistics.median(gaps) if gaps else 0


def _epoch(timestamp: str) -> float:
    from datetime import datetime

    return datetime.strptime(timestamp.replace("Z", "+0000"), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()


def print_tables(rows: list[dict]) -> None:
    print("\nLatency (ms): output LogAppendTime - send time, records sent after the warm-up")
    print("(from send: the sending process's time; through Spark: from the input record's LogAppendTime)")
    print(f"{'':<30} {'':>7} {'':>8} {'from send':^27}  {'through Spark':^20}")
    print(f"{'pipeline':<30} {'rate/s':>7} {'records':>8} {'p50':>6} {'p95':>6} {'p99':>6} {'max':>6}  "
          f"{'p50':>6} {'p99':>6} {'max':>6}  exactly once")
    for row in rows:
        if "latencies" not in row:
            continue
        values = row["latencies"]
        once = "yes" if not row["missing"] and not row["duplicated"] else \
            f"NO: {row['missing']} missing, {row['duplicated']} duplicated"
        figures = " ".join(f"{percentile(values, q):>6.0f}" for q in (0.5, 0.95, 0.99)) if values else "  -"
        through = row["through"]
        spark = " ".join(f"{percentile(through, q):>6.0f}" for q in (0.5, 0.99)) if through else "  -"
        print(f"{row['pipeline'].name:<30} {row['rate']:>7g} {len(values):>8} {figures} {max(values, default=0):>6.0f}"
              f"  {spark} {max(through, default=0):>6.0f}  {once} ({row['sent']} sent)")
    print("\nPer micro-batch (ms, medians over the batches with data after the warm-up): Spark's durationMs")
    names = [n for n in PHASES if any(row["phases"].get(n) for row in rows)]
    print(f"{'pipeline':<30} {'rate/s':>7} {'batches':>7} {'rows':>6} " + " ".join(f"{n[:14]:>14}" for n in names)
          + "  between  slowest batch  CPU (cores)  CPU ms/batch (JVM+Python)  load")
    for row in rows:
        cpu = f"{row['cpu']:.2f}" if row.get("cpu") is not None else "-"
        per_batch = row.get("cpu_per_batch")
        split = "-" if not per_batch else \
            f"{sum(per_batch.values()):.0f} ({per_batch['jvm']:.0f}+{per_batch['python']:.0f})"
        print(f"{row['pipeline'].name:<30} {row['rate']:>7g} {row['batches']:>7} {row['rows_per_batch']:>6.0f} "
              + " ".join(f"{row['phases'][n]:>14.0f}" for n in names)
              + f"  {row['between']:>7.0f}  {row['slowest']:>13.0f}  {cpu:>11}  {split:>25}  {row['load']:4.1f}")
    floors = {(r["pipeline"].release, r["rate"]): r for r in rows if r["pipeline"].source == "null" and r["batches"]}
    lines = []
    for row in rows:
        floor = floors.get((row["pipeline"].release, row["rate"]))
        if row["pipeline"].source.startswith("kwire") and floor and row["batches"]:
            extra = row["phases"]["triggerExecution"] - floor["phases"]["triggerExecution"]
            lines.append(f"{row['pipeline'].name:<30} {row['rate']:>7g}  {extra:+.0f} ms per batch")
    if lines:
        print("\nkwire beyond the do-nothing Python source and sink (median triggerExecution, same release and rate)")
        print("\n".join(lines))
    for row in rows:
        if row.get("trace"):
            print_trace(row)


def print_trace(row: dict) -> None:
    """What the traced processes did per micro-batch planned in the measured window (--trace)."""
    events: list[dict] = []
    for name in os.listdir(row["trace"]):
        with open(os.path.join(row["trace"], name), encoding="utf-8") as f:
            events.extend(json.loads(line) for line in f)
    start, end = row["window"]
    events = [e for e in events if start <= e["t"] <= end]
    batches = sum(1 for e in events if e["ev"] in ("reader.partitions", "null.partitions"))
    print(f"\nTrace of {row['pipeline'].name} at {row['rate']:g}/s: {batches} micro-batches planned in the window; "
          "per batch: calls, and per call the median wall / CPU ms (p90 wall)")
    if not batches:
        return
    by_event: dict[str, list[dict]] = {}
    for e in events:
        by_event.setdefault(e["ev"], []).append(e)
    for name, found in sorted(by_event.items()):
        line = f"  {name:<26} {len(found) / batches:6.2f} per batch"
        if name.startswith("send."):
            parts = [e["parts"] for e in found if e.get("parts") is not None]
            if parts:
                line += f"  ({statistics.mean(parts):.2f} partitions per request)"
        else:
            walls = sorted(e["wall"] * 1000 for e in found)
            line += (f"  {statistics.median(walls):7.2f} / {statistics.median(e['cpu'] * 1000 for e in found):6.2f} ms"
                     f"  (p90 {percentile(walls, 0.9):.1f})")
            if found[0].get("after") is not None or "first" in found[0]:
                def median_of(key):
                    values = [e[key] * 1000 for e in found if e.get(key) is not None]
                    return statistics.median(values) if values else float("nan")
                line += (f"  first input at {median_of('first'):.1f}, last at {median_of('last'):.1f}, "
                         f"then {median_of('after'):.1f} ms")
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pipeline", action="append", help="kind@virtualenv (repeat); default: " +
                        " ".join(DEFAULT_PIPELINES))
    parser.add_argument("--rates", default="500,5000")
    parser.add_argument("--warmup", type=float, default=10.0, help="seconds sent before measuring")
    parser.add_argument("--seconds", type=float, default=30.0, help="seconds measured, per rate")
    parser.add_argument("--bootstrap", help="an existing cluster; default: start a local broker")
    parser.add_argument("--trigger", help="a processing-time trigger for every query, e.g. '1 second' (default: "
                        "Spark's default trigger, each micro-batch as soon as the previous one ends)")
    parser.add_argument("--conf", action="append", default=[], help="a Spark setting key=value for every pipeline")
    parser.add_argument("--trace", action="store_true", help="trace kwire's requests and calls per micro-batch "
                        "(batch_trace/sitecustomize.py) and print them")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--progress-file", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child.split(":"), args.bootstrap, args.progress_file, args.trigger, args.conf)
        return
    args.rates = [float(r) for r in args.rates.split(",")]
    from _common import broker, print_machine

    print_machine()
    pipelines = [Pipeline(spec) for spec in (args.pipeline or DEFAULT_PIPELINES)]
    progress_file = tempfile.mkstemp(prefix="latency-progress-", suffix=".jsonl")[1]
    rows = []
    with broker(args) as bootstrap:
        for index, pipeline in enumerate(pipelines):
            rows.extend(run_pipeline(index, pipeline, bootstrap, args, progress_file))
    add_breakdown(rows, progress_file)
    os.unlink(progress_file)
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print_tables(rows)


if __name__ == "__main__":
    main()
