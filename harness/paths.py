"""Where the harness finds what `make jars` fetched: the Apache Kafka jars, Spark's kafka connector and spark-avro.

The harness lives in the repository (it is not part of the wheel), so paths are relative to the checkout."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from harness.jvm import harness_jvm_options
from harness.processes import die_with_parent

REPO_ROOT = Path(__file__).resolve().parent.parent
SERVER_TEMPLATE = REPO_ROOT / "conf" / "kafka" / "server.properties"


class KafkaLauncherError(RuntimeError):
    """A broker could not be started or a Java tool failed; the message carries the log tail."""


def kafka_lib_dir() -> Path:
    """Folder holding the Apache Kafka broker, tools and client jars (env KWIRE_KAFKA_LIB overrides)."""
    path = Path(os.environ.get("KWIRE_KAFKA_LIB", REPO_ROOT / "jars" / "kafka" / "target" / "lib"))
    if not list(path.glob("kafka_2.13-*.jar")):
        raise KafkaLauncherError(
            f"no Apache Kafka jars in {path}: run `make jars` (mvn -f jars/pom.xml dependency:copy-dependencies)"
        )
    return path


def spark_kafka_connector_jars() -> list[str]:
    """The four jars Spark's built-in `kafka` source needs on `spark.jars` (the batch oracle in tests)."""
    lib = Path(os.environ.get("KWIRE_SPARK_KAFKA_LIB", REPO_ROOT / "jars" / "spark-kafka" / "target" / "lib"))
    wanted = ["spark-sql-kafka-0-10_*.jar", "spark-token-provider-kafka-0-10_*.jar", "kafka-clients-*.jar", "commons-pool2-*.jar"]
    found = []
    for pattern in wanted:
        matches = sorted(lib.glob(pattern))
        if not matches:
            raise KafkaLauncherError(f"missing {pattern} in {lib}: run `make jars`")
        found.append(str(matches[-1]))
    return found


def spark_avro_jars() -> list[str]:
    """The jar Spark's ``from_avro`` / ``to_avro`` need on ``spark.jars`` (the Avro oracle in tests; PySpark
    ships the Avro library itself)."""
    lib = Path(os.environ.get("KWIRE_SPARK_AVRO_LIB", REPO_ROOT / "jars" / "spark-avro" / "target" / "lib"))
    matches = sorted(lib.glob("spark-avro_*.jar"))
    if not matches:
        raise KafkaLauncherError(f"missing spark-avro_*.jar in {lib}: run `make jars`")
    return [str(matches[-1])]


def java_command(main_class: str, *args: str, heap: str = "256m", system_properties: dict | None = None,
                 jvm_options: tuple[str, ...] | list[str] = ()) -> list[str]:
    """The command line that runs `main_class` from the Kafka jars (lean in tests: :mod:`harness.jvm`)."""
    props = {"org.slf4j.simpleLogger.defaultLogLevel": "warn", **(system_properties or {})}
    lib = kafka_lib_dir()
    return [
        "java", f"-Xmx{heap}", "-Djava.awt.headless=true", *harness_jvm_options(lib), *jvm_options,
        *[f"-D{k}={v}" for k, v in props.items()],
        "-cp", str(lib / "*"), main_class, *args,
    ]


def run_java_tool(main_class: str, *args: str, input: str | bytes | None = None, timeout: float = 120,
                  check: bool = True, system_properties: dict | None = None) -> subprocess.CompletedProcess:
    """Run a Kafka Java tool (e.g. ``org.apache.kafka.tools.ConsoleProducer``) to completion."""
    text = not isinstance(input, bytes)
    proc = subprocess.run(
        java_command(main_class, *args, system_properties=system_properties),
        input=input, capture_output=True, timeout=timeout, text=text, preexec_fn=die_with_parent,
    )
    if check and proc.returncode != 0:
        raise KafkaLauncherError(
            f"{main_class} {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"[-4000:]
        )
    return proc
