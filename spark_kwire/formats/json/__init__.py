"""Plain JSON payloads (no registry framing) between Kafka's bytes and Arrow columns.

``inference`` infers the schema of a sample of JSON documents as Spark's ``spark.read.json`` does.
"""
