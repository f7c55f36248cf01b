"""Reading one large partition in one task keeps Spark's Python worker small: its peak resident memory
stays within twice that of a no-op Python source yielding the same rows (issue #21's bound), sampled from
/proc while each read runs. Kept small (about 40 MiB of values) so that it runs in the suite."""

from __future__ import annotations

import os
import threading
import uuid

import pytest

from harness.processes import spark_python_workers

RECORDS, SIZE = 400_000, 100


def peak_worker_rss_mib(run) -> float:
    """Highest VmRSS of any Spark Python worker process while `run()` runs, sampled every 10 ms."""
    peak, stop = [0], threading.Event()

    def sample():
        while not stop.is_set():
            for pid in spark_python_workers(os.getpid()):
                try:
                    with open(f"/proc/{pid}/status") as f:
                        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
                except (OSError, StopIteration):
                    continue
                peak[0] = max(peak[0], rss)
            stop.wait(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        run()
    finally:
        stop.set()
        sampler.join()
    return peak[0] / 1024


def noop_source():
    from pyspark.sql.datasource import DataSource, DataSourceReader

    class NoopLargePartition(DataSource):
        @classmethod
        def name(cls):
            return "noop_large_partition"

        def schema(self):
            return "value binary, partition int, offset long"

        def reader(self, schema):
            return NoopReader()

    class NoopReader(DataSourceReader):
        def read(self, partition):
            import numpy as np
            import pyarrow as pa

            value = b"v" * SIZE
            for done in range(0, RECORDS, 50_000):
                n = min(50_000, RECORDS - done)
                yield pa.RecordBatch.from_arrays(
                    [pa.array([value] * n, pa.binary()), pa.array(np.zeros(n, np.int32)),
                     pa.array(np.arange(done, done + n, dtype=np.int64))], names=["value", "partition", "offset"])

    return NoopLargePartition


@pytest.mark.timeout(600)
def test_one_large_partition_read_in_one_task_stays_within_twice_a_noop_source(spark, bootstrap, create_topic,
                                                                                produce):
    topic = create_topic(f"large-{uuid.uuid4().hex[:8]}", partitions=1)
    pool = os.urandom(SIZE * 64 + 4096)
    produce(topic, [(None, pool[(i * 7919) % (len(pool) - SIZE):][:SIZE]) for i in range(RECORDS)],
            **{"compression.type": "lz4", "linger.ms": 20})
    spark.dataSource.register(noop_source())

    def kwire():
        row = (spark.read.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
               .option("packPartitions", "false").load().selectExpr("count(*) AS n", "sum(length(value)) AS b")
               .collect()[0])
        assert (row.n, row.b) == (RECORDS, RECORDS * SIZE)

    def noop():
        row = spark.read.format("noop_large_partition").load().selectExpr("count(*) AS n").collect()[0]
        assert row.n == RECORDS

    kwire(), noop()  # warm: workers started, kernels loaded from numba's cache
    kwire_peak = peak_worker_rss_mib(kwire)
    noop_peak = peak_worker_rss_mib(noop)
    assert noop_peak > 0, "no Spark Python worker was seen"
    assert kwire_peak <= 2 * noop_peak, (kwire_peak, noop_peak)
