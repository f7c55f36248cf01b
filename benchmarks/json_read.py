"""Plain JSON read throughput: kwire's valueFormat=json vs Spark's built-in `kafka` source + from_json with the same
schema and mode, and vs kwire's own raw read of the same topic, in one Spark session, one run.

Writes N plain JSON records of a realistic nested order (a customer object, a decimal total, a timestamp and a date
as strings, tags, order lines as an array of objects, a map of attributes; ~330 bytes) into a topic, then runs,
alternating, each warmed first:
  * kwire json:            format("kwire"), valueFormat=json, valueSchema=<DDL>: count + aggregates over the fields;
  * built-in + from_json:  format("kafka") then from_json(CAST(value AS STRING), <DDL>, {mode}): the same aggregates;
  * kwire raw:             format("kwire") without valueFormat: count(*) + sum(length(value)).
Both modes are measured (PERMISSIVE, from_json's default, and FAILFAST). Before timing, the two readers' rows are
asserted equal whole (to_json of every value, both ways) and their aggregates on every run.
With ``--revision REV``, kwire at that git revision (exported with its package renamed, format ``kwire_old``, as
``versions_side_by_side.py`` does) reads the same topic too, in the same rotation, its rows and aggregates asserted
equal as well: a change's effect on the plain JSON read, side by side in one session.
    python benchmarks/json_read.py [--records 1000000] [--runs 3] [--partitions 8] [--bootstrap host:port]
                                   [--revision main]
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

from _common import broker, parse_args, print_machine, report, spark_session, timed

SCHEMA = ("id BIGINT, customer STRUCT<name: STRING, email: STRING, vip: BOOLEAN, since DATE>, total DECIMAL(12,2), "
          "score DOUBLE, qty INT, created TIMESTAMP, tags ARRAY<STRING>, "
          "lines ARRAY<STRUCT<sku: STRING, price: DOUBLE, n: INT>>, attrs MAP<STRING, STRING>, coupon STRING")
AGGREGATES = ["count(*) AS n", "sum(value.id) AS ids", "sum(value.total) AS total", "sum(value.qty) AS qty",
              "sum(size(value.tags)) AS tags",
              "sum(aggregate(value.lines, 0L, (a, l) -> a + CAST(l.price * 100 AS BIGINT) * l.n)) AS lines",
              "count(value.coupon) AS coupons", "max(value.created) AS last_created",
              "sum(length(value.customer.name)) AS name_chars", "count_if(value.customer.vip) AS vips",
              "max(value.customer.since) AS since", "sum(size(value.attrs)) AS attrs",
              "sum(CAST(value.score * 1000 AS BIGINT)) AS score"]  # (no double sums: their order varies)
CITIES = ["Paris", "Lyon", "Oslo", "Kraków", "São Paulo", "Zürich", "Köln"]


def document(i: int) -> bytes:
    return json.dumps({
        "id": i * 7919 + 13,
        "customer": {"name": f"customer {i % 50000:05d}", "email": f"user{i % 50000}@example.com", "vip": i % 7 == 0,
                     "since": f"20{10 + i % 14}-{1 + i % 12:02d}-{1 + i % 28:02d}"},
        "total": f"{i * 37 % 10_000_000 / 100:.2f}", "score": (i % 1000) / 7, "qty": i % 17 + 1,
        "created": f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:{i % 59:02d}.{i % 1000:03d}Z",
        "tags": ["gift", "prime", "fragile", "bulk"][: i % 5],
        "lines": [{"sku": f"SKU-{(i + j) % 9973}", "price": round(1.25 * (j + 1) + i % 100, 2), "n": j + 1}
                  for j in range(i % 4)],
        "attrs": {"city": CITIES[i % len(CITIES)], "channel": ["web", "app", "store"][i % 3]},
        "coupon": None if i % 3 else f"SAVE{i % 50}"}, ensure_ascii=False).encode()


def write_topic(bootstrap: str, topic: str, args) -> None:
    import pyarrow as pa

    from spark_kwire import admin
    from spark_kwire.client import KafkaClient, Producer

    admin.create_topic(bootstrap, topic, partitions=args.partitions)
    started = time.perf_counter()
    client = KafkaClient({"bootstrap.servers": bootstrap})
    chunk = 50_000
    with Producer(client, compression=args.compression) as producer:
        for start in range(0, args.records, chunk):
            values = [document(i) for i in range(start, min(start + chunk, args.records))]
            for partition in range(args.partitions):
                part = values[partition::args.partitions]
                if part:
                    producer.send_batch(topic, partition, pa.array(part, pa.binary()))
        producer.flush()
    client.close()
    size = len(document(args.records // 2))
    took = time.perf_counter() - started
    print(f"wrote {args.records:,} records of ~{size} B to {topic} in {took:.1f} s", flush=True)


def main() -> None:
    args = parse_args(__doc__, 1_000_000, revision=True)
    print_machine()
    folder = Path(tempfile.mkdtemp(prefix="kwire-old-")) if args.revision else None
    try:
        if folder is not None:
            from versions_side_by_side import export_renamed

            export_renamed(args.revision, folder)
            os.environ["PYTHONPATH"] = os.pathsep.join([str(folder), *filter(None, [os.environ.get("PYTHONPATH")])])
            sys.path.insert(0, str(folder))
        measure(args)
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def measure(args) -> None:
    with broker(args) as bootstrap:
        topic = f"bench-json-{args.records}-{uuid.uuid4().hex[:6]}"
        write_topic(bootstrap, topic, args)
        spark = spark_session()
        old = None
        if args.revision:
            import importlib

            from versions_side_by_side import OLD_FORMAT, OLD_PACKAGE

            spark.dataSource.register(importlib.import_module(f"{OLD_PACKAGE}.spark.source").KwireDataSource)
            old = OLD_FORMAT
        spark.conf.set("spark.sql.session.timeZone", "UTC")
        from pyspark.sql import functions as F

        def source(fmt: str, **options):
            reader = spark.read.format(fmt).option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
            for key, value in options.items():
                reader = reader.option(key, value)
            return reader.load()

        def kwire_frame(mode, fmt="kwire"):
            return source(fmt, valueFormat="json", valueSchema=SCHEMA, mode=mode)

        def builtin_frame(mode):
            return source("kafka").select(F.from_json(F.col("value").cast("string"), SCHEMA, {"mode": mode})
                                          .alias("value"))

        for mode in ("PERMISSIVE", "FAILFAST"):  # the rows, whole, before any timing
            ours = kwire_frame(mode).select(F.to_json("value").alias("j"))
            theirs = builtin_frame(mode).select(F.to_json("value").alias("j"))
            assert ours.exceptAll(theirs).count() == 0 and theirs.exceptAll(ours).count() == 0, mode
            if old:
                before = kwire_frame(mode, old).select(F.to_json("value").alias("j"))
                assert ours.exceptAll(before).count() == 0 and before.exceptAll(ours).count() == 0, (old, mode)
        print("rows equal to the built-in's + from_json's, PERMISSIVE and FAILFAST"
              + (f" (and kwire {args.revision}'s)" if old else ""), flush=True)
        results = {}

        def run_of(name, frame, aggregates):
            def run():
                results[name] = frame().selectExpr(*aggregates).collect()[0]
            return run

        runs = {}
        for mode in ("PERMISSIVE", "FAILFAST"):
            runs[f"kwire json {mode}"] = run_of(f"kwire {mode}", lambda m=mode: kwire_frame(m), AGGREGATES)
            runs[f"built-in + from_json {mode}"] = run_of(f"builtin {mode}", lambda m=mode: builtin_frame(m),
                                                          AGGREGATES)
            if old:
                runs[f"kwire {args.revision} json {mode}"] = run_of(f"old {mode}", lambda m=mode: kwire_frame(m, old),
                                                                    AGGREGATES)
        runs["kwire raw"] = run_of("raw", lambda: source("kwire"), ["count(*) AS n", "sum(length(value)) AS bytes"])
        for run in runs.values():  # warm-up: JIT, numba caches, Python workers
            run()

        def check():
            for mode in ("PERMISSIVE", "FAILFAST"):
                assert results[f"kwire {mode}"] == results[f"builtin {mode}"], (results[f"kwire {mode}"],
                                                                                 results[f"builtin {mode}"])
                if old:
                    assert results[f"old {mode}"] == results[f"kwire {mode}"], (results[f"old {mode}"], mode)
            assert results["kwire PERMISSIVE"].n == results["raw"].n == args.records

        check()
        print(f"aggregates (equal to the built-in's): {results['kwire PERMISSIVE'].asDict()}")
        seconds = {name: [] for name in runs}
        for _ in range(args.runs):
            for name, run in runs.items():
                seconds[name].append(timed(run))
            check()
        title = (f"Read of {args.records:,} plain JSON records (nested order), {args.partitions} partitions, "
                 f"{args.compression}, local[2]")
        report(title, args.records, seconds, baseline="kwire raw", contender="kwire json PERMISSIVE")
        medians = {k: sorted(v)[len(v) // 2] for k, v in seconds.items()}
        for mode in ("PERMISSIVE", "FAILFAST"):
            print(f"  ratio kwire json / built-in + from_json ({mode}): "
                  f"{medians[f'built-in + from_json {mode}'] / medians[f'kwire json {mode}']:.2f}x")
            if old:
                print(f"  ratio kwire json (this checkout) / kwire {args.revision} json ({mode}): "
                      f"{medians[f'kwire {args.revision} json {mode}'] / medians[f'kwire json {mode}']:.3f}x")
        print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        spark.stop()


if __name__ == "__main__":
    main()
