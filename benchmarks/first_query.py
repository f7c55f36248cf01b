"""First queries in a new environment, and queries after a pause: kwire beside Spark's built-in `kafka`
connector and beside a Python source and sink that do nothing (Spark's floor for any Python data source).

Makes a new virtualenv and installs kwire there from the built wheel (``dist/*.whl``, with the running
PySpark's version; pip's cache makes that quick), as a user of a new cluster would; produces N records into a
topic (Kafka's own ProducerPerformance). Then, ``--runs`` times, one new Spark session per connector, in turn
(the order rotates from run to run), each a new driver process with new Python workers
(``cold_session.py``): kwire's sessions start with numba's cache emptied, as right after ``pip install``.
Each session times the first, second and a warm read (``count(*)``, ``sum(length(value))``, asserted) and
write (N cached rows with string keys, appended to a topic created beforehand), then, with ``--pause``, a read
and a write each after that many seconds without jobs (Spark stops Python workers idle for a minute).

    python benchmarks/first_query.py [--records 100000] [--partitions 4] [--runs 3] [--pause 70]
        [--venv DIR] [--connectors kwire,kafka,null] [--kwire-conf spark.python.daemon.module=...]

Prints every run's seconds, with the load average before each step, and the medians side by side. With
``--venv DIR`` an existing virtualenv is reused (made there when missing; kwire is re-installed from the
wheel each time the script starts).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import REPO, broker, print_machine

HERE = Path(__file__).resolve().parent
STEPS = ("read first", "read second", "read warm", "read after pause",
         "write first", "write second", "write warm", "write after pause")


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--record-size", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--compression", default="lz4")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pause", type=float, default=70.0, help="seconds without jobs; 0: no after-pause steps")
    parser.add_argument("--venv", help="virtualenv to make (or reuse); default: a new one in a temporary folder")
    parser.add_argument("--wheel", help="default: the newest dist/spark_kwire-*.whl")
    parser.add_argument("--connectors", default="kwire,kafka,null")
    parser.add_argument("--kwire-conf", action="append", default=[],
                        help="Spark setting key=value for an extra connector 'kwire+conf' (kwire's sessions)")
    parser.add_argument("--compare-wheel", help="another kwire wheel (e.g. before a change), in a virtualenv of its "
                                                "own, as an extra connector 'kwire-old'")
    parser.add_argument("--bootstrap", help="an existing cluster; default: start a local broker")
    return parser.parse_args()


def make_venv(path: Path, wheel: str) -> Path:
    """A virtualenv with kwire from ``wheel`` and this process's PySpark; returns its python."""
    import pyspark

    python = path / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", f"pyspark=={pyspark.__version__}", "pandas<3",
                        wheel], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--force-reinstall", "--no-deps", wheel], check=True)
    return python


def empty_kwire_caches(python: Path) -> int:
    """Removes what kwire and numba cached for kwire in that environment (as right after pip install); returns
    how many files it removed."""
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    removed = 0
    for pattern in ("**/*.nbi", "**/*.nbc", "**/spark_kwire-*"):
        for path in glob.glob(os.path.join(site, "spark_kwire", pattern), recursive=True):
            os.remove(path)
            removed += 1
    return removed


def produce(bootstrap: str, topic: str, args) -> None:
    from harness import run_java_tool
    from spark_kwire import admin

    admin.create_topic(bootstrap, topic, partitions=args.partitions)
    run_java_tool(
        "org.apache.kafka.tools.ProducerPerformance", "--topic", topic, "--num-records", str(args.records),
        "--record-size", str(args.record_size), "--throughput", "-1", "--producer-props",
        f"bootstrap.servers={bootstrap}", f"compression.type={args.compression}", "batch.size=1048576",
        "linger.ms=20", "acks=1", timeout=1800,
    )


def run_session(python: Path, label: str, connector: str, conf: list[str], bootstrap: str, topic: str, args,
                run: int) -> dict:
    from harness import spark_kafka_connector_jars
    from spark_kwire import admin

    write_topics = [f"{topic}-{label.replace('+', '_')}-{run}-{i}" for i in range(4)]
    if connector != "null":
        for name in write_topics:
            admin.create_topic(bootstrap, name, partitions=args.partitions)
    if connector == "kwire":
        empty_kwire_caches(python)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "KWIRE_", "PYTHONPATH"))}
    env["PYSPARK_PYTHON"] = str(python)
    command = [str(python), str(HERE / "cold_session.py"), "--connector", connector, "--bootstrap", bootstrap,
               "--topic", topic, "--write-topics", ",".join(write_topics), "--records", str(args.records),
               "--record-size", str(args.record_size), "--pause", str(args.pause),
               "--jars", ",".join(spark_kafka_connector_jars()), *(f"--conf={c}" for c in conf)]
    with tempfile.TemporaryDirectory() as cwd:  # not the checkout: Spark's workers put their cwd on sys.path
        out = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"{label} session failed:\n{out.stderr[-5000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if connector != "null":
        used = 4 if args.pause else 3
        for name in write_topics[:used]:
            written = sum(admin.latest_offsets(bootstrap, name).values())
            assert written == args.records, (label, name, written)
    result["label"] = label
    return result


def main() -> None:
    args = parse()
    print_machine()
    wheel = args.wheel or max(glob.glob(str(REPO / "dist" / "spark_kwire-*.whl")), key=os.path.getmtime)
    scratch = Path(tempfile.mkdtemp(prefix="kwire-first-query-"))  # removed at the end, with what is made in it
    venv = Path(args.venv) if args.venv else scratch / "venv"
    python = make_venv(venv, wheel)
    print(f"environment: {venv} (kwire from {os.path.basename(wheel)})")
    sessions = [(c, c, [], python) for c in args.connectors.split(",")]  # (label, connector, settings, python)
    if args.kwire_conf:
        sessions.append(("kwire+conf", "kwire", args.kwire_conf, python))
    if args.compare_wheel:
        old = make_venv(Path(f"{venv}-old"), args.compare_wheel)
        print(f"compared with: {venv}-old (kwire from {args.compare_wheel})")
        sessions.insert(1, ("kwire-old", "kwire", [], old))
    results: dict[str, list[dict]] = {}
    try:
        with broker(argparse.Namespace(bootstrap=args.bootstrap)) as bootstrap:
            topic = f"bench-cold-{args.records}-{args.partitions}-{os.getpid()}"
            produce(bootstrap, topic, args)
            print(f"{args.records:,} records x {args.record_size} B, {args.partitions} partitions, "
                  f"{args.compression}; local[2]; pause {args.pause:.0f} s")
            for run in range(args.runs):
                order = sessions[run % len(sessions):] + sessions[:run % len(sessions)]
                for label, connector, conf, interpreter in order:
                    result = run_session(interpreter, label, connector, conf, bootstrap, topic, args, run)
                    results.setdefault(result["label"], []).append(result)
                    figures = ", ".join(f"{step} {s:.2f} (load {result['load'][step]:.1f})"
                                        for step, s in result["seconds"].items())
                    print(f"run {run + 1} {result['label']:<10} {figures}", flush=True)
                    print_tasks(result)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    report(results)


def print_tasks(result: dict) -> None:
    """Per step: where Spark spent it (before its jobs, in them, after them); for kwire, its tasks' seconds and
    how each Python worker got its record kernels."""
    for step, phases in result.get("phases", {}).items():
        if phases and "error" not in phases:
            print(f"    {step}: before jobs {phases['before_jobs']:.2f} s, {phases['jobs_count']} jobs "
                  f"{phases['jobs']:.2f} s (slowest task {phases['slowest_task']:.2f} s), "
                  f"after jobs {phases['after_jobs']:.2f} s")
        elif phases:
            print(f"    {step}: {phases['error']}")
    for step, tasks in result.get("tasks", {}).items():
        parts = []
        for task in tasks:
            kernels = task.get("kernels", {})
            got = "; ".join(f"{path} {k['how']} {k['seconds']:.2f} s" for path, k in kernels.items()
                            if isinstance(k, dict) and k.get("pid", task.get("pid")) == task.get("pid"))
            parts.append(f"task {task['seconds']:.2f} s (pure Python {kernels.get('pure_seconds', 0):.2f} s"
                         + (f"; {got}" if got else "") + ")")
        if parts:
            print(f"    {step}: " + ", ".join(parts))


def report(results: dict[str, list[dict]]) -> None:
    labels = list(results)
    print(f"\nmedian seconds of {min(len(r) for r in results.values())} runs")
    print(f"  {'step':<18}" + "".join(f"{label:>12}" for label in labels)
          + ("   kwire - kafka   kwire - null" if {"kwire", "kafka", "null"} <= set(labels) else ""))
    for step in STEPS:
        medians = {}
        for label in labels:
            runs = [r["seconds"][step] for r in results[label] if step in r["seconds"]]
            if runs:
                medians[label] = statistics.median(runs)
        if not medians:
            continue
        line = f"  {step:<18}" + "".join(f"{medians[label]:>12.2f}" if label in medians else f"{'':>12}"
                                         for label in labels)
        if {"kwire", "kafka", "null"} <= set(medians):
            line += f"   {medians['kwire'] - medians['kafka']:+13.2f}   {medians['kwire'] - medians['null']:+12.2f}"
        print(line)


if __name__ == "__main__":
    main()
