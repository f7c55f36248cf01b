"""kwire's opt-in worker daemon (``spark.python.daemon.module=spark_kwire.spark.workers.daemon``): Spark starts it, it
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
    # a read first, in new workers; then a write (after which Spark's own write worker imports pandas)
    row = spark.read.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic) \
        .load().selectExpr("count(*) AS n", "sum(length(value)) AS bytes").collect()[0]
    rows = spark.range(2000, numPartitions=2).selectExpr("CAST(id AS STRING) AS key", "repeat('v', 50) AS value")
    rows.write.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("topic", topic + "-out") \
        .mode("append").save()

    def look(_):
        main = sys.modules["__main__"]
        with open(f"/proc/{os.getppid()}/status") as f:
            daemon_threads = int(next(line.split()[1] for line in f if line.startswith("Threads:")))
        from spark_kwire.protocol.records.compilation import warming
        decode = warming.timings().get("decode", {})
        return json.dumps({"main": getattr(getattr(main, "__spec__", None), "name", None),
                           "preloaded": getattr(main, "loaded", None), "daemon_threads": daemon_threads,
                           "numba": "numba" in sys.modules, "decode_ready": warming.is_ready("decode"),
                           "decode_loaded_by_parent": decode.get("pid") not in (None, os.getpid())})

    (worker,) = spark.sparkContext.parallelize([0], 1).map(look).collect()
    spark.stop()
    print(json.dumps({"rows": [row.n, row.bytes], "worker": json.loads(worker)}))
""")


def run_session(bootstrap: str, topic: str, daemon: str, stats_dir, create_topic, produce) -> dict:
    create_topic(topic, partitions=4)
    create_topic(topic + "-out", partitions=4)
    produce(topic, [(str(i).encode(), b"v" * 50) for i in range(2000)])
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env.update(PYSPARK_PYTHON=sys.executable, KWIRE_STATS_DIR=str(stats_dir),
               KWIRE_PROFILE=str(stats_dir / "profile" / "writes.jsonl"))
    (stats_dir / "profile").mkdir(exist_ok=True)
    out = subprocess.run([sys.executable, "-c", CHILD, bootstrap, topic, daemon], env=env, capture_output=True,
                         text=True, timeout=600, cwd=stats_dir)
    assert out.returncode == 0, out.stderr[-4000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_workers_forked_from_kwires_daemon_start_with_kwire_and_its_kernels_loaded(bootstrap, create_topic, produce,
                                                                                    topic_name, tmp_path):
    warm_up()  # numba's cache holds every path (as after `make setup`), so the daemon has them to load
    result = run_session(bootstrap, topic_name, "spark_kwire.spark.workers.daemon", tmp_path, create_topic, produce)
    assert result["rows"] == [2000, 2000 * 50]
    worker = result["worker"]
    assert worker["main"] == "spark_kwire.spark.workers.daemon", worker  # Spark used kwire's daemon
    assert worker["preloaded"]["worker_module"] == "pyspark.worker", worker  # the tasks' daemon
    assert "spark_kwire.spark.reading.reader" in worker["preloaded"]["modules"], worker
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


def test_without_the_setting_new_workers_import_neither_numba_nor_pandas_for_small_queries(
        bootstrap, create_topic, produce, topic_name, tmp_path):
    warm_up()  # numba's cache holds every path: small calls still run on the pure-Python kernels
    result = run_session(bootstrap, topic_name, "-", tmp_path, create_topic, produce)
    assert result["rows"] == [2000, 2000 * 50]
    assert result["worker"]["main"] == "pyspark.daemon" and result["worker"]["preloaded"] is None
    assert not result["worker"]["decode_ready"]  # (its own kernels, loaded only when a call needs them)
    reads = read_stats_for(tmp_path, topic_name)
    with open(tmp_path / "profile" / "writes.jsonl", encoding="utf-8") as f:
        writes = [json.loads(line) for line in f]
    assert reads and writes
    # importing numba and loading kernels (half a second) and pandas (a third) would cost more than these calls;
    # (a worker's later tasks may find pandas, imported by Spark's own write worker after a write task)
    firsts = reads + [task for task in writes if task["task_in_process"] == 1]
    assert all(task["imported"] == [] for task in firsts), [t["imported"] for t in firsts]
    assert all(task["kernels"]["pure_seconds"] > 0 for task in reads + writes)


def test_only_the_tasks_daemon_loads_numba():
    code = textwrap.dedent("""
        import json, sys
        from spark_kwire.spark.workers import daemon
        done = daemon.preload(sys.argv[1])
        print(json.dumps({"numba": "numba" in sys.modules, "kernels": done["kernels"], "modules": done["modules"]}))
    """)
    results = {}
    for module in ("pyspark.sql.worker.plan_data_source_read", "pyspark.worker"):
        out = subprocess.run([sys.executable, "-c", code, module], capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-3000:]
        results[module] = json.loads(out.stdout.strip().splitlines()[-1])
    planning, tasks = results["pyspark.sql.worker.plan_data_source_read"], results["pyspark.worker"]
    assert not planning["numba"] and planning["kernels"] == {}
    assert "spark_kwire.spark.reading.batch" in planning["modules"] and "spark_kwire.spark.reading.reader" not in planning["modules"]
    assert tasks["numba"] and tasks["kernels"].get("decode") in ("loaded", "ready")


def test_in_a_new_environment_the_daemon_loads_what_its_helper_compiled_before_the_next_fork(tmp_path):
    code = textwrap.dedent("""
        import json, os, sys
        from spark_kwire.spark.workers import daemon
        from spark_kwire.protocol.records.compilation import background as background_compile, warming
        first = dict(daemon.preload("pyspark.worker")["kernels"])
        assert all(background_compile.wait(p, 600) for p in ("decode", "partition", "encode"))
        assert not warming.is_ready("decode")  # cached by the helper, not loaded here yet
        pid = os.fork()
        if pid == 0:
            os._exit(0 if all(warming.is_ready(p) for p in ("decode", "partition", "encode")) else 3)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"first": first, "after": daemon.loaded["kernels"],
                          "child": os.waitstatus_to_exitcode(status)}))
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "KWIRE_"))}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "cache")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["first"]["decode"] == "compiling in a helper", result
    assert result["after"]["decode"] == "loaded before a fork", result
    assert result["child"] == 0  # the forked worker started with the kernels the helper compiled
