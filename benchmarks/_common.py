"""Shared set-up for the benchmarks: a broker (started here unless --bootstrap is given) and a Spark session
holding both kwire and Spark's built-in `kafka` connector, so that both run on the same data in one process."""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

# The harness (local brokers, Spark's connector jars) lives in the repository, not in the wheel.
REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def print_machine() -> None:
    """What the figures below were measured on: the command, the machine, the versions and how busy it was."""
    import platform

    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "?")
        with open("/proc/meminfo") as f:
            memory = f.readline().split()[1]
        memory = f"{int(memory) / 2**20:.0f} GiB"
    except OSError:
        cpu, memory = platform.processor() or "?", "?"
    versions = []
    for module in ("pyspark", "pyarrow", "numba", "confluent_kafka"):
        try:
            versions.append(f"{module} {__import__(module).__version__}")
        except Exception:  # noqa: BLE001 - a missing module is worth reporting, not failing for
            versions.append(f"{module} absent")
    print(f"command: python {' '.join(sys.argv)}")
    print(f"date: {time.strftime('%Y-%m-%d %H:%M %Z')}; machine: {os.cpu_count()} cores ({cpu}), {memory}, "
          f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"python {platform.python_version()}; {'; '.join(versions)}", flush=True)


def parse_args(description: str, default_records: int, revision: bool = False) -> argparse.Namespace:
    """The benchmarks' common arguments; ``revision``: also ``--revision``, another version of kwire to run beside
    this checkout (``versions_side_by_side.export_renamed``)."""
    parser = argparse.ArgumentParser(description=description)
    if revision:
        parser.add_argument("--revision", help="a git revision of kwire to read with beside this checkout")
    parser.add_argument("--records", type=int, default=default_records)
    parser.add_argument("--record-size", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--compression", default="lz4")
    parser.add_argument("--bootstrap", help="an existing cluster; default: start a local broker")
    return parser.parse_args()


# A broker's log directory needs at most a few GiB in a benchmark; below this much free memory it stays on disk.
TMPFS_BROKER_MIN_FREE = 8 << 30


def broker_workdir() -> str | None:
    """Where a benchmark's broker keeps its logs: a folder in /dev/shm (memory) unless KWIRE_BENCH_BROKER_DIR names
    another parent folder (e.g. /tmp, to measure on disk) or /dev/shm is missing or short of space.

    Why memory: this machine's disk (ext4 with online discard, on a VM's virtual disk) stalls a broker's fsyncs
    (KRaft's metadata log, checkpoints, new partitions' files) for seconds at a time, in bursts: a 64-partition
    batch write took 2.5 to 5.5 s in half of the rounds and 0.8 to 1.2 s in the others, for every connector
    alike (Spark's built-in one too), and the median depended on which connector's turns fell into a burst. With
    the broker's logs in memory no round stalled: 0.45 to 0.75 s for kwire, 0.58 to 1.44 s for Spark's sink
    (benchmarks/results/versions_side_by_side-write-tmpfs-2026-11-29.txt). What the benchmarks compare is the
    connectors' work, on the same broker.
    """
    parent = os.environ.get("KWIRE_BENCH_BROKER_DIR") or "/dev/shm"
    short_of_memory = not os.path.isdir(parent) or shutil.disk_usage(parent).free < TMPFS_BROKER_MIN_FREE
    if parent == "/dev/shm" and short_of_memory:
        return None  # the harness's default: a folder in the temporary directory
    return tempfile.mkdtemp(prefix="kwire-kafka-", dir=parent)


@contextlib.contextmanager
def broker(args):
    if args.bootstrap:
        yield args.bootstrap
        return
    from harness import KafkaCluster

    workdir = broker_workdir()
    print(f"broker logs in {workdir or tempfile.gettempdir()}", flush=True)
    with KafkaCluster(1, heap="2g", workdir=workdir) as cluster:
        yield cluster.bootstrap_servers


def spark_session():
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    # Spark's Python workers import the benchmarks' own data sources (null_sink.py) as they import kwire.
    here = str(Path(__file__).resolve().parent)
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if here not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([here, *paths])
    from pyspark.sql import SparkSession

    from harness import spark_kafka_connector_jars

    spark = (SparkSession.builder.master("local[2]").appName("kwire-bench")
             .config("spark.jars", ",".join(spark_kafka_connector_jars()))
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", "4g")
             .config("spark.sql.shuffle.partitions", "2").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def report(title: str, records: int, seconds: dict[str, list[float]], baseline: str, contender: str = "kwire") -> None:
    print(f"\n{title}")
    medians = {}
    for name, runs in seconds.items():
        medians[name] = statistics.median(runs)
        per_run = ", ".join(f"{records / s / 1e3:,.0f}k" for s in runs)
        print(f"  {name:<24} median {records / medians[name]:>12,.0f} records/s   (runs: {per_run})")
    ratio = medians[baseline] / medians[contender]
    print(f"  ratio {contender} / {baseline}: {ratio:.2f}x")
