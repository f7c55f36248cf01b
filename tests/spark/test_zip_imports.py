"""In Spark's Python workers, zipimporters re-read pyspark.zip only when it changed (spark/workers/zip_imports.py).

Each check runs a fresh interpreter that imports PySpark from pyspark.zip first on its path, as Spark's workers do,
and counts the archive directory reads importlib.invalidate_caches() causes (PySpark 4.0 and 4.1 call it at the
start of every call into a worker). About 2 s each."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pyspark

PYSPARK_ZIP = os.path.join(os.path.dirname(pyspark.__file__), "python", "lib", "pyspark.zip")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = """
    import importlib, json, os, sys, types, zipimport
    if sys.argv[1] == "worker":  # what PySpark's daemon is in the workers it forks
        sys.modules["__main__"].__spec__ = types.SimpleNamespace(name="pyspark.daemon")
    import pyspark.sql.datasource, pyspark.sql.worker.python_streaming_sink_runner  # from pyspark.zip
    assert ".zip" in pyspark.__file__, pyspark.__file__
    reads = []
    real_read = zipimport._read_directory
    zipimport._read_directory = lambda archive: reads.append(archive) or real_read(archive)

    def reads_of_one_invalidation():
        reads.clear()
        importlib.invalidate_caches()
        return len(reads)

    before = reads_of_one_invalidation()
    from spark_kwire.spark import source  # noqa: F401 -- what Spark's planning of a kwire write imports
    installed = zipimport.zipimporter.invalidate_caches.__module__ == "spark_kwire.spark.workers.zip_imports"
    after = [reads_of_one_invalidation(), reads_of_one_invalidation()]
    archive = pyspark.__file__.split(".zip")[0] + ".zip"
    stat = os.stat(archive)
    os.utime(archive, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))  # the archive changed: read again
    changed = reads_of_one_invalidation()
    import pyspark.sql.worker.write_into_data_source  # noqa: F401 -- still imports from the zip
    print(json.dumps({"before": before, "installed": installed, "after": after, "changed": changed}))
"""


def _run(kind: str, folder) -> dict:
    archive = str(shutil.copy(PYSPARK_ZIP, folder / "pyspark.zip"))  # a copy: the check changes its modification time
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([archive, REPO])}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(SCRIPT), kind], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_spark_worker_running_kwire_reads_pyspark_zip_again_only_when_it_changed(tmp_path):
    got = _run("worker", tmp_path)
    assert got["before"] >= 5  # one read per zipimporter (package directory) of pyspark.zip
    assert got["installed"] and got["after"] == [0, 0]
    assert 1 <= got["changed"] <= got["before"]  # the importers of the archive that changed (not py4j's)


def test_a_driver_or_notebook_process_keeps_pythons_own_invalidation(tmp_path):
    got = _run("driver", tmp_path)
    assert not got["installed"] and got["after"] == [got["before"]] * 2 and got["before"] >= 5
