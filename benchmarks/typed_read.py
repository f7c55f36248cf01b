"""Typed read throughput: kwire's valueFormat=avro vs Spark's built-in `kafka` source + spark-avro's from_avro, and
vs kwire's own raw-bytes read of the same topic, in one Spark session, one run.

Registers the realistic 12-field schema of benchmarks/avro_decode.py in a schema registry (the harness's), writes N
Confluent-framed records of it (fastavro) into a topic, then runs, alternating, each warmed first:
  * kwire typed:        format("kwire"), valueFormat=avro, schema.registry.url: count + sums over typed fields;
  * built-in+from_avro: format("kafka") then from_avro(substring(value, 6), schema): the same aggregates (spark-avro
                        and the Kafka connector jars are loaded for this benchmark only);
  * kwire raw:          format("kwire") without valueFormat: count(*) + sum(length(value)).
The typed results must equal the built-in's. Prints records/s and the two ratios.
``--revision R`` runs R's kwire (exported with its package renamed, as ``versions_side_by_side.py`` does) beside this
checkout: its typed and raw reads join the rotation, so both versions' typed/raw ratios come from one run.
    python benchmarks/typed_read.py [--records 1000000] [--runs 3] [--partitions 8] [--bootstrap host:port]
                                    [--revision 31903d5]
"""

from __future__ import annotations

import io
import json
import os
import shutil
import statistics
import struct
import sys
import tempfile
import time
import uuid
from pathlib import Path

from _common import broker, parse_args, print_machine, report, timed
from versions_side_by_side import export_for_workers, register_revision

AGGREGATES = ["count(*) AS n", "sum(value.quantity) AS quantity", "sum(value.total) AS total",
              "sum(size(value.tags)) AS tags", "count(value.coupon) AS coupons", "sum(value.address.zip) AS zips",
              "max(value.created) AS last_created", "sum(length(value.customer)) AS customer_chars"]


def write_topic(bootstrap: str, topic: str, schema_id: int, args) -> None:
    """N framed Avro records, spread evenly over the partitions, written by kwire's producer (lz4)."""
    import fastavro
    import pyarrow as pa

    from avro_decode import SCHEMA, records
    from spark_kwire import admin
    from spark_kwire.client import KafkaClient, Producer

    admin.create_topic(bootstrap, topic, partitions=args.partitions)
    parsed = fastavro.parse_schema(SCHEMA)
    header = b"\x00" + struct.pack(">I", schema_id)
    started = time.perf_counter()
    client = KafkaClient({"bootstrap.servers": bootstrap})
    chunk = 50_000
    with Producer(client, compression=args.compression) as producer:
        out: list[list[bytes]] = [[] for _ in range(args.partitions)]
        for i, record in enumerate(records(args.records)):
            buffer = io.BytesIO()
            buffer.write(header)
            fastavro.schemaless_writer(buffer, parsed, record)
            out[i % args.partitions].append(buffer.getvalue())
            if (i + 1) % chunk == 0 or i + 1 == args.records:
                for partition, values in enumerate(out):
                    if values:
                        producer.send_batch(topic, partition, pa.array(values, pa.binary()))
                out = [[] for _ in range(args.partitions)]
        producer.flush()
    client.close()
    print(f"wrote {args.records:,} records in {time.perf_counter() - started:.1f} s", flush=True)


def spark_session():
    from pyspark.sql import SparkSession

    from harness import spark_avro_jars, spark_kafka_connector_jars

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (SparkSession.builder.master("local[2]").appName("kwire-typed-bench")
             .config("spark.jars", ",".join(spark_kafka_connector_jars() + spark_avro_jars()))
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", "4g").config("spark.sql.session.timeZone", "UTC")
             .config("spark.sql.shuffle.partitions", "2").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def main() -> None:
    args = parse_args(__doc__, 1_000_000, revision=True)
    print_machine()
    folder = Path(tempfile.mkdtemp(prefix="kwire-typed-"))
    try:
        if args.revision:
            export_for_workers(args.revision, folder)
        run_all(args)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run_all(args) -> None:
    from avro_decode import SCHEMA

    from harness.schema_registry import SchemaRegistryServer
    from spark_kwire.client.registry import RegistryClient, Schema

    with broker(args) as bootstrap, SchemaRegistryServer() as registry:
        topic = f"bench-typed-{args.records}-{uuid.uuid4().hex[:6]}"
        schema_id = RegistryClient({"url": registry.url}).register(f"{topic}-value", Schema(json.dumps(SCHEMA)))
        write_topic(bootstrap, topic, schema_id, args)
        spark = spark_session()
        other_format = register_revision(spark, args.revision) if args.revision else None
        from pyspark.sql import functions as F
        from pyspark.sql.avro.functions import from_avro

        def source(fmt: str, **options):
            reader = spark.read.format(fmt).option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
            for key, value in options.items():
                reader = reader.option(key, value)
            return reader.load()

        results = {}

        def typed(fmt: str = "kwire", into: str = "typed"):
            df = source(fmt, valueFormat="avro", **{"schema.registry.url": registry.url})
            results[into] = df.selectExpr(*AGGREGATES).collect()[0]

        def builtin():
            df = source("kafka").select(from_avro(F.expr("substring(value, 6)"), json.dumps(SCHEMA)).alias("value"))
            results["builtin"] = df.selectExpr(*AGGREGATES).collect()[0]

        def raw(fmt: str = "kwire", into: str = "raw"):
            results[into] = source(fmt).selectExpr("count(*) AS n", "sum(length(value)) AS bytes").collect()[0]

        runs = {"kwire typed": typed, "built-in + from_avro": builtin, "kwire raw": raw}
        if other_format is not None:
            runs[f"kwire {args.revision} typed"] = lambda: typed(other_format, "other typed")
            runs[f"kwire {args.revision} raw"] = lambda: raw(other_format, "other raw")
        for run in runs.values():  # warm-up: JIT, numba caches, Python workers, the registry's schema cache
            run()
        assert results["typed"] == results["builtin"], (results["typed"], results["builtin"])
        assert results["typed"].n == results["raw"].n == args.records
        if other_format is not None:
            assert results["other typed"] == results["typed"] and results["other raw"] == results["raw"]
        print(f"typed results (equal to the built-in's): {results['typed'].asDict()}")
        seconds = {name: [] for name in runs}
        names = list(runs)
        for i in range(args.runs):  # a rotating order: no run always follows the same one
            for name in names[i % len(names):] + names[:i % len(names)]:
                seconds[name].append(timed(runs[name]))
            assert results["typed"] == results["builtin"]
        title = (f"Typed read of {args.records:,} Avro records (12 fields), {args.partitions} partitions, "
                 f"{args.compression}, local[2]")
        report(title, args.records, seconds, baseline="built-in + from_avro", contender="kwire typed")
        typed_median, raw_median = statistics.median(seconds["kwire typed"]), statistics.median(seconds["kwire raw"])
        print(f"  ratio kwire typed / kwire raw: {raw_median / typed_median:.2f}x  (goals: typed >= 1x built-in + "
              f"from_avro, typed >= 0.55x kwire raw)")
        if other_format is not None:
            other_typed = statistics.median(seconds[f"kwire {args.revision} typed"])
            other = statistics.median(seconds[f"kwire {args.revision} raw"]) / other_typed
            print(f"  ratio kwire {args.revision} typed / kwire {args.revision} raw: {other:.2f}x;  this checkout's "
                  f"typed against {args.revision}'s: {other_typed / typed_median:.2f}x as fast")
        print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        spark.stop()


if __name__ == "__main__":
    main()
