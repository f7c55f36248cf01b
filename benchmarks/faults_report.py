"""Fault report: every fault scenario of tests/faults once, then a table of what was sent, found, lost,
duplicated and how long the fault held things up; and the hostile-bytes run: inputs tried, errors by type,
slowest input, and what a fake broker's hostile answers turn into.

    python benchmarks/faults_report.py [--only write,read,stream,driver,standalone,proxy,fuzz] [--rows 1000000]

Starts what it needs on loopback (a 3-node KRaft cluster, a 1-node broker, a broker behind a chaos proxy,
a local Spark session, a Spark standalone master with two workers) and stops all of it at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
import tracemalloc
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from harness import fake_broker  # noqa: E402
from tests.faults import hostile  # noqa: E402
from tests.faults import scenarios as sc  # noqa: E402
from tests.faults.test_proxy_faults import chaos_write_and_read, idempotent_producer_through_chaos  # noqa: E402

ALL = ("write", "read", "stream", "driver", "standalone", "proxy", "fuzz")


def spark_session(stats_dir: str):
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ["KWIRE_STATS_DIR"] = stats_dir  # before Spark starts: its Python workers inherit it
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]").appName("kwire-faults-report")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", "2g").config("spark.sql.shuffle.partitions", "4").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default=",".join(ALL), help="comma-separated scenarios: " + ", ".join(ALL))
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the leader-kill write scenarios")
    parser.add_argument("--fuzz-inputs", type=int, default=102_000)
    args = parser.parse_args()
    wanted = set(args.only.split(","))
    unknown = wanted - set(ALL)
    if unknown:
        parser.error(f"unknown scenario(s) {sorted(unknown)}")

    from spark_kwire.protocol.records import warm_up
    from harness import KafkaCluster, SparkStandaloneCluster, proxied_kafka_cluster

    warm_up()
    outcomes: list[sc.Outcome] = []
    failures: list[str] = []
    notes: list[str] = []
    fuzz_text = ""

    def attempt(name, fn):
        started = time.monotonic()
        print(f"... {name}", flush=True)
        try:
            result = fn()
        except Exception:  # keep going: the report shows what failed
            failures.append(f"{name}: {traceback.format_exc(limit=3)}")
            return None
        print(f"    done in {time.monotonic() - started:.0f}s", flush=True)
        return result

    with contextlib.ExitStack() as stack:
        work = stack.enter_context(tempfile.TemporaryDirectory(prefix="kwire-faults-report-"))
        spark = None
        if wanted & {"write", "read", "stream", "driver", "proxy"}:
            spark = spark_session(os.path.join(work, "stats"))
            os.makedirs(os.path.join(work, "stats"), exist_ok=True)
            stack.callback(spark.stop)
        if wanted & {"write", "read", "stream"}:
            cluster3 = stack.enter_context(KafkaCluster(3, extra_properties=sc.FAST_FAILOVER))
            for restart in (False, True):
                if "write" in wanted:
                    sc.wait_healthy(cluster3)
                    o = attempt(f"write, restart={restart}", lambda: sc.spark_write_with_leader_kill(
                        spark, cluster3, rows=args.rows, restart=restart))
                    outcomes += [o] if o else []
            if "read" in wanted:
                sc.wait_healthy(cluster3)
                o = attempt("read", lambda: sc.spark_read_with_leader_kill(spark, cluster3))
                outcomes += [o] if o else []
            if "stream" in wanted:
                sc.wait_healthy(cluster3)
                o = attempt("stream", lambda: sc.stream_with_leader_kill(spark, cluster3, os.path.join(work, "stream")))
                outcomes += [o] if o else []
        if wanted & {"driver", "standalone", "fuzz"}:
            single = stack.enter_context(KafkaCluster(1))
            if "driver" in wanted:
                os.makedirs(os.path.join(work, "driver"))
                o = attempt("driver crashes", lambda: sc.stream_driver_crashes(
                    spark, single.bootstrap_servers, os.path.join(work, "driver")))
                outcomes += [o] if o else []
            if "standalone" in wanted:
                standalone = stack.enter_context(SparkStandaloneCluster(2))
                folder = os.path.join(work, "standalone")
                os.makedirs(folder)
                pair = attempt("standalone executor kills", lambda: sc.standalone_executor_kills(
                    standalone, single.bootstrap_servers, folder))
                if pair:
                    outcomes += list(pair)
                    notes.append(f"executor killed mid-write: {pair[1].duplicated} duplicated row(s), at most "
                                 f"{pair[1].detail['rows_per_task']} (one task's rows) by at-least-once")
            if "fuzz" in wanted:
                fuzz_text = attempt("fuzz", lambda: fuzz(single.bootstrap_servers, args.fuzz_inputs)) or ""
        if "proxy" in wanted:
            cluster, proxy = proxied_kafka_cluster()
            stack.callback(proxy.stop)
            stack.enter_context(cluster)
            result = attempt("chaos proxy", lambda: chaos_write_and_read(spark, cluster, proxy))
            if result:
                outcomes += list(result)
                notes.append(f"chaos proxy (spark): {dict(proxy.stats)}")
            before = dict(proxy.stats)
            o = attempt("chaos proxy, one producer", lambda: idempotent_producer_through_chaos(cluster, proxy))
            if o:
                outcomes.append(o)
                cuts = proxy.stats["cuts"] - before["cuts"]
                notes.append(f"one producer through {cuts} cut connections: {o.detail['batches']} batches, one "
                             f"producer id/epoch: {o.detail['one_producer_id']}, base sequence == base offset: "
                             f"{o.detail['sequences_dense']}, in order: {o.detail['in_order']}")
            o = attempt("unreachable broker", lambda: unreachable(cluster, proxy))
            if o:
                outcomes.append(o)
                notes.append(f"black-holed broker: {o.detail['acknowledged']} of {o.sent} records acknowledged "
                             f"before the failure, {o.found} found (lost = acknowledged but missing); the "
                             f"error, {o.recover_s:.1f}s after the broker went silent: {o.detail['error'][:420]}")

    print("\nFAULT SCENARIOS (recover: fault -> first progress again on the faulted partition, seconds)")
    print(sc.HEADER)
    for o in outcomes:
        print(o.row())
    for note in notes:
        print(f"  {note}")
    if fuzz_text:
        print("\nHOSTILE BYTES")
        print(fuzz_text)
    if failures:
        print("\nFAILED SCENARIOS")
        for f in failures:
            print(f)
    return 1 if failures else 0


def unreachable(cluster, proxy) -> sc.Outcome:
    """kwire's producer with delivery.timeout.ms=5000; the broker becomes a black hole mid-write."""
    import pyarrow as pa

    from spark_kwire.client import KafkaClient, ProduceError, Producer

    proxy.heal()
    topic = sc.create_topic(cluster.bootstrap_servers, sc.unique_topic("unreachable"), 2, replication=1, min_isr=None)
    sent = {p: [f"{p}-{i}".encode() for i in range(40_000)] for p in range(2)}
    options = {"bootstrap.servers": cluster.bootstrap("PROXIED"), "delivery.timeout.ms": "5000",
               "request.timeout.ms": "3000", "batch.size": "16384", "buffer.memory": "131072"}
    started = time.monotonic()
    with KafkaClient(options) as client:
        producer = Producer(client)
        for p in range(2):
            producer.send_batch(topic, p, pa.array(sent[p][:20_000], pa.binary()))
        proxy.configure(mode="blackhole")
        proxy.cut_all()
        cut = time.monotonic()
        try:
            for p in range(2):
                producer.send_batch(topic, p, pa.array(sent[p][20_000:], pa.binary()))
            producer.flush()
            raise AssertionError("the write succeeded although the broker was unreachable")
        except ProduceError as exc:
            error = exc
        failed = time.monotonic()
    proxy.heal()
    proxy.cut_all()
    records = sc.read_all(cluster.bootstrap_servers, topic, 2)
    values = [r[3] for r in records]
    acknowledged = {v for p in range(2) for v in sent[p][:error.acknowledged.get((topic, p), 0)]}
    return sc.Outcome("black-holed broker, delivery.timeout.ms=5000", 80_000, len(records), len(set(values)),
                      len(acknowledged - set(values)), len(values) - len(set(values)), failed - cut,
                      failed - started, {"acknowledged": error.acknowledged_records, "error": str(error)})


def fuzz(bootstrap: str, inputs: int) -> str:
    from tests.faults.test_hostile_bytes import EXPECTED, make_seeds

    from spark_kwire.client import KafkaClient, fetch_range

    frames, records = make_seeds(bootstrap)
    report = hostile.fuzz_decoders(frames, records, fetch_inputs=inputs * 2 // 5, record_inputs=inputs - inputs * 2 // 5,
                                   seed=20261122)
    lines = [report.summary(), "", "fake broker answering Fetch with (request.timeout.ms=1000, default.api.timeout.ms=2000):"]
    options = {"request.timeout.ms": "1000", "default.api.timeout.ms": "2000", "fetch.max.wait.ms": "100",
               "retry.backoff.max.ms": "200"}
    for mode in sorted(EXPECTED):
        with fake_broker.FakeBroker(mode) as broker, KafkaClient({"bootstrap.servers": broker.bootstrap, **options}) as client:
            started = time.monotonic()
            try:
                for _ in fetch_range(client, fake_broker.FAKE_TOPIC, 0, 0, 3):
                    pass
                outcome = "no error (!)"
            except Exception as exc:  # noqa: BLE001
                outcome = f"{type(exc).__name__}: {str(exc)[:150]}"
            lines.append(f"  {mode:<9} {time.monotonic() - started:4.1f}s  {outcome}")
    import tracemalloc

    from spark_kwire.protocol.records import DEFAULT_MAX_DECOMPRESSED_BYTES, decode_record_set, warm_up

    warm_up()
    inflated = DEFAULT_MAX_DECOMPRESSED_BYTES + 2**20
    lines.append(f"decompression bombs ({inflated >> 20} MiB of zeros in one record; default limit "
                 f"{DEFAULT_MAX_DECOMPRESSED_BYTES >> 20} MiB):")
    for codec in ("gzip", "snappy", "lz4", "zstd"):
        bomb = fake_broker.bomb_batch(codec, inflated)
        tracemalloc.start()
        started = time.monotonic()
        try:
            decode_record_set(bomb, start_offset=0)
            outcome = "no error (!)"
        except Exception as exc:  # noqa: BLE001
            outcome = type(exc).__name__
        elapsed = time.monotonic() - started
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        lines.append(f"  {codec:<7} {len(bomb):>9} bytes on the wire -> {outcome} after {elapsed:.2f}s, "
                     f"peak {peak / 2**20:.0f} MiB allocated")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
