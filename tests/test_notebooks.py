"""The notebooks run as published.

* ``notebooks/quickstart.ipynb`` is executed with nbclient in a kernel that runs this virtualenv's Python (kwire as
  this virtualenv installed it: the wheel in `make test`'s per-release runs, on PySpark 4.0 to 4.3), against the
  session's test broker (``KWIRE_BOOTSTRAP``), and its printed results are checked.
* ``notebooks/databricks_quickstart.py`` (Databricks notebook source) has its Python cells executed in this process
  against a local SASL_SSL + SCRAM-SHA-512 broker, with the Databricks-only names stubbed: ``dbutils`` (widgets,
  secrets, library), ``display`` and ``spark`` (the test session). ``%pip`` / ``%md`` cells are skipped.

Regenerate the outputs committed in the quickstart notebook (starts its own broker when KWIRE_BOOTSTRAP is unset)::

    .venv/bin/python tests/test_notebooks.py --save
"""

from __future__ import annotations

import ast
import json
import os
import re
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from spark_kwire.spark.capabilities import FILTER_PUSHDOWN, READ_LIMIT_API

REPO = Path(__file__).resolve().parent.parent
QUICKSTART = REPO / "notebooks" / "quickstart.ipynb"
DATABRICKS = REPO / "notebooks" / "databricks_quickstart.py"
KERNEL_NAME = "kwire-venv"


# -- quickstart.ipynb ---------------------------------------------------------------------------------

def _kernelspec_dir(root: Path, env: dict[str, str]) -> Path:
    """A Jupyter data dir holding one kernelspec that starts this interpreter (the venv's Python)."""
    spec_dir = root / "kernels" / KERNEL_NAME
    spec_dir.mkdir(parents=True, exist_ok=True)
    (spec_dir / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "spark-kwire venv",
        "language": "python",
        "env": env,
    }))
    return root


def execute_quickstart(bootstrap: str | None, timeout: int = 300, registry: str | None = None):
    """Run quickstart.ipynb top to bottom in a fresh kernel; returns (executed notebook, seconds)."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(QUICKSTART, as_version=4)
    # The kernel and the Spark workers it starts import kwire as this virtualenv installed it (the wheel, in
    # make test's per-release runs), never through a PYTHONPATH pointing at the checkout.
    env = {"PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1",
           "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
    if bootstrap:
        env["KWIRE_BOOTSTRAP"] = bootstrap
    if registry:
        env["KWIRE_SCHEMA_REGISTRY"] = registry
    with tempfile.TemporaryDirectory(prefix="kwire-kernels-") as jupyter_dir:
        _kernelspec_dir(Path(jupyter_dir), env)
        previous = os.environ.get("JUPYTER_PATH")
        os.environ["JUPYTER_PATH"] = jupyter_dir + (os.pathsep + previous if previous else "")
        try:
            client = NotebookClient(nb, kernel_name=KERNEL_NAME, timeout=timeout,
                                    resources={"metadata": {"path": str(QUICKSTART.parent)}})
            started = time.monotonic()
            client.execute()
            elapsed = time.monotonic() - started
        finally:
            if previous is None:
                os.environ.pop("JUPYTER_PATH", None)
            else:
                os.environ["JUPYTER_PATH"] = previous
    # Keep the committed notebook generic: the kernel it names is the default one, not this test's.
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb, elapsed


def _stream_text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream"
                   and o.get("name") == "stdout")


def _all_text(nb) -> str:
    return "\n".join(_stream_text(c) for c in nb.cells if c.cell_type == "code")


def check_quickstart_outputs(nb, *, broker: str, pushdown: bool) -> None:
    """The printed results of an executed quickstart.ipynb; `broker` is what its first cell says it used,
    `pushdown` whether the kernel's PySpark has filter pushdown for Python data sources (Spark 4.1+)."""
    text = _all_text(nb)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors, errors

    assert f"broker: {broker}" in text
    assert "True {0: 0, 1: 0, 2: 0}" in text  # the topic exists and is empty
    assert "total: 1000" in text
    assert "rows: 1000" in text
    assert re.search(r"\|\s*click\|\s*334\|", text) and re.search(r"\|\s*view\|\s*666\|", text)
    assert "rows in offsets [10, 20) of each partition: 30" in text
    # the Avro topic, in the registry the test gave (or the notebook's own): typed at load() from the registered
    # schema, the sums as Spark computes them
    assert f"registry: {'KWIRE_SCHEMA_REGISTRY' if broker == 'KWIRE_BOOTSTRAP' else 'local test registry'}" in text
    assert "value: struct<id:bigint,kind:string,amount:decimal(8,2)>" in text
    assert re.search(r"\|\s*click\|\s*334\|\s*16683\.30\|", text) and re.search(r"\|\s*view\|\s*666\|\s*33266\.70\|", text)

    per_partition = ast.literal_eval(re.search(r"records per partition: (\{.*?\})", text).group(1))
    assert sum(per_partition.values()) == 1000
    expected_after_300 = sum(max(0, n - 300) for n in per_partition.values())
    # The notebook says which capabilities the kernel's PySpark has, and pushes filters down only where it can.
    assert f"{'yes' if pushdown else 'no '}  {FILTER_PUSHDOWN.name} ({FILTER_PUSHDOWN.since})" in text
    if pushdown:
        assert f"offset >= 300: {expected_after_300} | PushedFilters: [GreaterThanOrEqual(offset,300)]" in text
    else:
        assert f"offset >= 300: {expected_after_300} | not pushed down: this PySpark has no {FILTER_PUSHDOWN.name}" \
            in text
    assert "timestamp >= cutoff: 100" in text

    batches = json.loads(re.search(r"micro-batches: (\[.*?\])", text).group(1))
    assert sum(batches) == 1100 and max(batches) <= 500 and len(batches) >= 3
    assert "rows in the memory sink: 1100" in text
    assert "total lag: 300" in text  # records written after the stream stopped
    assert any(o.get("output_type") == "display_data" and "image/png" in o.get("data", {})
               for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])), "no lag plot"


def test_quickstart_notebook_runs(bootstrap):
    from tests.spark.typed_fixtures import the_registry

    nb, elapsed = execute_quickstart(bootstrap, registry=the_registry().url)
    print(f"quickstart.ipynb ran in {elapsed:.1f}s")
    # The test broker and registry (the notebook started none); the kernel runs this interpreter, hence its PySpark.
    check_quickstart_outputs(nb, broker="KWIRE_BOOTSTRAP", pushdown=bool(FILTER_PUSHDOWN))


def test_committed_quickstart_outputs_are_a_real_run():
    """The outputs committed in the notebook are those of a full, successful run (tests/test_notebooks.py --save)."""
    import nbformat

    nb = nbformat.read(QUICKSTART, as_version=4)
    assert all(c.get("execution_count") for c in nb.cells if c.cell_type == "code"), "notebook saved unexecuted"
    # Saved by a run on the newest PySpark, which pushes filters down.
    check_quickstart_outputs(nb, broker="local KafkaCluster", pushdown=True)


# -- databricks_quickstart.py -------------------------------------------------------------------------

def databricks_cells(path: Path = DATABRICKS) -> list[tuple[str, str]]:
    """(kind, source) of each cell: kind is "python" or "magic" (a cell made only of `# MAGIC` lines)."""
    text = path.read_text()
    header, _, body = text.partition("\n")
    assert header.strip() == "# Databricks notebook source", "not a Databricks notebook source file"
    cells = []
    for chunk in re.split(r"^# COMMAND -{10,}\s*$", body, flags=re.MULTILINE):
        lines = [line for line in chunk.strip("\n").splitlines()]
        if not any(line.strip() for line in lines):
            continue
        code_lines = [line for line in lines if line.strip()]
        kind = "magic" if all(line.startswith("# MAGIC") for line in code_lines) else "python"
        cells.append((kind, "\n".join(lines)))
    return cells


class _Widgets:
    """dbutils.widgets: text/dropdown declare a widget with its default; the test's values win over defaults."""

    def __init__(self, values: dict[str, str]) -> None:
        self.values = dict(values)
        self.declared: dict[str, str] = {}

    def text(self, name, defaultValue="", label=None):
        self.declared[name] = defaultValue

    def dropdown(self, name, defaultValue, choices, label=None):
        assert defaultValue in choices
        self.declared[name] = defaultValue

    def get(self, name):
        assert name in self.declared, f"widget {name} read before it was declared"
        return self.values.get(name, self.declared[name])

    def removeAll(self):
        self.declared.clear()


class _Secrets:
    def __init__(self, secrets: dict[tuple[str, str], str]) -> None:
        self.secrets = secrets
        self.asked: list[tuple[str, str]] = []

    def get(self, scope, key):
        self.asked.append((scope, key))
        return self.secrets[(scope, key)]


class _Library:
    def restartPython(self):
        pass


class _DBUtils:
    def __init__(self, widgets: dict, secrets: dict) -> None:
        self.widgets = _Widgets(widgets)
        self.secrets = _Secrets(secrets)
        self.library = _Library()


SCRAM_USER = "kwire-notebook"
SCRAM_PASSWORD = "nb-" + uuid.uuid4().hex[:16]


@pytest.fixture(scope="module")
def scram_ssl_kafka(tmp_path_factory):
    """A broker whose client listener is SASL_SSL with SCRAM-SHA-512, as the Databricks notebook expects."""
    from harness import KafkaCluster, Listener, generate_test_certificates

    certs = generate_test_certificates(tmp_path_factory.mktemp("nb-certs"))
    props = {
        "listener.name.sasl_ssl.sasl.enabled.mechanisms": "SCRAM-SHA-512",
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config":
            "org.apache.kafka.common.security.scram.ScramLoginModule required;",
        "listener.name.sasl_ssl.ssl.keystore.type": "PEM",
        "listener.name.sasl_ssl.ssl.keystore.location": str(certs.broker_keystore),
    }
    with KafkaCluster(1, listeners=[Listener("SASL_SSL", "SASL_SSL")], extra_properties=props,
                      scram_users=[("SCRAM-SHA-512", SCRAM_USER, SCRAM_PASSWORD)]) as cluster:
        yield cluster, certs


def test_databricks_notebook_source_format():
    cells = databricks_cells()
    magics = [source for kind, source in cells if kind == "magic"]
    assert any(source.strip() == "# MAGIC %pip install spark-kwire" for source in magics)
    assert any(source.startswith("# MAGIC %md") for source in magics)
    text = DATABRICKS.read_text()
    assert ".jar" not in text.lower() and "spark.jars" not in text  # no JAR, no cluster library
    assert "dbutils.secrets.get(" in text and "SASL_SSL" in text and "SCRAM-SHA-512" in text
    assert "kafkashaded.org.apache.kafka.common.security.scram.ScramLoginModule" in text
    python = "\n".join(source for kind, source in cells if kind == "python")
    compile(python, str(DATABRICKS), "exec")


def test_databricks_notebook_runs(spark, scram_ssl_kafka, tmp_path):
    cluster, certs = scram_ssl_kafka
    suffix = uuid.uuid4().hex[:8]
    table = f"kwire_nb_events_{suffix}"
    # The notebook appends to a Delta table on Databricks; here the table is a parquet one at a temp location.
    spark.sql(f"CREATE TABLE {table} (key STRING, value STRING, topic STRING, partition INT, offset BIGINT, "
              f"timestamp TIMESTAMP) USING parquet LOCATION '{tmp_path / 'table'}'")
    widgets = {
        "bootstrap_servers": cluster.bootstrap("SASL_SSL"),
        "topic": f"kwire-nb-{suffix}",
        "consumer_group": f"kwire-nb-group-{suffix}",
        "secret_scope": "kafka-test",
        "truststore_pem": str(certs.ca_cert),
        "target_table": table,
        "checkpoint_location": str(tmp_path / "checkpoint"),
    }
    dbutils = _DBUtils(widgets, {("kafka-test", "username"): SCRAM_USER, ("kafka-test", "password"): SCRAM_PASSWORD})
    displayed: list = []

    def display(obj):
        rows = obj.collect() if hasattr(obj, "collect") else obj
        displayed.append(rows)

    namespace = {"spark": spark, "dbutils": dbutils, "display": display, "__name__": "__main__"}
    started = time.monotonic()
    try:
        for index, (kind, source) in enumerate(databricks_cells()):
            if kind == "python":
                exec(compile(source, f"{DATABRICKS.name}[cell {index}]", "exec"), namespace)
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {table}")
    print(f"databricks_quickstart.py ran in {time.monotonic() - started:.1f}s")

    assert set(dbutils.secrets.asked) == {("kafka-test", "username"), ("kafka-test", "password")}
    assert namespace["kafka_options"]["kafka.security.protocol"] == "SASL_SSL"
    assert namespace["kafka_options"]["kafka.sasl.mechanism"] == "SCRAM-SHA-512"

    sample, by_partition, table_counts, lag = displayed
    assert len(sample) == 10
    assert sum(r["count"] for r in by_partition) == 1000
    assert sum(r["count"] for r in table_counts) == 1000
    lag_rows = [r.asDict() for r in lag]
    assert len(lag_rows) == 3
    if READ_LIMIT_API:
        assert all(r["lag"] == 0 for r in lag_rows), lag_rows
    else:  # Spark < 4.2: the run's only batch is committed to the group when the next run starts (docs/streaming.md)
        assert all(r["committed_offset"] == 0 for r in lag_rows), lag_rows
    assert sum(r["latest_offset"] for r in lag_rows) == 1000
    assert SCRAM_PASSWORD not in repr(displayed)


if __name__ == "__main__":
    if "--save" not in sys.argv[1:]:
        sys.exit("usage: tests/test_notebooks.py --save   (executes notebooks/quickstart.ipynb and saves its outputs)")
    import nbformat

    executed, seconds = execute_quickstart(os.environ.get("KWIRE_BOOTSTRAP"),
                                           registry=os.environ.get("KWIRE_SCHEMA_REGISTRY"))
    try:
        check_quickstart_outputs(executed, broker="KWIRE_BOOTSTRAP" if os.environ.get("KWIRE_BOOTSTRAP")
                                 else "local KafkaCluster", pushdown=bool(FILTER_PUSHDOWN))
    except AssertionError:
        failed = Path(tempfile.mkdtemp(prefix="kwire-quickstart-")) / QUICKSTART.name
        nbformat.write(executed, failed)
        print(f"outputs failed their checks; not saved. The executed notebook is in {failed}")
        raise
    nbformat.write(executed, QUICKSTART)
    print(f"saved {QUICKSTART} (ran in {seconds:.1f}s)")
