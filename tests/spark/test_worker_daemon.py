"""kwire's opt-in worker daemon (``spark.python.daemon.module=spark_kwire.spark.daemon``): Spark starts it, it
loads kwire and the cached kernels before forking, and the workers Spark forks from it read and write with
what it loaded, without loading anything themselves.

Each case runs a Spark session of its own in a child process (the setting is read when Spark starts).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from harness import spark_kafka_connector_jars
from spark_kwire.protocol.records import kernels, warm_up
from tests.spark.read_stats import read_stats_for

pytestmark = pytest.mark.skipif(kernels.IMPLEMENTATION != "numba", reason="nothing to preload without numba")

CHILD = textwrap.dedent("""
    import json, os, sys
    from pyspark.sql import SparkSession

    bootstrap, topic, daemon = sys.argv[1], sys.argv[2], sys.argv[3]
    builder = (SparkSession.builder.master("local[2]").appName("kwire-daemon-test")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.python.authenticate.socketTimeout", "120s"))
    if daemon != "-":
        builder = builder.config("spark.python.daemon.module", daemon)
    spark = builder.getOrCreate()
    rows = spark.range(2000, numPartitions=2).selectExpr("CAST(id AS STRING) AS key", "repeat('v', 50) AS value")
    rows.write.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("topic", topic) \\
        .mode("append").save()
    row = spark.read.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic) \\
        .load().selectExpr("count(*) AS n", "sum(length(value)) AS bytes").collect()[0]

    def look(_):
        main = sys.modules["__main__"]
        with open(f"/proc/{os.getppid()}/status") as f:
            daemon_threads = int(next(line.split()[1] for line in f if line.startswith("Threads:")))
        from spark_kwire.protocol.records import warming
        decode = warming.timings().get("decode", {})
        return json.dumps({"main": getattr(getattr(main, "__spec__", None), "name", None),
                           "preloaded": getattr(main, "loaded", None), "daemon_threads": daemon_threads,
                           "numba": "numba" in sys.modules, "decode_ready": warming.is_ready("decode"),
                           "decode_loaded_by_parent": decode.get("pid") not in (None, os.getpid())})

    (worker,) = spark.sparkContext.parallelize([0], 1).map(look).collect()
    spark.stop()
    print(json.dumps({"rows": [row.n, row.bytes], "worker": json.loads(worker)}))
""")


def run_session(bootstrap: str, topic: str, daemon: str, stats_dir) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env.update(PYSPARK_PYTHON=sys.executable, KWIRE_STATS_DIR=str(stats_dir))
    out = subprocess.run([sys.executable, "-c", CHILD, bootstrap, topic, daemon], env=env, capture_output=True,
                         text=True, timeout=600, cwd=stats_dir)
    assert out.returncode == 0, out.stderr[-4000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_workers_forked_from_kwires_daemon_start_with_kwire_and_its_kernels_loaded(bootstrap, create_topic,
                                                                                    topic_name, tmp_path):
    warm_up()  # numba's cache holds every path (as after `make setup`), so the daemon has them to load
    create_topic(topic_name, partitions=4)
    result = run_session(bootstrap, topic_name, "spark_kwire.spark.daemon", tmp_path)
    assert result["rows"] == [2000, 2000 * 50]
    worker = result["worker"]
    assert worker["main"] == "spark_kwire.spark.daemon", worker  # Spark used kwire's daemon
    assert "spark_kwire.spark.reader" in worker["preloaded"]["modules"], worker
    assert worker["preloaded"]["kernels"]["decode"] == "loaded", worker
    assert worker["numba"] and worker["decode_ready"] and worker["decode_loaded_by_parent"], worker
    # no Python thread at fork; native ones only pyarrow's allocator's and OpenBLAS's, which reset after a fork
    assert worker["preloaded"]["python_threads"] == 1, worker
    assert set(worker["preloaded"]["native_threads"]) <= {"python", "jemalloc_bg_thd"}, worker
    assert worker["daemon_threads"] == len(worker["preloaded"]["native_threads"]), worker
    stats = read_stats_for(tmp_path, topic_name)
    assert stats and all(s["kernels"]["decode"]["pid"] != s["pid"] for s in stats), stats
    # the read tasks' workers did not load the decoder themselves: it came with the fork
    assert all(s["kernels"]["pure_seconds"] == 0 for s in stats), stats


def test_without_the_setting_workers_come_from_pysparks_daemon(bootstrap, create_topic, topic_name, tmp_path):
    create_topic(topic_name, partitions=2)
    result = run_session(bootstrap, topic_name, "-", tmp_path)
    assert result["rows"] == [2000, 2000 * 50]
    assert result["worker"]["main"] == "pyspark.daemon" and result["worker"]["preloaded"] is None
    assert not result["worker"]["decode_ready"]  # (its own kernels, loaded only when a call needs them)
