"""kwire over Spark Connect, with no JAR anywhere.

Both sides run in a fresh virtualenv holding only `pyspark[connect]` of the release running this test and kwire
installed from the built wheel (`make wheel`), never the checkout: `.kwire/venvs/connect-<release>`, made by
`.ci/release-venv` and reused while its inputs stay the same. The Spark Connect server is started from that
PySpark wheel itself ($SPARK_HOME/sbin/start-connect-server.sh with SPARK_HOME = its pyspark package folder) on
a free loopback port, with no `--jars`, no `--packages`, no `spark.jars`. A client process of the same
virtualenv connects with `SparkSession.builder.remote("sc://...")` and writes, reads and streams with
format("kwire"), first through auto-registration, then through `spark_kwire.register(spark)`.

The client runs in a subprocess: a Connect session in this process would switch PySpark into Connect mode
(SPARK_CONNECT_MODE_ENABLED) under the classic `spark` fixture that other test modules share.
"""

from __future__ import annotations

import glob
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

import pyspark
from harness import die_with_parent, free_port, port_answers

REPO = Path(__file__).resolve().parents[2]
SERVER_START_TIMEOUT_S = 90
CLIENT_TIMEOUT_S = 240
ROWS = 300


def _fresh_env() -> Path:
    """The virtualenv with pyspark[connect] of this release and the kwire wheel; its python."""
    wheels = sorted(glob.glob(str(REPO / "dist" / "spark_kwire-*.whl")))
    if not wheels:
        pytest.fail("no kwire wheel in dist/: run `make wheel` (make test does)")
    env_dir = REPO / ".kwire" / "venvs" / f"connect-{pyspark.__version__}"
    done = subprocess.run(["bash", str(REPO / ".ci" / "release-venv"), str(env_dir),
                           f"pyspark[connect]=={pyspark.__version__}", wheels[-1]],
                          capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        pytest.fail(f"making {env_dir} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    return env_dir / "bin" / "python"


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory):
    """(port, python, server log) of a Spark Connect server from the fresh env's PySpark, running local[2]."""
    python = _fresh_env()
    spark_home = Path(subprocess.run([str(python), "-c", "import pyspark, os; print(os.path.dirname(pyspark.__file__))"],
                                     capture_output=True, text=True, check=True).stdout.strip())
    work = tmp_path_factory.mktemp("spark-connect")
    for name in ("log", "pid", "conf"):
        (work / name).mkdir()
    port = free_port()
    env = {
        **os.environ,
        "SPARK_HOME": str(spark_home),
        "SPARK_CONF_DIR": str(work / "conf"),  # empty: no spark-defaults.conf from anywhere
        "SPARK_LOG_DIR": str(work / "log"),
        "SPARK_PID_DIR": str(work / "pid"),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": str(python),
        "PYSPARK_DRIVER_PYTHON": str(python),
    }
    env.pop("PYTHONPATH", None)
    script = spark_home / "sbin" / "start-connect-server.sh"
    # PySpark 4.0's wheel ships the server jar but not the script, which only runs spark-submit with its class.
    launcher = ([str(script), "--wait"] if script.exists() else  # --wait: foreground, our child
                [str(spark_home / "bin" / "spark-submit"), "--class",
                 "org.apache.spark.sql.connect.service.SparkConnectServer"])
    command = [
        *launcher,
        "--master", "local[2]",
        "--driver-memory", "1g",
        "--conf", f"spark.connect.grpc.binding.port={port}",
        "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
        "--conf", "spark.ui.enabled=false",
        "--conf", "spark.sql.shuffle.partitions=2",
    ]
    log_path = work / "server.out"
    with open(log_path, "wb") as log:
        server = subprocess.Popen(command, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT,
                                  preexec_fn=die_with_parent)

    def log_tail() -> str:
        return "\n".join(log_path.read_text(errors="replace").splitlines()[-40:])

    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while not port_answers(port):
            if server.poll() is not None:
                pytest.fail(f"Spark Connect server exited with {server.returncode}:\n{log_tail()}")
            if time.monotonic() > deadline:
                pytest.fail(f"Spark Connect server not answering on {port} after {SERVER_START_TIMEOUT_S}s:\n"
                            f"{log_tail()}")
            time.sleep(0.25)
        yield port, python, log_path
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait(timeout=10)
        try:  # children that outlived the shell (the JVM, its Python workers) are in the same group
            os.killpg(server.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


# Runs in its own interpreter: argv[1] is a JSON config; prints one line "RESULT <json>".
CLIENT = textwrap.dedent('''
    import json, sys, time
    from pyspark.sql import SparkSession

    cfg = json.loads(sys.argv[1])
    bootstrap, topic = cfg["bootstrap"], cfg["topic"]
    out, started = {}, time.monotonic()

    def lap(name):
        out.setdefault("seconds", {})[name] = round(time.monotonic() - started, 1)
        print(f"LAP {name} {out['seconds'][name]}", flush=True)

    spark = SparkSession.builder.remote(f"sc://127.0.0.1:{cfg['port']}").getOrCreate()
    out["session_class"] = f"{type(spark).__module__}.{type(spark).__name__}"
    import spark_kwire as _kwire
    out["kwire_file"] = _kwire.__file__
    out["spark_jars"] = spark.conf.get("spark.jars", None)
    out["spark_jars_packages"] = spark.conf.get("spark.jars.packages", None)
    try:
        spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic).load().schema
        out["builtin_kafka"] = "found"
    except Exception as e:
        out["builtin_kafka"] = f"{type(e).__name__}: {e}"[:400]
    lap("session")

    def kwire(fmt="kwire"):
        return spark.read.format(fmt).option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)

    # 1. auto-registration on the server: no register call has been made in this session.
    out["auto_columns"] = kwire().load().columns
    lap("auto-registration")

    # 2. write (Python data sources need an explicit append).
    (spark.range(cfg["rows"]).selectExpr("CAST(id % 7 AS STRING) AS key", "CONCAT('value-', id) AS value")
        .write.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("topic", topic)
        .mode("append").save())
    lap("write")

    # 3. batch read.
    rows = kwire().load().selectExpr("CAST(key AS STRING) AS k", "CAST(value AS STRING) AS v", "partition",
                                     "offset").collect()
    out["read"] = [[r.k, r.v, r.partition, r.offset] for r in rows]
    lap("read")

    # 4. registration from this client: register(spark) and a subclass defined here, pickled to the server.
    import spark_kwire
    from spark_kwire.spark.source import KwireDataSource

    spark_kwire.register(spark)  # the stream below reads format("kwire") as registered by this call

    class ClientDefinedKwire(KwireDataSource):
        @classmethod
        def name(cls):
            return "kwire_from_client"

    spark.dataSource.register(ClientDefinedKwire)
    client_df = kwire("kwire_from_client").option("includeHeaders", "true").load()
    out["client_class_columns"] = client_df.columns
    out["client_class_count"] = client_df.count()
    lap("client registration")

    # 5. a capped stream into a memory sink, run until it has read everything there (processing-time: the
    # trigger every release runs in capped batches; AvailableNow with a cap needs Spark 4.2, tested elsewhere),
    # read in the driver's source process (streamReadMode=driver, which auto picks only on 4.2+).
    query = (spark.readStream.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
             .option("startingOffsets", "earliest").option("maxOffsetsPerTrigger", cfg["rows"] // 2 + 1)
             .option("streamReadMode", "driver").load()
             .selectExpr("CAST(value AS STRING) AS value", "partition", "offset")
             .writeStream.format("memory").queryName(cfg["query"])
             .option("checkpointLocation", cfg["checkpoint"])
             .trigger(processingTime="0 seconds").start())
    query.processAllAvailable()
    out["stream_finished"] = True
    out["stream_exception"] = str(query.exception()) if query.exception() else None
    # Over Connect, a progress's top-level numInputRows can be missing; its sources' counts are not.
    out["stream_batches"] = [sum(s.numInputRows for s in p.sources) for p in query.recentProgress]
    out["stream_values"] = sorted(r.value for r in spark.sql(f"SELECT value FROM {cfg['query']}").collect())
    query.stop()
    lap("stream")
    spark.stop()
    print("RESULT " + json.dumps(out), flush=True)
''')


def test_kwire_over_spark_connect_without_any_jar(connect_server, bootstrap, create_topic, topic_name, tmp_path):
    port, python, server_log = connect_server
    print(f"Spark Connect server on {port}, PySpark {pyspark.__version__} from {python}")
    # Nothing Kafka in the Spark distribution the server runs from.
    assert not glob.glob(str(python.parent.parent / "lib" / "*" / "site-packages" / "pyspark" / "jars" / "*kafka*"))

    partitions = 3
    create_topic(topic_name, partitions=partitions)
    cfg = {"port": port, "bootstrap": bootstrap, "topic": topic_name, "rows": ROWS, "partitions": partitions,
           "query": f"connect_{uuid.uuid4().hex[:8]}", "checkpoint": str(tmp_path / "checkpoint")}
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "PYTHONPATH")}
    started = time.monotonic()
    client = subprocess.Popen([str(python), "-c", CLIENT, json.dumps(cfg)], cwd=tmp_path, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        stdout, stderr = client.communicate(timeout=CLIENT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        client.kill()
        stdout, stderr = client.communicate()
        stderr += f"\n(client killed after {CLIENT_TIMEOUT_S}s)"
    result_lines = [line for line in stdout.splitlines() if line.startswith("RESULT ")]
    if client.returncode != 0 or not result_lines:
        server_tail = "\n".join(server_log.read_text(errors="replace").splitlines()[-30:])
        pytest.fail(f"Connect client failed ({client.returncode}):\n{stdout[-3000:]}\n{stderr[-5000:]}\n"
                    f"--- server log tail ---\n{server_tail}")
    out = json.loads(result_lines[-1][len("RESULT "):])
    print(f"client ran in {time.monotonic() - started:.1f}s; laps: {out['seconds']}")

    # A real Connect session, against a server with no JAR and without Spark's own Kafka connector.
    assert out["session_class"] == "pyspark.sql.connect.session.SparkSession"
    # kwire comes from the wheel installed in the fresh env, not from the checkout.
    assert out["kwire_file"].startswith(str(python.parent.parent)) and "site-packages" in out["kwire_file"], \
        out["kwire_file"]
    assert not out["spark_jars"], out["spark_jars"]
    assert not out["spark_jars_packages"], out["spark_jars_packages"]
    # Spark's own `kafka` source needs spark-sql-kafka on the classpath; the server has none.
    assert "Failed to find data source: kafka" in out["builtin_kafka"], out["builtin_kafka"]

    # Auto-registration on the server, before any register call.
    assert out["auto_columns"] == ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType"]

    # The write landed, and the batch read returns exactly it.
    expected = {f"value-{i}": str(i % 7) for i in range(ROWS)}
    read = out["read"]
    assert len(read) == ROWS
    assert {v: k for k, v, _p, _o in read} == expected
    by_partition: dict[int, list[int]] = {}
    for key, _v, partition, offset in read:
        by_partition.setdefault(partition, []).append(offset)
    assert set(by_partition) <= set(range(partitions))
    for offsets in by_partition.values():
        assert sorted(offsets) == list(range(len(offsets)))
    # Keys keep their partition (one key, one partition).
    assert all(len({p for k, _v, p, _o in read if k == key}) == 1 for key in set(expected.values()))

    # register(spark) from the client, and a class defined in the client and pickled to the server.
    assert out["client_class_columns"][-1] == "headers"
    assert out["client_class_count"] == ROWS

    # Everything, in more than one micro-batch (maxOffsetsPerTrigger).
    assert out["stream_finished"] is True and out["stream_exception"] is None
    batches = [n for n in out["stream_batches"] if n]
    assert sum(batches) == ROWS and len(batches) >= 2, out["stream_batches"]
    assert out["stream_values"] == sorted(expected)

    # An independent client (librdkafka) sees the records the Connect session wrote.
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"check-{uuid.uuid4().hex[:6]}",
                         "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic_name, p, 0) for p in range(partitions)])
        seen: dict[str, str] = {}
        deadline = time.monotonic() + 30
        while len(seen) < ROWS and time.monotonic() < deadline:
            for message in consumer.consume(500, timeout=1):
                assert message.error() is None, message.error()
                seen[message.value().decode()] = message.key().decode()
        assert seen == expected
    finally:
        consumer.close()


def _run_client(python, script: str, cfg: dict, tmp_path, server_log, what: str) -> dict:
    """Runs a Connect client script of the fresh env with ``cfg``; the dict it prints after RESULT."""
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "PYTHONPATH")}
    done = subprocess.run([str(python), "-c", script, json.dumps(cfg)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=CLIENT_TIMEOUT_S)
    result_lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode != 0 or not result_lines:
        server_tail = "\n".join(server_log.read_text(errors="replace").splitlines()[-30:])
        pytest.fail(f"{what} Connect client failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
                    f"\n--- server log tail ---\n{server_tail}")
    return json.loads(result_lines[-1][len("RESULT "):])


TYPED_CLIENT = textwrap.dedent('''
    import json, sys
    from pyspark.sql import SparkSession

    cfg = json.loads(sys.argv[1])
    spark = SparkSession.builder.remote(f"sc://127.0.0.1:{cfg['port']}").getOrCreate()
    common = {"kafka.bootstrap.servers": cfg["bootstrap"], "valueFormat": "avro",
              "schema.registry.url": cfg["registry"]}
    df = spark.read.format("kwire").options(**common).option("subscribe", cfg["topic"]).load()
    out = {"value_type": df.schema["value"].dataType.simpleString()}
    out["rows"] = [[r.id, r.item, str(r.price)] for r in df.select("value.*").orderBy("id").collect()]
    (df.selectExpr("struct(value.id AS id, upper(value.item) AS item) AS value").write.format("kwire")
       .options(**common).option("topic", cfg["out"]).option("auto.register.schemas", "true").mode("append").save())
    back = spark.read.format("kwire").options(**common).option("subscribe", cfg["out"]).load()
    out["written"] = sorted([r.id, r.item] for r in back.select("value.*").collect())
    spark.stop()
    print("RESULT " + json.dumps(out), flush=True)
''')


def test_typed_avro_over_spark_connect_without_any_jar(connect_server, bootstrap, create_topic, tmp_path):
    """A Connect client reads a topic written by confluent-kafka's AvroSerializer as typed columns and writes typed
    rows back: spark-avro is on neither side (kwire's wheel alone, in the server's Python workers)."""
    from decimal import Decimal

    from tests.spark.typed_fixtures import produce_avro, the_registry, unique

    port, python, server_log = connect_server
    registry = the_registry()
    topic, out_topic = create_topic(unique("connect-typed"), partitions=2), create_topic(unique("connect-out"), 1)
    schema = {"type": "record", "name": "Item", "namespace": "connect", "fields": [
        {"name": "id", "type": "long"}, {"name": "item", "type": "string"},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 6, "scale": 2}}]}
    produce_avro(bootstrap, topic, registry.url, schema,
                 [{"id": i, "item": f"item-{i}", "price": Decimal(f"{i}.99")} for i in range(40)], partitions=2)
    cfg = {"port": port, "bootstrap": bootstrap, "registry": registry.url, "topic": topic, "out": out_topic}
    out = _run_client(python, TYPED_CLIENT, cfg, tmp_path, server_log, "typed")
    assert out["value_type"] == "struct<id:bigint,item:string,price:decimal(6,2)>"
    assert out["rows"] == [[i, f"item-{i}", f"{i}.99"] for i in range(40)]
    assert out["written"] == [[i, f"ITEM-{i}"] for i in range(40)]


JSON_EVOLUTION_CLIENT = textwrap.dedent('''
    import json, sys
    from pyspark.sql import SparkSession

    cfg = json.loads(sys.argv[1])
    spark = SparkSession.builder.remote(f"sc://127.0.0.1:{cfg['port']}").getOrCreate()
    common = {"kafka.bootstrap.servers": cfg["bootstrap"], "valueFormat": "json"}

    def start():
        frame = (spark.readStream.format("kwire").options(**common).option("subscribe", cfg["topic"])
                 .option("startingOffsets", "earliest").option("schemaLocation", cfg["location"]).load())
        query = (frame.select("partition", "offset", "value.*").writeStream.format("parquet")
                 .option("path", cfg["sink"]).option("checkpointLocation", cfg["checkpoint"]).start())
        return frame, query

    out = {}
    frame, query = start()
    out["first_type"] = frame.schema["value"].dataType.simpleString()
    query.processAllAvailable()
    late = [(json.dumps({"id": p * 100 + 10, "name": "late", "extra": 2.5}), p) for p in range(2)]
    (spark.createDataFrame(late, "value string, partition int")
       .selectExpr("CAST(value AS BINARY) AS value", "partition")
       .write.format("kwire").option("kafka.bootstrap.servers", cfg["bootstrap"]).option("topic", cfg["topic"])
       .mode("append").save())
    try:
        query.processAllAvailable()
        out["stopped"] = None
    except Exception as error:
        out["stopped"] = str(error)
    query.stop()
    frame, query = start()
    out["second_type"] = frame.schema["value"].dataType.simpleString()
    query.processAllAvailable()
    query.stop()
    rows = spark.read.option("mergeSchema", "true").parquet(cfg["sink"]).collect()
    out["rows"] = sorted([r.partition, r.offset, r.id, r.extra] for r in rows)
    spark.stop()
    print("RESULT " + json.dumps(out), flush=True)
''')


def test_json_schema_evolution_over_spark_connect(connect_server, bootstrap, create_topic, produce, tmp_path):
    """A Connect stream of plain JSON with a schemaLocation meets a new field: it stops with the message, and the
    restarted query (load() again, same checkpoint) reads the new field, every record once."""
    port, python, server_log = connect_server
    topic = create_topic(f"connect-json-{uuid.uuid4().hex[:8]}", partitions=2)
    produce(topic, [(None, json.dumps({"id": p * 100 + i, "name": f"n{i}"}).encode(), None, None, p)
                    for p in range(2) for i in range(10)])
    cfg = {"port": port, "bootstrap": bootstrap, "topic": topic, "location": str(tmp_path / "schema"),
           "sink": str(tmp_path / "sink"), "checkpoint": str(tmp_path / "cp")}
    out = _run_client(python, JSON_EVOLUTION_CLIENT, cfg, tmp_path, server_log, "JSON")
    assert out["first_type"] == "struct<id:bigint,name:string>"
    assert "schemaEvolutionMode=addNewColumns recorded the wider schema as version 1" in out["stopped"]
    assert out["second_type"] == "struct<id:bigint,name:string,extra:double>"
    assert out["rows"] == sorted([[p, i, p * 100 + i, None] for p in range(2) for i in range(10)]
                                 + [[p, 10, p * 100 + 10, 2.5] for p in range(2)])


CHECK_CLIENT = textwrap.dedent('''
    import json, sys
    from pyspark.sql import SparkSession
    from spark_kwire.check import check_connection

    cfg = json.loads(sys.argv[1])
    spark = SparkSession.builder.remote(f"sc://127.0.0.1:{cfg['port']}").getOrCreate()
    options = {"kafka.bootstrap.servers": cfg["bootstrap"], "subscribe": cfg["topic"], "checkTasks": "2"}
    df = spark.read.format("kwire").option("metadata", "check").options(**options).load()
    out = {"columns": df.columns, "rows": [r.asDict() for r in df.collect()]}
    spark.sql("CREATE OR REPLACE TEMPORARY VIEW kafka_check USING kwire OPTIONS (metadata 'check', "
              f"`kafka.bootstrap.servers` '{cfg['dead']}')")
    out["view"] = [r.asDict() for r in spark.sql("SELECT step, outcome, fix FROM kafka_check").collect()]
    report = check_connection(options, spark=spark)
    out["report_ok"], out["report_steps"] = report.ok, sorted({r.step for r in report.rows})
    spark.stop()
    print("RESULT " + json.dumps(out), flush=True)
''')


def test_the_check_table_over_spark_connect(connect_server, bootstrap, create_topic, tmp_path):
    """option("metadata", "check") from a Connect client, as a DataFrame, a SQL view and through the Python helper:
    the rows come from the server's driver (local mode: its JVM runs the tasks)."""
    from harness import free_port

    port, python, server_log = connect_server
    topic = create_topic(f"connect-check-{uuid.uuid4().hex[:8]}", partitions=2)
    cfg = {"port": port, "bootstrap": bootstrap, "topic": topic, "dead": f"127.0.0.1:{free_port()}"}
    out = _run_client(python, CHECK_CLIENT, cfg, tmp_path, server_log, "check")
    assert out["columns"] == ["host", "executor", "step", "target", "outcome", "time_ms", "detail", "fix"]
    rows = out["rows"]
    assert not [r for r in rows if r["outcome"] not in ("ok", "skipped")], rows
    assert {"connect", "api_versions", "metadata", "topic", "topic_access", "executors"} <= {r["step"] for r in rows}
    assert any(r["step"] == "topic" and topic in r["target"] for r in rows)
    refused = [r for r in out["view"] if r["step"] == "connect"]
    assert refused and refused[0]["outcome"] == "fail" and refused[0]["fix"], out["view"]
    assert out["report_ok"] and "executors" in out["report_steps"]
