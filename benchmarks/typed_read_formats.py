"""Typed read throughput of Protobuf and JSON Schema through the data source, in one Spark session, one run.

Registers the 12-field order of benchmarks/payload_decode.py (as `.proto` text and as a JSON Schema) in a schema
registry (the harness's), writes N Confluent-framed records of each (Google's protobuf runtime, ``json.dumps``)
into a topic of its own, then runs, alternating, each warmed first:
  * kwire typed:           format("kwire"), valueFormat=protobuf / json-schema: count + sums over typed fields;
  * built-in + from_json:  (JSON only) format("kafka") then from_json(substring(value, 6)) with the Spark schema
                           kwire shows: the same aggregates, asserted equal (Spark has no Protobuf reader without
                           the spark-protobuf JAR, which Maven Central does not serve here);
  * kwire raw:             format("kwire") without valueFormat: count(*) + sum(length(value)).
Prints records/s and the ratios.
    python benchmarks/typed_read_formats.py [--records 1000000] [--runs 3] [--partitions 8] [--bootstrap host:port]
"""

from __future__ import annotations

import json
import os
import time
import uuid

from _common import broker, parse_args, print_machine, report, spark_session, timed

AGGREGATES = ["count(*) AS n", "sum(value.quantity) AS quantity", "sum(value.sequence) AS sequence",
              "sum(size(value.tags)) AS tags", "count(value.coupon) AS coupons", "sum(value.address.zip) AS zips",
              "max(value.created) AS last_created", "sum(length(value.customer)) AS customer_chars",
              "count_if(value.express) AS express"]


def write_topic(bootstrap: str, topic: str, payloads: list[bytes], args) -> None:
    """The framed records, spread evenly over the partitions, written by kwire's producer."""
    import pyarrow as pa

    from spark_kwire import admin
    from spark_kwire.client import KafkaClient, Producer

    admin.create_topic(bootstrap, topic, partitions=args.partitions)
    started = time.perf_counter()
    client = KafkaClient({"bootstrap.servers": bootstrap})
    with Producer(client, compression=args.compression) as producer:
        for partition in range(args.partitions):
            values = payloads[partition::args.partitions]
            for start in range(0, len(values), 50_000):
                producer.send_batch(topic, partition, pa.array(values[start:start + 50_000], pa.binary()))
        producer.flush()
    client.close()
    print(f"wrote {len(payloads):,} records to {topic} in {time.perf_counter() - started:.1f} s", flush=True)


def main() -> None:
    args = parse_args(__doc__, 1_000_000)
    print_machine()
    from payload_decode import JSON_SCHEMA, PROTO, SCHEMA_ID, json_payloads, order_class, protobuf_payloads

    from harness.schema_registry import SchemaRegistryServer
    from spark_kwire.client.registry import RegistryClient, Schema

    with broker(args) as bootstrap, SchemaRegistryServer() as registry:
        client = RegistryClient({"url": registry.url})
        topics = {}
        for name, schema, schema_type, make in (
                ("protobuf", PROTO, "PROTOBUF", lambda n: protobuf_payloads(n, order_class())),
                ("json-schema", json.dumps(JSON_SCHEMA), "JSON", json_payloads)):
            topic = f"bench-{name}-{args.records}-{uuid.uuid4().hex[:6]}"
            schema_id = client.register(f"{topic}-value", Schema(schema, schema_type))
            payloads = make(args.records)
            header = b"\x00" + schema_id.to_bytes(4, "big")  # payload_decode frames with its own id
            assert payloads[0][1:5] == SCHEMA_ID.to_bytes(4, "big")
            write_topic(bootstrap, topic, [header + p[5:] for p in payloads], args)
            topics[name] = topic
        spark = spark_session()
        spark.conf.set("spark.sql.session.timeZone", "UTC")
        from pyspark.sql import functions as F

        def source(fmt: str, topic: str, **options):
            reader = spark.read.format(fmt).option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
            for key, value in options.items():
                reader = reader.option(key, value)
            return reader.load()

        for name, topic in topics.items():
            results = {}
            typed_options = {"valueFormat": name, "schema.registry.url": registry.url}
            value_type = source("kwire", topic, **typed_options).schema["value"].dataType

            def typed():
                results["typed"] = source("kwire", topic, **typed_options).selectExpr(*AGGREGATES).collect()[0]

            def builtin():
                text = F.expr("CAST(substring(value, 6) AS STRING)")
                df = source("kafka", topic).select(F.from_json(text, value_type).alias("value"))
                results["builtin"] = df.selectExpr(*AGGREGATES).collect()[0]

            def raw():
                results["raw"] = source("kwire", topic).selectExpr("count(*) AS n",
                                                                   "sum(length(value)) AS bytes").collect()[0]

            runs = {"kwire typed": typed, "kwire raw": raw}
            if name == "json-schema":
                runs["built-in + from_json"] = builtin
            for run in runs.values():  # warm-up: numba caches, Python workers, the registry's schema cache
                run()
            assert results["typed"].n == results["raw"].n == args.records
            if "builtin" in results:
                assert results["typed"] == results["builtin"], (results["typed"], results["builtin"])
            print(f"{name} typed results: {results['typed'].asDict()}")
            seconds = {run: [] for run in runs}
            for _ in range(args.runs):
                for run_name, run in runs.items():
                    seconds[run_name].append(timed(run))
            title = (f"Typed read of {args.records:,} {name} records (12 fields), {args.partitions} partitions, "
                     f"{args.compression}, local[2]")
            report(title, args.records, seconds, baseline="kwire raw", contender="kwire typed")
            if name == "json-schema":
                medians = {k: sorted(v)[len(v) // 2] for k, v in seconds.items()}
                print(f"  ratio kwire typed / built-in + from_json: "
                      f"{medians['built-in + from_json'] / medians['kwire typed']:.2f}x")
        print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        spark.stop()


if __name__ == "__main__":
    main()
