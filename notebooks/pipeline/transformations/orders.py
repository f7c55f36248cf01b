"""Orders from Kafka, read and written by kwire (format("kwire") in a pipeline is Spark's format("kafka") with no JAR).

The broker and topics come from the environment: KWIRE_BOOTSTRAP (default localhost:9092), KWIRE_ORDERS_TOPIC
(default orders: JSON values such as {"amount": 12.5, "country": "FR"}, keyed by order id) and KWIRE_OUT_TOPIC
(default orders_checked).
"""

import os

from pyspark import pipelines as dp
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

spark = SparkSession.active()  # the pipeline's session (Spark 4.3 also hands it to this file as `spark`; 4.1 does not)

BOOTSTRAP = os.environ.get("KWIRE_BOOTSTRAP", "localhost:9092")
ORDERS = os.environ.get("KWIRE_ORDERS_TOPIC", "orders")
OUT = os.environ.get("KWIRE_OUT_TOPIC", "orders_checked")


@dp.table(comment="Every record of the orders topic, once: a streaming table fed by kwire. Its checkpoint (under "
                  "the spec's storage) remembers the offsets read, so a new run reads only new records.")
def orders_raw():
    return (spark.readStream.format("kwire")
            .option("kafka.bootstrap.servers", BOOTSTRAP)
            .option("subscribe", ORDERS)
            .option("startingOffsets", "earliest")
            .load()
            .select(F.col("key").cast("string").alias("order_id"),
                    F.col("value").cast("string").alias("payload"),
                    "partition", "offset", "timestamp"))


@dp.materialized_view(comment="Records and last offset per Kafka partition, recomputed on each run.")
def orders_per_partition():
    return (spark.read.table("orders_raw")
            .groupBy("partition")
            .agg(F.count("*").alias("records"), F.max("offset").alias("last_offset")))


# A kwire sink: the rows of its flows are written to the topic as Spark's kafka sink writes them (key, value,
# headers, partition columns); each micro-batch is written once per checkpointed batch (at-least-once, as Spark's).
dp.create_sink("orders_checked_sink", format="kwire",
               options={"kafka.bootstrap.servers": BOOTSTRAP, "topic": OUT})


@dp.append_flow(target="orders_checked_sink")
def orders_to_kafka():
    return (spark.readStream.table("orders_checked")  # the SQL streaming table (orders.sql)
            .select(F.col("order_id").alias("key"),
                    F.to_json(F.struct("order_id", "amount", "country", "large")).alias("value")))
