"""kwire spares the full garbage collection PySpark runs after every call in a reused Python worker.

Checked in Spark's own workers, through the statistics kwire's read tasks write (KWIRE_STATS_DIR), and, in
fresh interpreters, the rule that decides when to freeze (only in workers forked by PySpark's daemon; again
only after new imports).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from spark_kwire.spark.workers.garbage_collection import freeze_loaded_objects
from tests.spark.read_stats import read_stats_for


def test_spark_workers_reading_with_kwire_have_frozen_what_stays_loaded(spark, bootstrap, create_topic, topic_name,
                                                                         read_stats_dir):
    create_topic(topic_name, partitions=4)
    rows = spark.range(2000, numPartitions=2).selectExpr("cast(id AS string) AS key", "repeat('v', 50) AS value")
    rows.write.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("topic", topic_name) \
        .mode("append").save()
    for _ in range(3):
        df = spark.read.format("kwire").option("kafka.bootstrap.servers", bootstrap) \
            .option("subscribe", topic_name).option("packPartitions", "false").load()
        assert df.count() == 2000
    stats = read_stats_for(read_stats_dir, topic_name)
    assert len(stats) == 3 * 4, stats
    # Each task's worker had frozen pyspark, pyarrow, numba and kwire (tens of thousands of objects) before
    # reading: PySpark's full collection after the task skips them.
    assert all(s["worker_objects_frozen"] > 30_000 for s in stats), [s["worker_objects_frozen"] for s in stats]


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_driver_or_notebook_process_is_never_frozen():
    import gc

    before = gc.get_freeze_count()
    assert freeze_loaded_objects() is False
    assert gc.get_freeze_count() == before


def test_a_daemon_worker_freezes_once_then_again_only_after_new_imports():
    out = _run("""
        import gc, sys, types
        sys.modules["__main__"].__spec__ = types.SimpleNamespace(name="pyspark.daemon")
        from spark_kwire.spark.workers.garbage_collection import freeze_loaded_objects
        first = freeze_loaded_objects()
        frozen = gc.get_freeze_count()
        again = freeze_loaded_objects()
        import colorsys, fractions  # noqa: F401 -- new modules since the last freeze
        after_imports = freeze_loaded_objects()
        print(first, frozen > 1000, again, after_imports, gc.get_freeze_count() > frozen)
    """)
    assert out == "True True False True True"
