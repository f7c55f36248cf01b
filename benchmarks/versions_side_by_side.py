"""Versions of kwire in one Spark session, beside Spark's built-in `kafka` connector: did a change keep the
warm read and write figures? On a busy machine, figures from separate runs minutes apart differ more than the
change does; side by side in one session, alternating, they share whatever the machine does meanwhile.

The other versions come from git revisions of this repository (``--revision``, repeat it to compare several):
each exported to a temporary folder with its package renamed (``spark_kwire`` -> ``spark_kwire_at_<rev>``,
format ``kwire_at_<rev>``) and put on the Python workers' PYTHONPATH. Each round reads N records of 100 B
(``count(*)``, ``sum(length(value))``, asserted) and writes N keyed rows (same records per partition asserted)
through the built-in connector, the other versions and this checkout, in a rotating order, after one untimed
warm-up each. Every write goes into a fresh topic (created just before it, deleted after its offsets were
checked); ``--partitions 1,64,512`` runs the writes at each partition count in turn (reads use the first). A
new topic's partitions have leaders in the metadata a moment before the broker serves them (until then a
Produce gets NOT_LEADER_OR_FOLLOWER, retried after a backoff, and Spark's built-in sink failed into such
64-partition topics, expiring its records after 120 s): each write starts once every partition answers
ListOffsets. A failed write of the built-in sink is reported and left out of its figures.
Writes set ``kafka.compression.type`` (``--compression``), ``kafka.linger.ms`` 20 and ``kafka.batch.size`` 1 MB
unless ``--kafka-defaults`` asks for no setting but the bootstrap servers, as a user writes.

    python benchmarks/versions_side_by_side.py --revision e2d7f1a [--records 1000000] [--runs 5]
    python benchmarks/versions_side_by_side.py --revision 31903d5 --revision b6489ef --only write \
        --records 400000 --partitions 1,64,512 --kafka-defaults --runs 5
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

from _common import REPO, broker, print_machine, report, spark_session, timed


def renamed(revision: str) -> tuple[str, str]:
    """The package and data source names that ``revision``'s kwire gets here."""
    tag = re.sub(r"\W", "_", revision)
    return f"spark_kwire_at_{tag}", f"kwire_at_{tag}"


def export_renamed(revision: str, into: Path) -> None:
    """``spark_kwire`` of ``revision`` as the package and data source that :func:`renamed` names."""
    package, fmt = renamed(revision)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", revision, "spark_kwire"], check=True,
                             capture_output=True).stdout
    with tempfile.TemporaryDirectory(dir=into) as unpacked:
        subprocess.run(["tar", "-x", "-C", unpacked], input=archive, check=True)
        (Path(unpacked) / "spark_kwire").rename(into / package)
    for path in (into / package).rglob("*.py"):
        text = re.sub(r"\bspark_kwire\b", package, path.read_text(encoding="utf-8"))
        if path.name == "source.py":
            text = text.replace('return "kwire"', f'return "{fmt}"')
        path.write_text(text, encoding="utf-8")


def export_for_workers(revision: str, into: Path) -> None:
    """``revision``'s kwire exported renamed into ``into``, which goes on this process's and Spark's workers' path."""
    export_renamed(revision, into)
    worker_path = [entry for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry]
    if str(into) not in worker_path:
        os.environ["PYTHONPATH"] = os.pathsep.join([str(into), *worker_path])
    if str(into) not in sys.path:
        sys.path.insert(0, str(into))


def register_revision(spark, revision: str) -> str:
    """Registers the data source of ``revision``'s exported kwire with ``spark``; returns its format name."""
    import importlib

    package, fmt = renamed(revision)
    spark.dataSource.register(importlib.import_module(f"{package}.spark.source").KwireDataSource)
    return fmt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--revision", required=True, action="append",
                        help="a git revision to compare with this checkout (repeat for several)")
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--record-size", type=int, default=100)
    parser.add_argument("--partitions", default="8",
                        help="partitions of the topics; comma-separated counts run the writes at each in turn")
    parser.add_argument("--compression", default="lz4")
    parser.add_argument("--kafka-defaults", action="store_true",
                        help="write with no kafka.* option but the bootstrap servers (no compression, linger.ms, "
                             "batch.size), as a user writes")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", choices=("read", "write"))
    parser.add_argument("--bootstrap")
    args = parser.parse_args()
    args.partition_counts = [int(count) for count in args.partitions.split(",")]
    args.partitions = args.partition_counts[0]
    print_machine()
    folder = Path(tempfile.mkdtemp(prefix="kwire-versions-"))
    try:
        for revision in args.revision:
            export_for_workers(revision, folder)
        with broker(args) as bootstrap:
            spark = spark_session()
            formats = {"kafka (Spark built-in)": "kafka"}
            for revision in args.revision:
                formats[f"kwire {revision}"] = register_revision(spark, revision)
            formats["kwire (this checkout)"] = "kwire"
            if args.only != "write":
                compare_reads(spark, bootstrap, args, formats)
            if args.only != "read":
                compare_writes(spark, bootstrap, args, formats)
            spark.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def ratios(args, seconds: dict[str, list[float]]) -> None:
    """Seconds of every run, and each kwire's median against the built-in's and this checkout's against every
    other revision's."""
    import statistics

    medians = {name: statistics.median(runs) for name, runs in seconds.items()}
    for name, runs in seconds.items():
        print(f"  {name:<24} median {medians[name]:.3f} s   (runs: {', '.join(f'{s:.3f}' for s in runs)})")
    checkout = medians["kwire (this checkout)"]
    for revision in args.revision[1:]:
        print(f"  ratio kwire (this checkout) / kwire {revision}: {medians[f'kwire {revision}'] / checkout:.2f}x")
    kafka = medians.get("kafka (Spark built-in)")
    for name, median in medians.items():
        if name.startswith("kwire") and kafka is not None:
            print(f"  ratio {name} / kafka (Spark built-in): {kafka / median:.2f}x")


class PeerFailed(Exception):
    """A run of Spark's built-in connector failed: it is reported and left out of the figures."""


def rounds(args, formats: dict, run) -> dict[str, list[float]]:
    """Seconds of each format's runs: ``run(fmt)``'s own figure when it returns one, else the whole call's."""
    for fmt in formats.values():
        try:
            run(fmt)  # warm-up, untimed
        except PeerFailed as failure:
            print(f"  (warm-up) {failure}", flush=True)
    seconds = {name: [] for name in formats}
    names = list(formats)
    for i in range(args.runs):
        for name in names[i % len(names):] + names[:i % len(names)]:
            took = []
            try:
                whole = timed(lambda: took.append(run(formats[name])))
            except PeerFailed as failure:
                print(f"  (round {i + 1}) {failure}", flush=True)
                continue
            seconds[name].append(took[0] if took[0] is not None else whole)
    return {name: runs for name, runs in seconds.items() if runs}


def compare_reads(spark, bootstrap: str, args, formats: dict) -> None:
    from read_throughput import produce

    topic = f"bench-versions-read-{uuid.uuid4().hex[:6]}"
    produce(bootstrap, topic, args)
    expected = (args.records, args.records * args.record_size)

    def run(fmt: str) -> None:
        row = (spark.read.format(fmt).option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
               .load().selectExpr("count(*) AS n", "sum(length(value)) AS bytes").collect()[0])
        assert (row.n, row.bytes) == expected, (fmt, row)

    seconds = rounds(args, formats, run)
    report(f"Batch read of {args.records:,} records x {args.record_size} B, {args.partitions} partitions, "
           f"{args.compression}, local[2], {args.runs} rounds", args.records, seconds,
           baseline=f"kwire {args.revision[0]}", contender="kwire (this checkout)")
    ratios(args, seconds)


def compare_writes(spark, bootstrap: str, args, formats: dict) -> None:
    from pyspark.sql import functions as F

    pad = "x" * max(0, args.record_size - 12)
    rows = spark.range(args.records, numPartitions=2).select(
        F.col("id").cast("string").alias("key"),
        F.concat(F.lpad(F.col("id").cast("string"), 12, "0"), F.lit(pad)).alias("value")).cache()
    rows.count()
    for partitions in args.partition_counts:
        compare_writes_into(rows, bootstrap, args, formats, partitions)


def compare_writes_into(rows, bootstrap: str, args, formats: dict, partitions: int) -> None:
    """Rounds of writes of ``rows``, each into a fresh topic of ``partitions`` partitions."""
    from spark_kwire import admin

    counter = iter(range(10_000))
    run_id = uuid.uuid4().hex[:6]
    layouts: dict = {}
    settings = {} if args.kafka_defaults else {"kafka.compression.type": args.compression, "kafka.linger.ms": "20",
                                               "kafka.batch.size": "1048576"}

    def run(fmt: str) -> float:
        """Seconds of the write alone (not the topic's creation nor the check)."""
        topic = f"bench-versions-write-{fmt}-{run_id}-{next(counter)}"
        admin.create_topic(bootstrap, topic, partitions=partitions)
        assert not any(admin.latest_offsets(bootstrap, topic).values())  # waits until every leader serves it
        writer = (rows.write.format(fmt).option("kafka.bootstrap.servers", bootstrap).option("topic", topic)
                  .options(**settings).mode("append"))
        try:
            seconds = timed(writer.save)
        except Exception as exc:  # noqa: BLE001 - Spark's sink fails into fresh wide topics (machine-facts)
            if fmt != "kafka":
                raise
            admin.delete_topic(bootstrap, topic)
            cause = re.findall(r"[\w.]+(?:Exception|Error): [^\n]*", str(exc)) or [str(exc)]
            raise PeerFailed(f"Spark's built-in sink failed: {cause[-1][:300]}") from exc
        latest = admin.latest_offsets(bootstrap, topic)
        admin.delete_topic(bootstrap, topic)  # a fresh topic per write; the broker's state stays small
        assert sum(latest.values()) == args.records, (fmt, sum(latest.values()))
        assert latest == layouts.setdefault("first", latest), (fmt, latest)
        return seconds

    seconds = rounds(args, formats, run)
    how = "no kafka.* settings" if args.kafka_defaults else f"{args.compression}, linger.ms 20, batch.size 1 MB"
    report(f"Batch write of {args.records:,} keyed rows x {args.record_size} B into a fresh topic of {partitions} "
           f"partitions, {how}, local[2], {args.runs} rounds", args.records, seconds,
           baseline=f"kwire {args.revision[0]}", contender="kwire (this checkout)")
    ratios(args, seconds)


if __name__ == "__main__":
    main()
