"""Avro."""
