"""JSON schema inference on the driver: kwire's infer_schema beside Spark's spark.read.json on the same strings.

Generates N order documents (nested customer and address, an array of line items, optional and null fields,
a timestamp string, a big integer now and then), then, alternating and each warmed first:
  * kwire:  infer_schema(pyarrow string array) in this process (what load() runs on a sample);
  * spark:  spark.read.json(<cached Dataset[String] of the same documents>) in a local[2] session: the
            inference job only (the strings are cached before timing);
with the default options and with prefersDecimal + inferTimestamp (every string value is then parsed), and
with the same documents in single quotes (Python's C scanner cannot read them: kwire's own tokenizer does).
The schemas are asserted equal. Prints wall seconds and documents/s for both, kwire's CPU seconds (it runs in
this process on one core; Spark's job runs on two), and the ratio of the wall times.

    python benchmarks/json_inference.py [--records 10000] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time

from _common import print_machine

import pyarrow as pa


def order(rng: random.Random, i: int) -> dict:
    doc = {
        "id": i, "status": rng.choice(["new", "paid", "shipped"]), "total": round(rng.uniform(1, 500), 2),
        "created": f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:00:00Z",
        "customer": {"name": f"c{rng.randint(1, 9999)}", "email": f"c{i}@example.com", "vip": rng.random() < 0.1,
                     "address": {"street": "Main St 1", "zip": f"{rng.randint(10000, 99999)}", "city": "Town"}},
        "items": [{"sku": f"s{rng.randint(1, 500)}", "qty": rng.randint(1, 5), "price": round(rng.uniform(1, 99), 2)}
                  for _ in range(rng.randint(0, 4))],
        "tags": rng.sample(["a", "b", "c", "d"], rng.randint(0, 3)),
    }
    if rng.random() < 0.3:
        doc["coupon"] = None if rng.random() < 0.5 else f"C{rng.randint(1, 99)}"
    if rng.random() < 0.01:
        doc["trace"] = 2**70 + i
    return doc


def single_quoted(text: str) -> str:
    return text.replace("'", "\\'").replace('"', "'")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print_machine()

    from pyspark.sql import DataFrame, SparkSession

    from spark_kwire.formats.json.inference.infer import infer_schema
    from spark_kwire.spark.typed.spark_types import spark_type

    rng = random.Random(7)
    texts = [json.dumps(order(rng, i)) for i in range(args.records)]
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.session.timeZone", "UTC").config("spark.driver.memory", "2g").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    jvm = spark.sparkContext._jvm

    cases = [("defaults", texts, {}),
             ("prefersDecimal+inferTimestamp", texts, {"prefersDecimal": "true", "inferTimestamp": "true"}),
             ("single quotes (own tokenizer)", [single_quoted(t) for t in texts], {})]
    print(f"\n{args.records:,} documents of {sum(map(len, texts)) / len(texts):.0f} bytes on average; "
          f"medians of {args.runs} runs each, kwire and spark alternating, both warmed")
    for name, docs, options in cases:
        column = pa.array(docs, pa.string())
        frame = spark.createDataFrame([(d,) for d in docs], "v string").cache()
        frame.count()
        strings = getattr(frame._jdf, "as")(jvm.org.apache.spark.sql.Encoders.STRING())

        def spark_infer():
            reader = spark._jsparkSession.read()
            for key, value in options.items():
                reader = reader.option(key, value)
            return DataFrame(reader.json(strings), spark).schema

        def kwire_infer():
            return spark_type(infer_schema(column, options))

        assert kwire_infer() == spark_infer(), name  # also the warm-up of both
        timings = {"kwire": [], "spark": [], "kwire cpu": []}
        for _ in range(args.runs):
            for who, fn in (("kwire", kwire_infer), ("spark", spark_infer)):
                started, cpu = time.perf_counter(), time.process_time()
                fn()
                timings[who].append(time.perf_counter() - started)
                if who == "kwire":  # kwire runs in this process, on one core: its CPU time is what a load costs
                    timings["kwire cpu"].append(time.process_time() - cpu)
        k, s, c = (statistics.median(timings[who]) for who in ("kwire", "spark", "kwire cpu"))
        print(f"  {name:<30} kwire {k:6.3f} s ({args.records / k:>8,.0f} docs/s; CPU {c:5.3f} s)   "
              f"spark.read.json {s:6.3f} s ({args.records / s:>8,.0f} docs/s)   spark/kwire {s / k:.2f}x")
        frame.unpersist()
    spark.stop()


if __name__ == "__main__":
    main()
