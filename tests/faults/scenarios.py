"""Fault scenarios: a fault is injected while kwire reads or writes, then what Kafka holds (or what Spark
returned) is counted with an independent reader (librdkafka). Used by the tests in this folder and by
``benchmarks/faults_report.py``; each scenario returns an :class:`Outcome`.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pyarrow as pa

from spark_kwire.client import Admin, KafkaClient, Producer, list_offsets
from harness import descendant_pids, identify, kill_processes

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent

# A killed broker is fenced (and its partitions get new leaders) after broker.session.timeout.ms; the
# default 9 s would make every scenario wait that long.
FAST_FAILOVER = {"broker.session.timeout.ms": "3000", "broker.heartbeat.interval.ms": "500"}


@dataclass
class Outcome:
    """What a scenario sent, what was found afterwards, and how long the fault held things up."""

    scenario: str
    sent: int = 0
    found: int = 0
    distinct: int = 0
    lost: int = 0
    duplicated: int = 0
    recover_s: float | None = None  # fault -> first progress again (None: not measured / no fault hit)
    seconds: float = 0.0
    detail: dict = field(default_factory=dict)

    def row(self) -> str:
        rec = "-" if self.recover_s is None else f"{self.recover_s:.1f}"
        return (f"{self.scenario:<44} {self.sent:>9} {self.found:>9} {self.lost:>6} {self.duplicated:>6} "
                f"{rec:>8} {self.seconds:>7.1f}")


HEADER = (f"{'scenario':<44} {'sent':>9} {'found':>9} {'lost':>6} {'dup':>6} {'recover':>8} {'secs':>7}\n"
          + "-" * 95)


def unique_topic(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


# -- Kafka helpers ---------------------------------------------------------------------------------------

def create_topic(bootstrap: str, name: str, partitions: int, replication: int = 3, min_isr: int | None = 2) -> str:
    configs = {"min.insync.replicas": str(min_isr)} if min_isr and replication > 1 else {}
    with KafkaClient({"bootstrap.servers": bootstrap}) as client:
        Admin(client).create_topics([(name, partitions, replication, configs)], timeout_ms=60_000)
    return name


def end_offsets(client: KafkaClient, topic: str, partitions: int) -> dict[int, int]:
    tps = [(topic, p) for p in range(partitions)]
    return {tp[1]: off for tp, (off, _) in list_offsets(client, tps, "latest").items()}


def produce_rows(bootstrap: str, topic: str, partitions: int, per_partition: int, *, prefix: str = "r",
                 batch_size: int = 64 * 1024) -> int:
    """Write ``per_partition`` records ``{prefix}{p}-{i}`` into each partition with kwire's producer."""
    with KafkaClient({"bootstrap.servers": bootstrap}) as client:
        producer = Producer(client, batch_size=batch_size, compression="lz4")
        for p in range(partitions):
            for start in range(0, per_partition, 50_000):
                stop = min(per_partition, start + 50_000)
                producer.send_batch(topic, p, pa.array([f"{prefix}{p}-{i}".encode() for i in range(start, stop)],
                                                       pa.binary()))
        acks = producer.flush()
    total = sum(a.records for a in acks.values())
    assert total == partitions * per_partition, acks
    return total


def read_all(bootstrap: str, topic: str, partitions: int, *, timeout: float = 180) -> list[tuple]:
    """Every record of ``topic`` as (partition, offset, key, value), read with librdkafka up to the high
    watermarks taken at the start."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"verify-{uuid.uuid4().hex}",
                         "enable.auto.commit": False, "isolation.level": "read_uncommitted",
                         "fetch.max.bytes": 64 * 1024 * 1024, "queued.max.messages.kbytes": 262144})
    try:
        highs = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1] for p in range(partitions)}
        todo = {p for p, hi in highs.items() if hi > 0}
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in todo])
        out: list[tuple] = []
        deadline = time.monotonic() + timeout
        while todo:
            if time.monotonic() > deadline:
                raise AssertionError(f"librdkafka did not read {topic} up to {highs} within {timeout}s "
                                     f"({len(out)} records read, partitions {sorted(todo)} unfinished)")
            for msg in consumer.consume(20_000, 0.5):
                if msg.error() is not None:
                    raise AssertionError(f"librdkafka error reading {topic}: {msg.error()}")
                p, o = msg.partition(), msg.offset()
                out.append((p, o, msg.key(), msg.value()))
                if o >= highs[p] - 1:
                    todo.discard(p)
        return out
    finally:
        consumer.close()


def count_keys(records: list[tuple], expected: set) -> tuple[int, int, int]:
    """(distinct, lost, duplicated) of the records' keys against ``expected``."""
    keys = [r[2] for r in records]
    distinct = set(keys)
    unexpected = distinct - expected
    assert not unexpected, f"{len(unexpected)} keys that were never sent, e.g. {sorted(unexpected)[:3]}"
    return len(distinct), len(expected - distinct), len(keys) - len(distinct)


def leader_of(client: KafkaClient, topic: str, partition: int) -> int:
    client.refresh_metadata([topic])
    return client.leader_for(topic, partition)


def wait_healthy(cluster, timeout: float = 90) -> None:
    """Every node runs and is in the metadata, so the next scenario starts from a whole cluster."""
    for node_id, node in cluster.nodes.items():
        if not node.is_running():
            cluster.restart(node_id)
    deadline = time.monotonic() + timeout
    with KafkaClient({"bootstrap.servers": cluster.bootstrap_servers}) as client:
        while True:
            client.refresh_metadata([])
            if set(client.brokers) == set(cluster.nodes):
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"brokers {sorted(client.brokers)} of {sorted(cluster.nodes)} are registered")
            time.sleep(0.3)


# -- fault injection ---------------------------------------------------------------------------------

class LeaderKiller(threading.Thread):
    """SIGKILLs the leader of ``topic``-``partition`` once ``trigger()`` is true (polled every 50 ms), then
    watches for a new leader and for the partition's end offset to grow again; ``restart`` restarts the
    killed broker as soon as a new leader is in place (while the work still runs).

    Times (monotonic): ``killed_at``, ``leader_moved_at``, ``progress_at``, ``restarted_at``.
    """

    def __init__(self, cluster, topic: str, partition: int, trigger: Callable[[], bool], *,
                 restart: bool = False, watch_progress: bool = True) -> None:
        super().__init__(daemon=True, name="leader-killer")
        self.cluster, self.topic, self.partition, self.trigger = cluster, topic, partition, trigger
        self.restart, self.watch_progress = restart, watch_progress
        self.stopping = threading.Event()
        self.victim: int | None = None
        self.killed_at = self.leader_moved_at = self.progress_at = self.restarted_at = None
        self.new_leader: int | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self._run()
        except BaseException as exc:  # reported by stop()
            self.error = exc

    def _run(self) -> None:
        with KafkaClient({"bootstrap.servers": self.cluster.bootstrap_servers, "request.timeout.ms": "3000",
                          "retry.backoff.max.ms": "200"}) as client:
            while not self.trigger():
                if self.stopping.wait(0.05):
                    return
            tp = (self.topic, self.partition)
            self.victim = leader_of(client, *tp)
            before = list_offsets(client, [tp], "latest")[tp][0]
            self.cluster.kill(self.victim)
            self.killed_at = time.monotonic()
            while not self.stopping.is_set():
                try:
                    leader = leader_of(client, *tp)
                except Exception:
                    leader = -1
                if leader >= 0 and leader != self.victim:
                    self.new_leader = leader
                    self.leader_moved_at = time.monotonic()
                    break
                time.sleep(0.05)
            if self.restart and not self.stopping.is_set():
                self.cluster.restart(self.victim, wait=False)
                self.restarted_at = time.monotonic()
            while self.watch_progress and not self.stopping.is_set():
                try:
                    if list_offsets(client, [tp], "latest")[tp][0] > before:
                        self.progress_at = time.monotonic()
                        break
                except Exception:
                    pass
                time.sleep(0.05)

    def stop(self) -> None:
        self.stopping.set()
        self.join(timeout=60)
        if self.error is not None:
            raise AssertionError(f"the fault injector failed: {self.error!r}") from self.error

    @property
    def recover_s(self) -> float | None:
        end = self.progress_at or self.leader_moved_at
        return None if self.killed_at is None or end is None else end - self.killed_at


def _wait(predicate: Callable[[], bool], timeout: float, what, interval: float = 0.2) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what() if callable(what) else what}")
        time.sleep(interval)


# -- scenario 1: a Spark write while a leader dies (and comes back) ----------------------------------------

def spark_write_with_leader_kill(spark, cluster, *, rows: int = 1_000_000, partitions: int = 6,
                                 restart: bool = False, tasks: int = 16) -> Outcome:
    topic = create_topic(cluster.bootstrap_servers, unique_topic("write-kill"), partitions)
    name = "spark write, leader SIGKILLed" + (" + restarted" if restart else "")
    df = spark.range(rows, numPartitions=tasks).selectExpr(
        "cast(id as string) as key", "concat('v', cast(id as string)) as value")
    with KafkaClient({"bootstrap.servers": cluster.bootstrap_servers}) as probe:
        def progressed() -> bool:
            try:
                return sum(end_offsets(probe, topic, partitions).values()) >= rows // 10
            except Exception:
                return False

        killer = LeaderKiller(cluster, topic, 0, progressed, restart=restart)
        started = time.monotonic()
        killer.start()
        try:
            (df.write.format("kwire").option("kafka.bootstrap.servers", cluster.bootstrap_servers)
             .option("topic", topic).mode("append").save())
            finished = time.monotonic()
        finally:
            killer.stop()
    records = read_all(cluster.bootstrap_servers, topic, partitions)
    expected = {str(i).encode() for i in range(rows)}
    distinct, lost, dup = count_keys(records, expected)
    values_ok = all(r[3] == b"v" + r[2] for r in records)
    return Outcome(name, rows, len(records), distinct, lost, dup, killer.recover_s, finished - started,
                   {"topic": topic, "victim": killer.victim, "new_leader": killer.new_leader,
                    "killed_during_write": killer.killed_at is not None and killer.killed_at < finished,
                    "restarted_during_write": killer.restarted_at is not None and killer.restarted_at < finished,
                    "values_match_keys": values_ok})


# -- scenario 2: a Spark batch read while a leader dies ------------------------------------------------------

def _stats_lines(stats_dir: str | None, topic: str) -> int:
    if not stats_dir or not os.path.isdir(stats_dir):
        return 0
    n = 0
    for name in os.listdir(stats_dir):
        try:
            with open(os.path.join(stats_dir, name)) as f:
                n += sum(1 for line in f if f'"topic": "{topic}"' in line)
        except OSError:
            pass
    return n


def spark_read_with_leader_kill(spark, cluster, *, per_partition: int = 100_000, partitions: int = 6,
                                read_options: dict | None = None) -> Outcome:
    """`read_options` cut the read (default: maxRecordsPerPartition, six tasks per partition)."""
    bootstrap = cluster.bootstrap_servers
    topic = create_topic(bootstrap, unique_topic("read-kill"), partitions)
    total = produce_rows(bootstrap, topic, partitions, per_partition)
    stats_dir = os.environ.get("KWIRE_STATS_DIR")
    started_reading = threading.Event()

    def some_tasks_done() -> bool:  # tasks write a stats line when they finish; without stats, wait a moment
        if stats_dir:
            return _stats_lines(stats_dir, topic) >= 2
        return started_reading.wait(0) and time.monotonic() - started >= 2

    victim_partition = partitions - 1  # read last, so the kill lands before its tasks run
    killer = LeaderKiller(cluster, topic, victim_partition, some_tasks_done, watch_progress=False)
    started = time.monotonic()
    killer.start()
    try:
        started_reading.set()
        cut = read_options if read_options is not None else {"maxRecordsPerPartition": str(max(1, per_partition // 6))}
        table = (spark.read.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
                 .option("startingOffsets", "earliest").option("endingOffsets", "latest").options(**cut)
                 .load().select("partition", "offset", "value").toArrow())
        finished = time.monotonic()
    finally:
        killer.stop()
    got = sorted(zip(table.column("partition").to_pylist(), table.column("offset").to_pylist(),
                     table.column("value").to_pylist()))
    expected = [(p, i, f"r{p}-{i}".encode()) for p in range(partitions) for i in range(per_partition)]
    distinct = len(set(got))
    exact = got == expected
    lost = len(set(expected) - set(got))
    return Outcome("spark batch read, leader SIGKILLed", total, len(got), distinct, lost, len(got) - distinct,
                   killer.recover_s, finished - started,
                   {"topic": topic, "exact": exact, "victim": killer.victim,
                    "killed_during_read": killer.killed_at is not None and killer.killed_at < finished})


# -- scenario 3: a stream into a parquet sink while a leader dies and comes back --------------------------

def spark_start_flake(error) -> bool:
    """Spark gives a Python worker 10 s (hard-coded) to connect back to the JVM after it starts; on a loaded
    machine a streaming source's worker sometimes misses that while the query initializes. That is Spark
    and the machine, not kwire: such a start is retried once."""
    return error is not None and "Python worker failed to connect back" in str(error)


class ProducerThread(threading.Thread):
    """librdkafka idempotent producer writing values ``{prefix}{n}`` (n = 0, 1, ...) until stopped."""

    def __init__(self, bootstrap: str, topic: str, *, prefix: str = "s", per_tick: int = 200,
                 interval: float = 0.05) -> None:
        super().__init__(daemon=True, name="producer")
        self.bootstrap, self.topic, self.prefix = bootstrap, topic, prefix
        self.per_tick, self.interval = per_tick, interval
        self.stopping = threading.Event()
        self.sent = 0
        self.errors: list = []

    def run(self) -> None:
        from confluent_kafka import Producer as RdProducer

        producer = RdProducer({"bootstrap.servers": self.bootstrap, "enable.idempotence": True, "linger.ms": 5,
                               "message.timeout.ms": 120_000})

        def ack(err, _msg):
            if err:
                self.errors.append(err)

        try:
            while not self.stopping.is_set():
                for _ in range(self.per_tick):
                    value = f"{self.prefix}{self.sent}".encode()
                    producer.produce(self.topic, key=value, value=value, on_delivery=ack)
                    self.sent += 1
                producer.poll(0)
                time.sleep(self.interval)
        finally:
            left = producer.flush(120)
            if left:
                self.errors.append(f"{left} records not delivered")

    def finish(self) -> int:
        self.stopping.set()
        self.join(timeout=150)
        assert not self.errors, self.errors[:3]
        return self.sent


def sink_rows(spark, path: str) -> list[tuple]:
    """(partition, offset, value) of the committed rows of a parquet file sink (read through its log)."""
    if not os.path.isdir(os.path.join(path, "_spark_metadata")):
        return []
    table = spark.read.parquet(path).select("partition", "offset", "value").toArrow()
    return list(zip(table.column("partition").to_pylist(), table.column("offset").to_pylist(),
                    table.column("value").to_pylist()))


def check_sink(rows: list[tuple], ends: dict[int, int], sent: int, prefix: str) -> tuple[int, int, int]:
    """(distinct, lost, duplicated) by (partition, offset); also checks the values are exactly the sent ones."""
    keys = [(p, o) for p, o, _ in rows]
    distinct = set(keys)
    expected = {(p, o) for p, end in ends.items() for o in range(end)}
    assert not distinct - expected, f"offsets that do not exist: {sorted(distinct - expected)[:5]}"
    values = {v for _, _, v in rows}
    assert sum(ends.values()) == sent, f"the topic holds {sum(ends.values())} records, the producer sent {sent}"
    assert values <= {f"{prefix}{i}".encode() for i in range(sent)}
    return len(distinct), len(expected - distinct), len(keys) - len(distinct)


def stream_with_leader_kill(spark, cluster, workdir: str, *, partitions: int = 4) -> Outcome:
    bootstrap = cluster.bootstrap_servers
    topic = create_topic(bootstrap, unique_topic("stream-kill"), partitions)
    out, checkpoint = os.path.join(workdir, "out"), os.path.join(workdir, "checkpoint")
    producer = ProducerThread(bootstrap, topic, per_tick=100)
    producer.start()

    def start_query():
        return (spark.readStream.format("kwire").option("kafka.bootstrap.servers", bootstrap)
                .option("subscribe", topic).option("startingOffsets", "earliest").load()
                .select("partition", "offset", "value")
                .writeStream.format("parquet").option("path", out).option("checkpointLocation", checkpoint)
                .trigger(processingTime="500 milliseconds").start())

    query = start_query()
    started = time.monotonic()
    killer = None
    try:
        for attempt in range(2):
            _wait(lambda: query.exception() is not None or any(p["numInputRows"] > 0 for p in query.recentProgress),
                  180, lambda: f"the first micro-batch (status {query.status}, progress {query.recentProgress[-2:]})")
            if attempt == 0 and spark_start_flake(query.exception()):
                query = start_query()  # nothing was committed yet: start again on the same checkpoint
                continue
            break
        assert query.exception() is None, query.exception()
        batches_before = len(query.recentProgress)
        killer = LeaderKiller(cluster, topic, 0, lambda: True, restart=True)
        killer.start()
        _wait(lambda: killer.progress_at is not None or killer.error is not None or not killer.is_alive(), 90,
              "the partition to take writes again")
        _wait(lambda: query.exception() is not None or len(query.recentProgress) > batches_before + 4, 90,
              "micro-batches after the kill")
        killer.stop()
        time.sleep(1)
        sent = producer.finish()
        with KafkaClient({"bootstrap.servers": bootstrap}) as client:
            ends = end_offsets(client, topic, partitions)
        _wait(lambda: query.exception() is not None or len(sink_rows(spark, out)) >= sum(ends.values()), 120,
              "the sink to hold every record", interval=1.0)
        assert query.exception() is None, query.exception()
        assert query.isActive
    finally:
        query.stop()
        producer.stopping.set()
        if killer is not None:
            killer.stopping.set()
    rows = sink_rows(spark, out)
    distinct, lost, dup = check_sink(rows, ends, sent, "s")
    return Outcome("stream to parquet, leader killed + restarted", sent, len(rows), distinct, lost, dup,
                   killer.recover_s, time.monotonic() - started, {"topic": topic, "victim": killer.victim})


# -- scenario 4: the driver process of a streaming query is SIGKILLed, several times ----------------------

def _kill_tree(proc: subprocess.Popen) -> None:
    """SIGKILL a driver started in a session of its own, with its JVM and Python workers (some of which run
    in process groups of their own)."""
    below = identify(descendant_pids(proc.pid))
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    kill_processes(below)
    proc.wait(timeout=30)


def _batches(log_path: str) -> list[int]:
    try:
        text = Path(log_path).read_text(errors="replace")
    except OSError:
        return []
    return [int(x) for x in re.findall(r"^BATCH (\d+) rows=(?:[1-9]\d*)$", text, re.M)]


def stream_driver_crashes(spark, bootstrap: str, workdir: str, *, kills: int = 3, partitions: int = 3,
                          seed: int = 11) -> Outcome:
    """A streaming query runs in a driver subprocess; it is SIGKILLed ``kills`` times (with its JVM and Python
    workers) while a producer writes, restarted from its checkpoint each time, and finally drains."""
    topic = create_topic(bootstrap, unique_topic("driver-crash"), partitions, replication=1, min_isr=None)
    out, checkpoint = os.path.join(workdir, "out"), os.path.join(workdir, "checkpoint")
    stop_file = os.path.join(workdir, "stop")
    rng = random.Random(seed)
    producer = ProducerThread(bootstrap, topic, prefix="d", per_tick=100)
    producer.start()
    started = time.monotonic()
    recoveries: list[float] = []  # SIGKILL -> the restarted driver's first micro-batch with rows
    last_kill = None
    proc = None

    def launch(run: int) -> tuple[subprocess.Popen, str]:
        log_path = os.path.join(workdir, f"driver-{run}.log")
        env = dict(os.environ, PYTHONUNBUFFERED="1", PYSPARK_PYTHON=sys.executable)
        log = open(log_path, "wb")
        try:
            p = subprocess.Popen([sys.executable, str(HERE / "stream_driver.py"), "--bootstrap", bootstrap,
                                  "--topic", topic, "--parquet-out", out, "--checkpoint", checkpoint, "--stop-file", stop_file],
                                 stdout=log, stderr=subprocess.STDOUT, env=env, cwd=str(REPO),
                                 start_new_session=True)
        finally:
            log.close()
        return p, log_path

    try:
        for run in range(kills + 1):
            if run == kills:  # the last run drains what the producer wrote
                sent = producer.finish()
                with KafkaClient({"bootstrap.servers": bootstrap}) as client:
                    ends = end_offsets(client, topic, partitions)
            proc, log_path = launch(run)
            _wait(lambda: proc.poll() is not None or len(_batches(log_path)) >= 1, 180,
                  f"driver run {run} to commit a micro-batch with rows")
            if proc.poll() is not None and spark_start_flake(Path(log_path).read_text(errors="replace")):
                proc, log_path = launch(run)  # see spark_start_flake: the same run again, once
                _wait(lambda: proc.poll() is not None or len(_batches(log_path)) >= 1, 180,
                      f"driver run {run} to commit a micro-batch with rows")
            assert proc.poll() is None, Path(log_path).read_text(errors="replace")[-3000:]
            if last_kill is not None:
                recoveries.append(time.monotonic() - last_kill)
            if run == kills:
                break
            time.sleep(rng.uniform(0.0, 1.5))  # often inside the next micro-batch
            last_kill = time.monotonic()
            _kill_tree(proc)
            proc = None
        _wait(lambda: proc.poll() is not None or len(sink_rows(spark, out)) >= sum(ends.values()), 240,
              "the restarted driver to drain the topic", interval=1.0)
        assert proc.poll() is None, Path(log_path).read_text(errors="replace")[-3000:]
        Path(stop_file).touch()
        proc.wait(timeout=60)
        assert proc.returncode == 0, Path(log_path).read_text(errors="replace")[-3000:]
        proc = None
    finally:
        producer.stopping.set()
        if proc is not None and proc.poll() is None:
            _kill_tree(proc)
    rows = sink_rows(spark, out)
    distinct, lost, dup = check_sink(rows, ends, sent, "d")
    return Outcome(f"stream driver SIGKILLed x{kills}, restarted", sent, len(rows), distinct, lost, dup,
                   max(recoveries), time.monotonic() - started,
                   {"topic": topic, "runs": kills + 1, "kill_to_next_batch_s": [round(r, 1) for r in recoveries]})


# -- scenario 5: Spark standalone cluster, an executor dies mid-read / mid-write --------------------------

def _standalone_job(master_url: str, args: list[str], workdir: str, log_name: str,
                    stats_dir: str) -> tuple[subprocess.Popen, str]:
    log_path = os.path.join(workdir, log_name)
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    log = open(log_path, "wb")
    try:
        proc = subprocess.Popen([sys.executable, str(HERE / "standalone_job.py"), "--master", master_url,
                                 "--stats-dir", stats_dir, *args],
                                stdout=log, stderr=subprocess.STDOUT, env=env, cwd=str(REPO), start_new_session=True)
    finally:
        log.close()
    return proc, log_path


def _finish_job(proc: subprocess.Popen, log_path: str, timeout: float) -> dict:
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_tree(proc)
        raise AssertionError(f"the Spark job did not finish in {timeout}s:\n"
                             + Path(log_path).read_text(errors="replace")[-4000:])
    text = Path(log_path).read_text(errors="replace")
    found = re.findall(r"^RESULT (\{.*\})$", text, re.M)
    if proc.returncode != 0 or not found:
        raise AssertionError(f"the Spark job failed ({proc.returncode}):\n{text[-4000:]}")
    return json.loads(found[-1])


def standalone_executor_kills(standalone, bootstrap: str, workdir: str, *, partitions: int = 4,
                              per_partition: int = 50_000, rows: int = 200_000,
                              tasks: int = 8) -> tuple[Outcome, Outcome]:
    """One driver on the standalone cluster reads a topic (small tasks) and saves it as parquet, then writes
    ``rows`` keyed rows in ``tasks`` tasks; an executor is SIGKILLed in the middle of each phase."""
    read_topic = create_topic(bootstrap, unique_topic("exec-read"), partitions, replication=1, min_isr=None)
    write_topic = create_topic(bootstrap, unique_topic("exec-write"), partitions, replication=1, min_isr=None)
    total = produce_rows(bootstrap, read_topic, partitions, per_partition)
    stats_dir = os.path.join(workdir, "stats")
    os.makedirs(stats_dir, exist_ok=True)
    out = os.path.join(workdir, "read-out")
    started = time.monotonic()
    proc, log_path = _standalone_job(
        standalone.master_url,
        ["both", "--bootstrap", bootstrap, "--topic", read_topic, "--write-topic", write_topic, "--out", out,
         "--max-records", str(per_partition // 5), "--rows", str(rows), "--tasks", str(tasks)],
        workdir, "job.log", stats_dir)
    log = lambda: Path(log_path).read_text(errors="replace")  # noqa: E731
    try:
        _wait(lambda: proc.poll() is not None or _stats_lines(stats_dir, read_topic) >= 2, 240,
              "read tasks to finish")
        assert proc.poll() is None, log()[-4000:]
        tasks_done = _stats_lines(stats_dir, read_topic)
        read_victim = standalone.kill_executor()
        _wait(lambda: proc.poll() is not None or "PHASE write" in log(), 240, "the write phase")
        with KafkaClient({"bootstrap.servers": bootstrap}) as probe:
            _wait(lambda: proc.poll() is not None
                  or sum(end_offsets(probe, write_topic, partitions).values()) >= rows // 5,
                  240, "a fifth of the rows to be written", interval=0.05)
        assert proc.poll() is None, log()[-4000:]
        write_victim = standalone.kill_executor()
        result = _finish_job(proc, log_path, 300)
    finally:
        if proc.poll() is None:
            _kill_tree(proc)
    elapsed = time.monotonic() - started
    import pyarrow.parquet as pq

    table = pq.read_table(out)
    got = sorted(zip(table.column("partition").to_pylist(), table.column("offset").to_pylist(),
                     table.column("value").to_pylist()))
    expected = [(p, i, f"r{p}-{i}".encode()) for p in range(partitions) for i in range(per_partition)]
    distinct = len(set(got))
    read = Outcome("standalone: executor SIGKILLed mid-read", total, len(got), distinct,
                   len(set(expected) - set(got)), len(got) - distinct, None, result.get("read_seconds", elapsed),
                   {"topic": read_topic, "exact": got == expected, "victim_pid": read_victim,
                    "tasks_done_at_kill": tasks_done, "tasks": partitions * 5,
                    "failed_tasks": result.get("read_failed_tasks")})
    records = read_all(bootstrap, write_topic, partitions)
    distinct, lost, dup = count_keys(records, {str(i).encode() for i in range(rows)})
    write = Outcome("standalone: executor SIGKILLed mid-write", rows, len(records), distinct, lost, dup, None,
                    result.get("write_seconds", elapsed),
                    {"topic": write_topic, "victim_pid": write_victim, "rows_per_task": rows // tasks,
                     "failed_tasks": result.get("write_failed_tasks")})
    return read, write
