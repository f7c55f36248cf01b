"""Typed payloads: the schema-registry wire format and Avro, between Kafka's bytes and Arrow columns.

The bottom layer beside ``protocol`` (bytes in, Arrow out): no sockets, no Spark. See ``framing`` (the
Confluent header over whole columns), ``avro`` (decoder, encoder, schemas), ``columns`` /
``input_columns`` (Arrow buffers the compiled kernels fill and read, format-neutral), ``vm`` (the
kernels' format-neutral parts) and ``kernels`` (numba or plain Python, chosen once).
"""
