"""A Spark driver for the delegation-token tests: it logs in with Kerberos (its environment has the realm's
krb5.conf; the JAAS line names a keytab), its executors run where Kerberos is not configured at all.

Phases, one driver start for all (prints ``PHASE <name>`` as each begins and ``RESULT {json}`` at the end):

``batch``    a write of ``--rows`` keyed rows into ``--topic`` (3 partitions) and a read of the topic back, both
             with ``delegationToken=true``; reports what the read saw and the read's plan as explain prints it;
             between the two, ``control``: a read without ``delegationToken``, whose tasks must log in with Kerberos
             and fail (the error text is reported), which shows that the executors cannot;
``stream``   ``readStream`` of ``--topic`` into a kwire ``writeStream`` to ``--out-topic``, both with
             ``delegationToken=true``, for ``--seconds`` while a thread of the driver writes more rows into
             ``--topic`` (over Kerberos); every micro-batch must succeed.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time


def kafka_options(args) -> dict:
    return {"kafka.bootstrap.servers": args.bootstrap, "kafka.security.protocol": "SASL_PLAINTEXT",
            "kafka.sasl.mechanism": "GSSAPI", "kafka.sasl.kerberos.service.name": "kafka",
            "kafka.sasl.jaas.config": f'com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true '
                                      f'keyTab="{args.keytab}" principal="{args.principal}";'}


def apply(builder, options: dict):
    for key, value in options.items():
        builder = builder.option(key, value)
    return builder


def produce_over_kerberos(args, start: int, count: int, seconds: float) -> None:
    """Write rows `start`.. `start+count` into --topic from the driver, in small batches spread over `seconds`."""
    import pyarrow as pa

    from spark_kwire.client import KafkaClient, Producer

    options = {k[len("kafka."):]: v for k, v in kafka_options(args).items()}
    with KafkaClient(options) as client, Producer(client) as producer:
        steps = 20
        for step in range(steps):
            ids = range(start + step * count // steps, start + (step + 1) * count // steps)
            for partition in range(3):
                mine = [i for i in ids if i % 3 == partition]
                producer.send_batch(args.topic, partition, pa.array([f"v{i}".encode() for i in mine], pa.binary()),
                                    keys=pa.array([f"{i}".encode() for i in mine], pa.binary()))
            producer.flush()
            time.sleep(seconds / steps)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--master", required=True)
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--keytab", required=True)
    ap.add_argument("--principal", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--out-topic", required=True)
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--rows", type=int, default=3000)
    ap.add_argument("--stream-rows", type=int, default=3000)
    ap.add_argument("--seconds", type=float, default=45)
    args = ap.parse_args()

    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master(args.master).appName("kwire-delegation-token")
             .config("spark.ui.enabled", "false")
             .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.executor.cores", "1").config("spark.executor.memory", "768m")
             .config("spark.cores.max", "2").config("spark.task.maxFailures", "1")
             .config("spark.pyspark.python", sys.executable)
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1")
             .config("spark.executor.extraJavaOptions", "-XX:TieredStopAtLevel=1")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    # start the executors' Python workers first: on a busy machine that takes long enough to matter to a token
    # that lives a few seconds (tasks hold the token they were planned with, 25 % of its renewal period at least)
    spark.sparkContext.parallelize(range(4), 4).map(lambda x: x).collect()
    kerberos = kafka_options(args)
    token = {**kerberos, "delegationToken": "true"}
    result: dict = {}

    print("PHASE batch", flush=True)
    rows = spark.range(args.rows, numPartitions=3).selectExpr(
        "cast(id as string) as key", "concat('v', cast(id as string)) as value", "cast(id % 3 as int) as partition")
    apply(rows.write.format("kwire"), {**token, "topic": args.topic}).mode("append").save()

    print("PHASE control", flush=True)  # the topic has rows now: tasks must log in
    try:
        apply(spark.read.format("kwire"), {**kerberos, "subscribe": args.topic}).load().collect()
        result["control_error"] = None
    except Exception as exc:  # expected: the executors cannot log in with Kerberos
        result["control_error"] = str(exc)[-4000:]

    df = apply(spark.read.format("kwire"), {**token, "subscribe": args.topic, "startingOffsets": "earliest"}).load()
    result["batch_values"] = sorted(r.value.decode() for r in df.select("value").collect())
    result["batch_plan"] = df._jdf.queryExecution().toString()

    print("PHASE stream", flush=True)
    stream = apply(spark.readStream.format("kwire"), {**token, "subscribe": args.topic,
                                                      "startingOffsets": "earliest"}).load()
    query = (apply(stream.select("key", "value").writeStream.format("kwire"),
                   {**token, "topic": args.out_topic, "checkpointLocation": args.checkpoint})
             .trigger(processingTime="2 seconds").start())
    started = time.time()
    producer = threading.Thread(target=produce_over_kerberos,
                                args=(args, args.rows, args.stream_rows, args.seconds), daemon=True)
    producer.start()
    producer.join()
    query.processAllAvailable()
    progress = [p for p in query.recentProgress if p.get("numInputRows") is not None]
    result["stream_seconds"] = round(time.time() - started, 1)
    result["stream_exception"] = str(query.exception()) if query.exception() else None
    result["stream_active"] = query.isActive
    result["stream_batches"] = len(progress)
    result["stream_plan"] = query._jsq.toString() + str(query.lastProgress)
    query.stop()
    print("RESULT " + json.dumps(result), flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as exc:  # the last lines say why, for the test's message
        print(f"FAILED {type(exc).__name__}: {str(exc)[-3000:]}", flush=True)
        raise
