"""The exactly-once sink under faults: a Kafka-to-Kafka stream whose driver is SIGKILLed and restarted from
its checkpoint, checked with read_committed consumers nobody here wrote (librdkafka and the Java client)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
import uuid
from pathlib import Path

from harness import run_java_tool

from .scenarios import (HERE, REPO, Outcome, ProducerThread, _batches, _kill_tree, _wait, create_topic,
                        spark_start_flake, unique_topic)


def read_committed_values(bootstrap: str, topic: str, partitions: int, expected: int, *, timeout: float = 120,
                          quiet: float = 5.0, isolation: str = "read_committed") -> list[bytes]:
    """Every value of ``topic`` a librdkafka read_committed consumer sees: until ``expected`` arrived, then
    ``quiet`` seconds more so that extra (duplicate) records would show."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"eos-verify-{uuid.uuid4().hex}",
                         "enable.auto.commit": False, "isolation.level": isolation})
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    values: list[bytes] = []
    try:
        deadline = time.monotonic() + timeout
        while len(values) < expected and time.monotonic() < deadline:
            for msg in consumer.consume(5000, 0.5):
                assert msg.error() is None, msg.error()
                values.append(msg.value())
        end = time.monotonic() + quiet
        while time.monotonic() < end:
            values.extend(m.value() for m in consumer.consume(5000, 0.3) if m.error() is None)
    finally:
        consumer.close()
    return values


def java_read_committed_values(bootstrap: str, topic: str, expected: int) -> list[str]:
    """The values the Java console consumer sees with --isolation-level read_committed."""
    out = run_java_tool(
        "org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", bootstrap, "--topic", topic,
        "--from-beginning", "--isolation-level", "read_committed", "--timeout-ms", "15000",
        "--max-messages", str(expected + 1000), timeout=240, check=False)
    return [line for line in out.stdout.splitlines() if line]


def count_exactly_once(values: list, sent: int, prefix: str) -> tuple[int, int, int]:
    """(distinct, lost, duplicated) of ``values`` against ``{prefix}0 .. {prefix}{sent-1}``."""
    expected = {f"{prefix}{i}" for i in range(sent)}
    seen = [v.decode() if isinstance(v, bytes) else v for v in values]
    distinct = set(seen)
    assert distinct <= expected, f"values never sent: {sorted(distinct - expected)[:5]}"
    return len(distinct), len(expected - distinct), len(seen) - len(distinct)


def eos_stream_driver_crashes(bootstrap: str, workdir: str, *, kills: int = 3, partitions: int = 3,
                              seed: int | None = None) -> Outcome:
    """A kwire-to-kwire exactly-once stream in a driver subprocess, SIGKILLed ``kills`` times at random moments
    (with its JVM and Python workers) while a producer writes, restarted from its checkpoint each time, and
    finally drained with Trigger.AvailableNow. Counts what read_committed consumers see in the sink."""
    source = create_topic(bootstrap, unique_topic("eos-crash-in"), partitions, replication=1, min_isr=None)
    sink = create_topic(bootstrap, unique_topic("eos-crash-out"), 2, replication=1, min_isr=None)
    checkpoint = os.path.join(workdir, "checkpoint")
    seed = seed if seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    producer = ProducerThread(bootstrap, source, prefix="e", per_tick=10)
    producer.start()
    started = time.monotonic()
    proc = None
    kill_points: list[str] = []

    def launch(run: int, drain: bool) -> tuple[subprocess.Popen, str]:
        log_path = os.path.join(workdir, f"driver-{run}.log")
        env = dict(os.environ, PYTHONUNBUFFERED="1", PYSPARK_PYTHON=sys.executable)
        args = [sys.executable, str(HERE / "stream_driver.py"), "--bootstrap", bootstrap, "--topic", source,
                "--sink-topic", sink, "--checkpoint", checkpoint, "--trigger-ms", "300"]
        # small micro-batches while the driver is being killed (more commits to land in), big ones to drain
        args += ["--available-now", "--max-offsets", "20000"] if drain else ["--max-offsets", "2000"]
        with open(log_path, "wb") as log:
            p = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=str(REPO),
                                 start_new_session=True)
        return p, log_path

    def tail(path: str) -> str:
        return Path(path).read_text(errors="replace")[-3000:]

    try:
        for run in range(kills):
            proc, log_path = launch(run, drain=False)
            _wait(lambda: proc.poll() is not None or len(_batches(log_path)) >= 1, 240,
                  f"driver run {run} to commit a micro-batch with rows")
            if proc.poll() is not None and spark_start_flake(tail(log_path)):
                proc, log_path = launch(run, drain=False)
                _wait(lambda: proc.poll() is not None or len(_batches(log_path)) >= 1, 240,
                      f"driver run {run} to commit a micro-batch with rows")
            assert proc.poll() is None, tail(log_path)
            delay = rng.uniform(0.0, 2.0)  # micro-batches take about a second here: any phase of one
            time.sleep(delay)
            kill_points.append(f"{delay:.2f}s after batch {_batches(log_path)[-1]}")
            _kill_tree(proc)
            proc = None
        sent = producer.finish()
        proc, log_path = launch(kills, drain=True)
        proc.wait(timeout=600)
        if proc.returncode != 0 and spark_start_flake(tail(log_path)):
            proc, log_path = launch(kills, drain=True)
            proc.wait(timeout=600)
        assert proc.returncode == 0, tail(log_path)
        proc = None
    finally:
        producer.stopping.set()
        if proc is not None and proc.poll() is None:
            _kill_tree(proc)
    values = read_committed_values(bootstrap, sink, 2, sent)
    distinct, lost, dup = count_exactly_once(values, sent, "e")
    return Outcome(f"eos stream driver SIGKILLed x{kills}, restarted", sent, len(values), distinct, lost, dup,
                   None, time.monotonic() - started,
                   {"source": source, "sink": sink, "seed": seed, "kill_points": kill_points})


def eos_batch_task_retry(bootstrap: str, workdir: str, *, rows: int = 600_000) -> Outcome:
    """A batch write whose task fails once after writing, retried by Spark: read_committed readers see each row
    once, although the failed attempt's rows are in the log."""
    topic = create_topic(bootstrap, unique_topic("eos-retry"), 3, replication=1, min_isr=None)
    marker = os.path.join(workdir, "failed-once")
    log_path = os.path.join(workdir, "retry-job.log")
    started = time.monotonic()
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYSPARK_PYTHON=sys.executable)
    with open(log_path, "wb") as log:
        proc = subprocess.run([sys.executable, str(HERE / "eos_batch_retry_job.py"), "--bootstrap", bootstrap,
                               "--topic", topic, "--rows", str(rows), "--marker", marker],
                              stdout=log, stderr=subprocess.STDOUT, env=env, cwd=str(REPO), timeout=600)
    text = Path(log_path).read_text(errors="replace")
    assert proc.returncode == 0 and "WRITTEN" in text, text[-3000:]
    assert os.path.exists(marker), "the task never failed"
    values = read_committed_values(bootstrap, topic, 3, rows)
    distinct, lost, dup = count_exactly_once(values, rows, "t")
    # read_uncommitted: the failed attempt's rows are in the log too
    in_log = len(read_committed_values(bootstrap, topic, 3, rows + 1, timeout=30, isolation="read_uncommitted"))
    return Outcome("eos batch, a task fails once after writing", rows, len(values), distinct, lost, dup, None,
                   time.monotonic() - started, {"topic": topic, "records_in_log": in_log})
