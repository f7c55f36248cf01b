"""The example pipeline (notebooks/pipeline) under the real `spark-pipelines` CLI, on every release that has Spark
Declarative Pipelines (`make test` runs this file on 4.0 to 4.3; 4.1 brought pyspark.pipelines).

The CLI starts a local Spark Connect server of the running PySpark, whose Python workers import kwire (the checkout
through PYTHONPATH in development, the wheel in the per-release runs). A Hive metastore in Derby (the project's
conf/spark-defaults.conf) keeps the pipeline's tables between runs, as a user's local setup would. The sink topic is
counted by confluent-kafka: the first run writes every record once, the second only the records added since, and
`--full-refresh-all` reads the topic from the start again.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from spark_kwire.spark.capabilities import PIPELINES

REPO = Path(__file__).resolve().parents[2]
PROJECT = REPO / "notebooks" / "pipeline"
RUN_TIMEOUT_S = 600
# The CLI's local Spark Connect server listens on Spark's fixed port 15002 (its client connects to sc://localhost),
# so two runs at once (`make test` runs the release suites side by side) make the second fail with BindException:
# runs on this machine take turns through this lock.
CONNECT_PORT_LOCK = Path("/tmp/kwire-spark-connect-15002.lock")
FIRST, SECOND = 12, 5


def _orders(start: int, count: int) -> list[tuple[str, dict]]:
    return [(f"order-{i}", {"amount": 25.0 * i, "country": ("FR", "DE", "NL")[i % 3]})
            for i in range(start, start + count)]


def _expected(order_id: str, order: dict) -> dict:
    """What orders.sql and the append flow make of an order: the sink record's value."""
    return {"order_id": order_id, "amount": order["amount"], "country": order["country"],
            "large": order["amount"] >= 100}


def _sink_records(bootstrap: str, topic: str, start: dict[int, int] | None = None) -> list[tuple[str, dict]]:
    """(key, value) of every record of the sink topic after ``start`` offsets, read by confluent-kafka up to the
    high watermarks."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"pipeline-{uuid.uuid4().hex[:8]}",
                         "enable.auto.commit": False})
    try:
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1] for p in (0, 1)}
        begins = start or {0: 0, 1: 0}
        consumer.assign([TopicPartition(topic, p, begins[p]) for p in (0, 1) if ends[p] > begins[p]])
        got = []
        while len(got) < sum(ends[p] - begins[p] for p in (0, 1)):
            for m in consumer.consume(500, timeout=5):
                assert m.error() is None, m.error()
                got.append((m.key().decode(), json.loads(m.value())))
        return sorted(got, key=lambda r: r[0])
    finally:
        consumer.close()


def _ends(bootstrap: str, topic: str) -> dict[int, int]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"pipeline-{uuid.uuid4().hex[:8]}"})
    try:
        return {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1] for p in (0, 1)}
    finally:
        consumer.close()


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A copy of the example project with its storage in a temporary folder (the spec's is a placeholder) and the
    test session's Spark settings beside the project's own."""
    work = tmp_path_factory.mktemp("pipeline") / "project"
    shutil.copytree(PROJECT, work, ignore=shutil.ignore_patterns("__pycache__"))
    spec = work / "spark-pipeline.yml"
    text = spec.read_text()
    assert "file:///tmp/kwire_orders/pipeline-storage" in text
    spec.write_text(text.replace("file:///tmp/kwire_orders/pipeline-storage", (work / "pipeline-storage").as_uri()))
    with (work / "conf" / "spark-defaults.conf").open("a") as conf:
        conf.write("\nspark.ui.enabled false\n"
                   "spark.python.authenticate.socketTimeout 120s\n")
    return work


def _run(project: Path, bootstrap: str, topics: dict[str, str], *args: str) -> tuple[float, str]:
    """Run `spark-pipelines run ARGS` in the project folder: (seconds, its output)."""
    cli = Path(sys.executable).parent / "spark-pipelines"
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, SPARK_CONF_DIR=str(project / "conf"),
               KWIRE_BOOTSTRAP=bootstrap, KWIRE_ORDERS_TOPIC=topics["orders"], KWIRE_OUT_TOPIC=topics["out"])
    with CONNECT_PORT_LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        started = time.monotonic()
        done = subprocess.run([str(cli), "run", *args], cwd=project, env=env, capture_output=True, text=True,
                              timeout=RUN_TIMEOUT_S)
        took = time.monotonic() - started
    output = done.stdout + done.stderr
    assert done.returncode == 0 and "Run is COMPLETED" in output, output[-6000:]
    return took, output


needs_pipelines = pytest.mark.skipif(not PIPELINES, reason=f"{PIPELINES.name} came with {PIPELINES.since}; this "
                                                            f"PySpark has none (the test below checks that)")


@pytest.fixture(scope="module")
def first_run(project, bootstrap, create_topic, produce) -> dict:
    """A first run of the pipeline over orders produced before it: what a test needs to check it."""
    import yaml  # noqa: F401 - the CLI needs PyYAML (pyspark[pipelines]); pyproject's [test] extra brings it

    topics = {"orders": create_topic(f"orders-{uuid.uuid4().hex[:8]}", partitions=2),
              "out": create_topic(f"orders-checked-{uuid.uuid4().hex[:8]}", partitions=2)}
    first = _orders(0, FIRST)
    produce(topics["orders"], [(k, json.dumps(v)) for k, v in first])
    took, output = _run(project, bootstrap, topics)
    print(f"spark-pipelines run: {took:.1f} s")
    return dict(topics=topics, first=first, output=output, after_first=_ends(bootstrap, topics["out"]),
                sink_first=_sink_records(bootstrap, topics["out"]))


@pytest.fixture(scope="module")
def two_runs(project, bootstrap, produce, first_run) -> dict:
    """The first run, then orders produced and a second run."""
    topics = first_run["topics"]
    second = _orders(FIRST, SECOND)
    produce(topics["orders"], [(k, json.dumps(v)) for k, v in second])
    took, _ = _run(project, bootstrap, topics)
    print(f"spark-pipelines run (second): {took:.1f} s")
    return dict(first_run, second=second, sink_second=_sink_records(bootstrap, topics["out"], first_run["after_first"]),
                after_second=_ends(bootstrap, topics["out"]))


@needs_pipelines
def test_the_example_pipeline_writes_each_record_once(first_run):
    """(The older releases' runs stop here: each CLI run costs a Spark Connect server and a Hive metastore; the
    newest release's suite also runs the second run and the full refresh below.)"""
    for table in ("orders_raw", "orders_checked", "orders_per_partition", "orders_by_country"):
        assert f"Flow spark_catalog.default.{table} has COMPLETED" in first_run["output"], first_run["output"][-4000:]
    assert first_run["sink_first"] == sorted((k, _expected(k, v)) for k, v in first_run["first"])


@needs_pipelines
def test_a_second_run_writes_only_the_new_records(two_runs):
    assert two_runs["sink_second"] == sorted((k, _expected(k, v)) for k, v in two_runs["second"])


@needs_pipelines
def test_a_full_refresh_reads_the_topic_from_the_start_again(project, bootstrap, two_runs):
    took, _ = _run(project, bootstrap, two_runs["topics"], "--full-refresh-all")
    print(f"spark-pipelines run --full-refresh-all: {took:.1f} s")
    assert _sink_records(bootstrap, two_runs["topics"]["out"], two_runs["after_second"]) == sorted(
        (k, _expected(k, v)) for k, v in two_runs["first"] + two_runs["second"])


@pytest.mark.skipif(bool(PIPELINES), reason="this PySpark has pyspark.pipelines: the test above runs the pipeline")
def test_without_pipelines_the_release_that_brings_them_is_named():
    """On Spark 4.0 there is no pyspark.pipelines and no spark-pipelines CLI; the docs say pipelines need 4.1."""
    assert not (Path(sys.executable).parent / "spark-pipelines").exists()
    assert PIPELINES.since == "Spark 4.1"
    page = REPO / "docs" / "sql-and-pipelines.md"
    assert "Spark 4.1" in page.read_text() and "4.0" in page.read_text()
