# Databricks notebook source
# MAGIC %md
# MAGIC # Apache Kafka on Databricks with spark-kwire
# MAGIC
# MAGIC `format("kwire")` speaks the Kafka wire protocol in Python, through Spark's Python Data Source API.
# MAGIC There is **no JAR and no cluster library**: a notebook-scoped `%pip install` is all it takes, so it works on
# MAGIC serverless compute, on shared (Spark Connect) clusters and on classic clusters alike.
# MAGIC
# MAGIC This notebook connects to a secured Kafka cluster (**SASL_SSL with SCRAM-SHA-512**) whose credentials live in a
# MAGIC Databricks secret scope, then:
# MAGIC
# MAGIC 1. writes a DataFrame to a topic,
# MAGIC 2. reads it back as a batch,
# MAGIC 3. runs a stream with `trigger(availableNow=True)` into a table, committing its progress to a consumer group,
# MAGIC 4. shows that group's lag per partition.
# MAGIC
# MAGIC Requirements: compute whose Spark is 4.0 or newer (the Python data source API kwire is built on), and a network
# MAGIC path from the compute to the brokers.

# COMMAND ----------

# MAGIC %pip install spark-kwire

# COMMAND ----------

dbutils.library.restartPython()

# COMMAND ----------

# MAGIC %md
# MAGIC ## Connection settings
# MAGIC
# MAGIC Put the SCRAM credentials into a secret scope once, for example with the Databricks CLI:
# MAGIC
# MAGIC ```
# MAGIC databricks secrets create-scope kafka
# MAGIC databricks secrets put-secret kafka username
# MAGIC databricks secrets put-secret kafka password
# MAGIC ```
# MAGIC
# MAGIC The options are those of Spark's built-in `kafka` connector, `kafka.sasl.jaas.config` included: the
# MAGIC `kafkashaded.org.apache.kafka...ScramLoginModule` spelling used with Databricks' shaded connector is accepted
# MAGIC as is (so is the unshaded one). Leave *CA certificates* empty when the brokers' certificates come from a
# MAGIC public CA; for a private CA, give a PEM file, e.g. on a Unity Catalog volume.

# COMMAND ----------

dbutils.widgets.text("bootstrap_servers", "broker-1.example.com:9096,broker-2.example.com:9096", "Bootstrap servers")
dbutils.widgets.text("topic", "kwire_demo", "Topic")
dbutils.widgets.text("consumer_group", "kwire-demo-stream", "Consumer group of the stream")
dbutils.widgets.text("secret_scope", "kafka", "Secret scope")
dbutils.widgets.text("truststore_pem", "", "CA certificates (PEM path), only for a private CA")
dbutils.widgets.text("target_table", "main.default.kwire_demo_events", "Target table")
dbutils.widgets.text("checkpoint_location", "/Volumes/main/default/checkpoints/kwire_demo", "Checkpoint location")

topic = dbutils.widgets.get("topic")
consumer_group = dbutils.widgets.get("consumer_group")
target_table = dbutils.widgets.get("target_table")
checkpoint_location = dbutils.widgets.get("checkpoint_location")

secret_scope = dbutils.widgets.get("secret_scope")
username = dbutils.secrets.get(secret_scope, "username")
password = dbutils.secrets.get(secret_scope, "password")

kafka_options = {
    "kafka.bootstrap.servers": dbutils.widgets.get("bootstrap_servers"),
    "kafka.security.protocol": "SASL_SSL",
    "kafka.sasl.mechanism": "SCRAM-SHA-512",
    "kafka.sasl.jaas.config": (
        "kafkashaded.org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="{username}" password="{password}";'
    ),
}
truststore_pem = dbutils.widgets.get("truststore_pem")
if truststore_pem:
    kafka_options["kafka.ssl.truststore.type"] = "PEM"
    kafka_options["kafka.ssl.truststore.location"] = truststore_pem

# COMMAND ----------

# MAGIC %md
# MAGIC ## Register the source and create the topic
# MAGIC
# MAGIC `spark.read.format("kwire")` is normally found without registration; registering explicitly is harmless and
# MAGIC covers a package installed after the session's first use of Python data sources.
# MAGIC `spark_kwire.admin` takes the same `kafka.*` options.

# COMMAND ----------

import spark_kwire
from spark_kwire import admin

spark_kwire.register(spark)
admin.create_topic(kafka_options, topic, partitions=3, exist_ok=True)
print(f"topic {topic}: end offsets {admin.latest_offsets(kafka_options, topic)}")

# COMMAND ----------

# MAGIC %md
# MAGIC ## Write
# MAGIC
# MAGIC The columns are those of Spark's `kafka` sink (`value`, and optionally `key`, `topic`, `partition`, `headers`).
# MAGIC Python data sources need `mode("append")`.

# COMMAND ----------

events = spark.range(1000).selectExpr(
    "CAST(id % 16 AS STRING) AS key",
    "to_json(named_struct('id', id, 'kind', IF(id % 3 = 0, 'click', 'view'))) AS value",
)
(events.write.format("kwire")
    .options(**kafka_options)
    .option("topic", topic)
    .mode("append")
    .save())

# COMMAND ----------

# MAGIC %md
# MAGIC ## Batch read

# COMMAND ----------

df = (spark.read.format("kwire")
      .options(**kafka_options)
      .option("subscribe", topic)
      .option("startingOffsets", "earliest")
      .option("endingOffsets", "latest")
      .load())

display(df.selectExpr("CAST(key AS STRING) AS key", "CAST(value AS STRING) AS value", "partition", "offset", "timestamp")
          .orderBy("partition", "offset")
          .limit(10))

# COMMAND ----------

display(df.groupBy("partition").count().orderBy("partition"))

# COMMAND ----------

# MAGIC %md
# MAGIC ## Stream with `availableNow`
# MAGIC
# MAGIC The query reads everything available when it starts (in micro-batches of at most `maxOffsetsPerTrigger`
# MAGIC records), appends it to the target table and stops: the trigger serverless compute supports.
# MAGIC
# MAGIC `commitOffsetsToGroup` commits the end offsets of every finished micro-batch to a consumer group, so the
# MAGIC query's progress shows up in Kafka's tools and in the lag table below. Where the query resumes is still decided
# MAGIC by its checkpoint. On Spark 4.0/4.1 (Databricks Runtime 17.3 LTS) the last micro-batch of a run is committed to the
# MAGIC group when the next run starts, so the lag below shows that batch until then.

# COMMAND ----------

stream = (spark.readStream.format("kwire")
          .options(**kafka_options)
          .option("subscribe", topic)
          .option("startingOffsets", "earliest")
          .option("maxOffsetsPerTrigger", 50000)
          .option("commitOffsetsToGroup", consumer_group)
          .load())

query = (stream.selectExpr("CAST(key AS STRING) AS key", "CAST(value AS STRING) AS value", "topic", "partition",
                           "offset", "timestamp")
         .writeStream
         .option("checkpointLocation", checkpoint_location)
         .trigger(availableNow=True)
         .toTable(target_table))
query.awaitTermination()

display(spark.table(target_table).groupBy("partition").count().orderBy("partition"))

# COMMAND ----------

# MAGIC %md
# MAGIC ## Consumer-group lag
# MAGIC
# MAGIC `option("metadata", "group_offsets")` reads cluster metadata instead of records: one row per partition the
# MAGIC group has committed, with its committed offset, the partition's latest offset and the lag.

# COMMAND ----------

lag = (spark.read.format("kwire")
       .options(**kafka_options)
       .option("metadata", "group_offsets")
       .option("groups", consumer_group)
       .load())

display(lag.select("group", "topic", "partition", "committed_offset", "latest_offset", "lag")
           .orderBy("topic", "partition"))
