"""Shared fixtures: a real Apache Kafka broker (KRaft) for the session, unique topic names, a Spark session.

The broker comes from the jars `make jars` fetched; when they are missing the session fails with the
launcher's message (it is never silently skipped).
"""

from __future__ import annotations

import os
import re
import uuid

import pytest

from harness import KafkaCluster, spark_avro_jars, spark_kafka_connector_jars
from harness.jvm import use_lean_jvms

# Brokers, Kafka's tools and Spark drivers of this session and its child processes run lean JVMs (C1, serial GC):
# they live short and move little data, and on CI's two cores their compiling and collecting was half their CPU.
use_lean_jvms()

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# No per-example deadline: on CI's busy 2 cores an example may take longer than hypothesis's 200 ms once and not
# the next time, which hypothesis reports as a flaky failure. What the properties check is not speed.
try:
    from hypothesis import settings as _hypothesis_settings
except ImportError:  # the release virtualenvs' runs need no hypothesis
    pass
else:
    _hypothesis_settings.register_profile("kwire", deadline=None)
    _hypothesis_settings.load_profile("kwire")


EXPECT_WHEEL = os.environ.get("KWIRE_EXPECT_WHEEL") == "1"

# The slowest test files (minutes each on CI's 2 busy cores), longest first. `make test` hands whole files to its
# pytest-xdist workers in collection order, so these go first: a long file collected late (the pipeline's, last
# by name, several minutes) can keep one worker busy after the other has run out of files.
SLOWEST_FILES = (
    "tests/spark/test_pipeline.py",
    "tests/spark/test_spark_connect.py",
    "tests/faults/test_exactly_once_sink.py",
    "tests/test_docs.py",
    "tests/faults/test_process_crashes.py",
    "tests/spark/test_delegation_tokens_spark.py",
    "tests/test_packaging.py",
    "tests/spark/test_worker_daemon.py",
    "tests/test_notebooks.py",
    "tests/faults/test_leader_loss.py",
)


def _from_checkout(location: str) -> bool:
    return os.path.abspath(location).startswith(os.path.join(REPO, "spark_kwire") + os.sep)


def pytest_sessionstart(session):
    """With KWIRE_EXPECT_WHEEL=1 (the per-release runs of `make test`), kwire must come from the installed
    wheel: a run that imports the checkout's spark_kwire would pass even when the wheel is broken."""
    if EXPECT_WHEEL:
        import spark_kwire

        if _from_checkout(spark_kwire.__file__):
            raise pytest.UsageError(
                f"KWIRE_EXPECT_WHEEL=1 but spark_kwire was imported from the checkout ({spark_kwire.__file__}), "
                "not from the wheel installed in this virtualenv; run the venv's bin/pytest, not python -m pytest, "
                "with only .kwire/harness-path on PYTHONPATH."
            )


def pytest_collection_modifyitems(session, config, items):
    """The files of SLOWEST_FILES first, in its order; the rest as collected."""
    def rank(item) -> int:
        path = os.path.relpath(str(item.path), REPO)
        return SLOWEST_FILES.index(path) if path in SLOWEST_FILES else len(SLOWEST_FILES)

    items.sort(key=rank)  # stable: within a file, and among the other files, the collected order stays


@pytest.fixture(scope="session")
def kafka() -> KafkaCluster:
    """One KRaft broker on free loopback ports, shared by the whole session."""
    with KafkaCluster(1) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def bootstrap(kafka: KafkaCluster) -> str:
    return kafka.bootstrap_servers


@pytest.fixture
def topic_name(request) -> str:
    """A topic name unique to this test (readable in broker logs)."""
    base = re.sub(r"[^a-zA-Z0-9]+", "-", request.node.name)[:60].strip("-")
    return f"{base}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="session")
def create_topic(bootstrap):
    """create_topic(name, partitions=1, replication_factor=1, config=None) through an independent client."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})

    def create(name: str, partitions: int = 1, replication_factor: int = 1, config: dict | None = None) -> str:
        futures = admin.create_topics(
            [NewTopic(name, num_partitions=partitions, replication_factor=replication_factor, config=config or {})],
            operation_timeout=30,
        )
        futures[name].result(timeout=60)
        return name

    return create


@pytest.fixture(scope="session")
def read_stats_dir(tmp_path_factory):
    """Folder where kwire readers write per-task fetch statistics (see spark_kwire.spark.reading.reader._Stats).
    Set before Spark starts so that its Python workers inherit it."""
    folder = tmp_path_factory.mktemp("kwire-read-stats")
    os.environ["KWIRE_STATS_DIR"] = str(folder)
    return folder


@pytest.fixture(scope="session")
def spark_kerberos_files(tmp_path_factory) -> dict:
    """KRB5_CONFIG and KRB5CCNAME of the session's Spark. Its Python workers get the environment of its JVM, which
    is fixed when the session starts, so Spark's Kerberos tests write their realm's krb5.conf and ticket caches at
    these paths (tests/spark/kerberos_spark_fixtures.py) instead of pointing the variables elsewhere."""
    folder = tmp_path_factory.mktemp("spark-kerberos")
    files = {"KRB5_CONFIG": str(folder / "krb5.conf"), "KRB5CCNAME": f"FILE:{folder / 'krb5cc'}"}
    os.environ.update(files)
    return files


@pytest.fixture(scope="session")
def spark(read_stats_dir, spark_kerberos_files, tmp_path_factory):
    """A local[2] Spark session with Spark's built-in Kafka connector (the batch oracle) and spark-avro (the
    oracle of Avro types) on spark.jars."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", os.sys.executable)
    session = (
        SparkSession.builder.master("local[2]")
        .appName("kwire-tests")
        .config("spark.jars", ",".join(spark_kafka_connector_jars() + spark_avro_jars()))
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "2g")
        .config("spark.sql.session.timeZone", "UTC")
        # catalog tables (tests/spark/test_sql_views.py) go here, not into a spark-warehouse folder in the cwd
        .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("warehouse")))
        .config("spark.ui.showConsoleProgress", "false")
        # Python workers on a loaded 2-core machine can take longer than the 15 s default to connect back.
        .config("spark.python.authenticate.socketTimeout", "120s")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    if EXPECT_WHEEL:
        # Spark's Python workers run `python -m ...` from the driver's cwd: the checkout there would shadow the wheel.
        (worker_location,) = session.sparkContext.parallelize([0], 1).map(
            lambda _: __import__("spark_kwire").__file__).collect()
        if _from_checkout(worker_location):
            pytest.fail(f"KWIRE_EXPECT_WHEEL=1 but Spark's Python workers import spark_kwire from the checkout "
                        f"({worker_location}): run pytest from a folder outside the checkout (make test-release-*)")
    yield session
    session.stop()


@pytest.fixture(autouse=True)
def _spark_active_in_this_thread(request):
    """Spark finds a Python data source for a write (not for a read) through the *JVM thread's* active session.
    py4j serves a Python thread with a new JVM thread whenever it renews that thread's connection, and the new one
    has no active session: a write then fails with DATA_SOURCE_NOT_FOUND (CI met it once, mid-suite, on 4.3).
    Make the session active for the thread each Spark test starts on, as docs/writing.md tells users to."""
    if "spark" in request.fixturenames:
        session = request.getfixturevalue("spark")
        session._jvm.org.apache.spark.sql.SparkSession.setActiveSession(session._jsparkSession)
    yield


@pytest.fixture(scope="session")
def produce(bootstrap):
    """produce(topic, records, **producer_config): write (key, value[, headers[, timestamp_ms[, partition]]])
    tuples with librdkafka (confluent-kafka) and wait for every delivery."""
    from confluent_kafka import Producer

    def send(topic: str, records, **config) -> None:
        producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, **config})
        errors = []
        for record in records:
            key, value, *rest = record
            kwargs = {}
            if len(rest) > 0 and rest[0] is not None:
                kwargs["headers"] = rest[0]
            if len(rest) > 1 and rest[1] is not None:
                kwargs["timestamp"] = rest[1]
            if len(rest) > 2 and rest[2] is not None:
                kwargs["partition"] = rest[2]
            producer.produce(topic, value=value, key=key, on_delivery=lambda err, msg: err and errors.append(err),
                             **kwargs)
            producer.poll(0)
        assert producer.flush(60) == 0
        assert not errors, errors

    return send
