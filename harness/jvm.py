"""How the test suite's Java processes run: lean JVMs, for short lives on a busy machine.

The suite starts dozens of brokers and Spark drivers, each living seconds to minutes and moving little data, on
CI's two cores, where compiling and collecting garbage is what they mostly spend CPU on. With
:func:`use_lean_jvms` (called by ``tests/conftest.py``; benchmarks never call it, their JVMs run as users' do):

* every JVM of the harness (brokers, Kafka's tools) and every Spark driver started through ``spark-submit``
  (PySpark's local sessions, Spark Connect servers, the pipelines CLI, subprocess jobs: ``SPARK_SUBMIT_OPTS``,
  inherited by child processes) compiles with C1 only and collects with the serial collector;
* brokers and Kafka's tools load the Kafka classes a broker uses from a class-data-sharing archive, and Spark
  drivers the classes a kwire write, read and stream load from another, each dumped once by
  :func:`dump_class_archives` (``make setup``, for the PySpark of ``.venv``) and named after the JDK and the jars
  it was made from, so a changed JDK or jar set (another PySpark: the older releases' runs) finds no archive and
  runs without, never with a mismatched one.

Measured on this machine (``/proc`` CPU of each process): a broker through start, 400k records in and out and
20 s idle used 11.4 CPU-s by default, 5.8 lean, 4.3 lean with the archive; the Spark drivers of three Spark test
files 114 CPU-s by default and 58 lean, for the same wall time; a Spark driver's start and first query
12.8-16.6 CPU-s lean, 7.5-8.9 lean with the archive.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
ARCHIVE_DIR = REPO_ROOT / ".kwire" / "jvm"
LEAN_ENV = "KWIRE_LEAN_JVM"
LEAN_JVM_OPTIONS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
# a stale or foreign archive is ignored by the JVM; these keep it from saying so on stdout, which tests parse
_QUIET_SHARING = "-Xlog:cds=off,cds+dynamic=off"

__all__ = ["use_lean_jvms", "lean_jvms", "harness_jvm_options", "kafka_class_archive", "spark_class_archive",
           "dump_class_archives", "LEAN_JVM_OPTIONS"]


def use_lean_jvms() -> None:
    """Run this process's harness JVMs and Spark drivers, and those of its child processes, lean."""
    os.environ[LEAN_ENV] = "1"
    submit = os.environ.get("SPARK_SUBMIT_OPTS", "").split()
    missing = [option for option in (*LEAN_JVM_OPTIONS, *_sharing(spark_class_archive())) if option not in submit]
    os.environ["SPARK_SUBMIT_OPTS"] = " ".join([*submit, *missing])


def lean_jvms() -> bool:
    return os.environ.get(LEAN_ENV) == "1"


def _archive(name: str, lib_dir: Path) -> Path:
    java = Path(shutil.which("java") or "java").resolve()
    jars = sorted((p.name, p.stat().st_size) for p in lib_dir.glob("*.jar"))
    key = hashlib.sha256(repr((str(java), java.stat().st_mtime if java.exists() else 0, str(lib_dir), jars,
                               LEAN_JVM_OPTIONS)).encode()).hexdigest()[:16]
    return ARCHIVE_DIR / f"{name}-{key}.jsa"


def kafka_class_archive(lib_dir: Path) -> Path:
    """Where the class-data-sharing archive of the Kafka jars in `lib_dir`, for this JDK, is (or goes)."""
    return _archive("kafka", lib_dir)


def spark_class_archive() -> Path | None:
    """Where the class-data-sharing archive of this Python's PySpark jars, for this JDK, is (or goes); None
    without PySpark."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.origin:
        return None
    return _archive("spark", Path(spec.origin).parent / "jars")


def harness_jvm_options(lib_dir: Path) -> list[str]:
    """The JVM options of a harness process running from the Kafka jars in `lib_dir` (none unless lean)."""
    if not lean_jvms():
        return []
    return [*LEAN_JVM_OPTIONS, *_sharing(kafka_class_archive(lib_dir))]


def _sharing(archive: Path | None) -> list[str]:
    """The options that load classes from `archive`, when it exists."""
    return [f"-XX:SharedArchiveFile={archive}", _QUIET_SHARING] if archive is not None and archive.exists() else []


def dump_class_archives() -> None:
    """The Kafka archive, then this Python's Spark archive, each unless it exists: a lean broker given some work,
    then a lean Spark driver writing, reading and streaming through kwire on a broker, keeping the classes each
    loaded."""
    from harness.kafka_cluster import KafkaCluster
    from harness.paths import kafka_lib_dir

    os.environ[LEAN_ENV] = "1"
    ARCHIVE_DIR.mkdir(parents=True, exist_ok=True)
    kafka_archive = kafka_class_archive(kafka_lib_dir())
    if not kafka_archive.exists():
        partial = kafka_archive.with_suffix(f".{os.getpid()}.partial")
        with KafkaCluster(1, broker_jvm_options=[f"-XX:ArchiveClassesAtExit={partial}", _QUIET_SHARING]) as cluster:
            _exercise(cluster.bootstrap_servers)
        _keep(partial, kafka_archive, "the broker")
    spark_archive = spark_class_archive()
    if spark_archive is None or spark_archive.exists():
        return
    partial = spark_archive.with_suffix(f".{os.getpid()}.partial")
    with KafkaCluster(1) as cluster, tempfile.TemporaryDirectory() as scratch:
        _exercise(cluster.bootstrap_servers)
        options = " ".join([*LEAN_JVM_OPTIONS, f"-XX:ArchiveClassesAtExit={partial}", _QUIET_SHARING])
        done = subprocess.run([sys.executable, "-c", _SPARK_WORK, cluster.bootstrap_servers, scratch],
                              env={**os.environ, "SPARK_SUBMIT_OPTS": options, "PYSPARK_PYTHON": sys.executable},
                              capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"the Spark driver making the class archive failed:\n{done.stdout}{done.stderr}"[-4000:])
    _keep(partial, spark_archive, "the Spark driver")


def _keep(partial: Path, archive: Path, who: str) -> None:
    if not partial.exists():
        raise RuntimeError(f"{who} left no class archive at {partial}")
    partial.replace(archive)


_SPARK_WORK = """
import sys
from pyspark.sql import SparkSession
bootstrap, scratch = sys.argv[1], sys.argv[2]
spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false").getOrCreate())
kafka = {"kafka.bootstrap.servers": bootstrap}
rows = spark.range(2000).selectExpr("cast(id as string) as key", "cast(id as string) as value")
rows.write.format("kwire").options(**kafka).option("topic", "class-archive").mode("append").save()
read = spark.read.format("kwire").options(**kafka).option("subscribe", "class-archive").load()
read.groupBy("partition").count().collect()
stream = spark.readStream.format("kwire").options(**kafka).option("subscribe", "class-archive").load()
query = (stream.selectExpr("key", "value").writeStream.format("noop").option("checkpointLocation", scratch)
         .trigger(availableNow=True).start())
query.awaitTermination()
driver = spark.sparkContext._gateway.proc
spark.stop()
driver.stdin.close()  # the driver exits at the end of its input, writing the archive as it goes
driver.wait(timeout=300)
"""


def _exercise(bootstrap: str) -> None:
    """Topic creation, produce and fetch on `bootstrap`: the broker paths most tests take."""
    import pyarrow as pa

    from spark_kwire.client import Admin, KafkaClient, Producer, fetch_range

    with KafkaClient({"bootstrap.servers": bootstrap}) as client:
        Admin(client).create_topics([("class-archive", 2, 1)])
        with Producer(client) as producer:
            for partition in range(2):
                producer.send_batch("class-archive", partition, pa.array([b"x" * 100] * 1000, pa.binary()))
            producer.flush()
        for partition in range(2):
            list(fetch_range(client, "class-archive", partition, 0, 1000))
