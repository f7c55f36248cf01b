"""Typed payloads: schema-registry framing and formats (Avro) between Kafka bytes and Arrow columns."""
