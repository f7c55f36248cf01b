"""Two versions of kwire in one Spark session, beside Spark's built-in `kafka` connector: did a change keep the
warm read and write figures? On a busy machine, figures from separate runs minutes apart differ more than the
change does; side by side in one session, alternating, they share whatever the machine does meanwhile.

The other version comes from a git revision of this repository: exported to a temporary folder with its
package renamed (``spark_kwire`` -> ``spark_kwire_old``, format ``kwire_old``) and put on the Python workers'
PYTHONPATH. Each round reads N records of 100 B (``count(*)``, ``sum(length(value))``, asserted) and writes N
keyed rows (same records per partition asserted) through the built-in connector, the other version and this
checkout, in a rotating order, after one untimed warm-up each.

    python benchmarks/versions_side_by_side.py --revision e2d7f1a [--records 1000000] [--runs 5]
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

OLD_PACKAGE, OLD_FORMAT = "spark_kwire_old", "kwire_old"


def export_renamed(revision: str, into: Path) -> None:
    """``spark_kwire`` of ``revision`` as the package ``spark_kwire_old`` (data source name ``kwire_old``)."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", revision, "spark_kwire"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    (into / "spark_kwire").rename(into / OLD_PACKAGE)
    for path in (into / OLD_PACKAGE).rglob("*.py"):
        text = re.sub(r"\bspark_kwire\b", OLD_PACKAGE, path.read_text(encoding="utf-8"))
        if path.name == "source.py":
            text = text.replace('return "kwire"', f'return "{OLD_FORMAT}"')
        path.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--revision", required=True)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--record-size", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--compression", default="lz4")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", choices=("read", "write"))
    parser.add_argument("--bootstrap")
    args = parser.parse_args()
    print_machine()
    folder = Path(tempfile.mkdtemp(prefix="kwire-old-"))
    try:
        export_renamed(args.revision, folder)
        os.environ["PYTHONPATH"] = os.pathsep.join([str(folder), *filter(None, [os.environ.get("PYTHONPATH")])])
        sys.path.insert(0, str(folder))
        with broker(args) as bootstrap:
            spark = spark_session()
            import importlib

            old_source = importlib.import_module(f"{OLD_PACKAGE}.spark.source").KwireDataSource
            spark.dataSource.register(old_source)
            formats = {"kafka (Spark built-in)": "kafka", f"kwire {args.revision}": OLD_FORMAT, "kwire (this checkout)": "kwire"}
            if args.only != "write":
                compare_reads(spark, bootstrap, args, formats)
            if args.only != "read":
                compare_writes(spark, bootstrap, args, formats)
            spark.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def ratios(records: int, seconds: dict[str, list[float]]) -> None:
    import statistics

    kafka = statistics.median(seconds["kafka (Spark built-in)"])
    for name, runs in seconds.items():
        if name.startswith("kwire"):
            print(f"  ratio {name} / kafka (Spark built-in): {kafka / statistics.median(runs):.2f}x")


def rounds(args, formats: dict, run) -> dict[str, list[float]]:
    for fmt in formats.values():
        run(fmt)  # warm-up, untimed
    seconds = {name: [] for name in formats}
    names = list(formats)
    for i in range(args.runs):
        for name in names[i % len(names):] + names[:i % len(names)]:
            seconds[name].append(timed(lambda: run(formats[name])))
    return seconds


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
           baseline=f"kwire {args.revision}", contender="kwire (this checkout)")
    ratios(args.records, seconds)


def compare_writes(spark, bootstrap: str, args, formats: dict) -> None:
    from pyspark.sql import functions as F

    from spark_kwire import admin

    pad = "x" * max(0, args.record_size - 12)
    rows = spark.range(args.records, numPartitions=2).select(
        F.col("id").cast("string").alias("key"),
        F.concat(F.lpad(F.col("id").cast("string"), 12, "0"), F.lit(pad)).alias("value")).cache()
    rows.count()
    counter = iter(range(10_000))
    run_id = uuid.uuid4().hex[:6]
    layouts: dict = {}

    def run(fmt: str) -> None:
        topic = f"bench-versions-write-{fmt}-{run_id}-{next(counter)}"
        admin.create_topic(bootstrap, topic, partitions=args.partitions)
        (rows.write.format(fmt).option("kafka.bootstrap.servers", bootstrap).option("topic", topic)
         .option("kafka.compression.type", args.compression).option("kafka.linger.ms", "20")
         .option("kafka.batch.size", "1048576").mode("append").save())
        latest = admin.latest_offsets(bootstrap, topic)
        assert sum(latest.values()) == args.records, (fmt, sum(latest.values()))
        assert latest == layouts.setdefault("first", latest), (fmt, latest)

    seconds = rounds(args, formats, run)
    report(f"Batch write of {args.records:,} keyed rows x {args.record_size} B into {args.partitions} partitions, "
           f"{args.compression}, local[2], {args.runs} rounds", args.records, seconds,
           baseline=f"kwire {args.revision}", contender="kwire (this checkout)")
    ratios(args.records, seconds)


if __name__ == "__main__":
    main()
