"""Typed payloads: the schema-registry wire format, Avro, Protobuf and JSON Schema, between Kafka's bytes and
Arrow columns.

The bottom layer beside ``protocol`` (bytes in, Arrow out): no sockets, no Spark. See ``payload``
(``payload_format(name)``: the formats by name, alike), ``framing`` (the Confluent header over whole columns),
``avro``, ``protobuf``, ``json_schema`` (decoders, encoders, schemas), ``results`` (what they return),
``columns`` / ``input_columns`` (Arrow buffers the compiled kernels fill and read, format-neutral), ``vm`` (the
kernels' format-neutral parts) and ``kernels`` (numba or plain Python, chosen once).
"""
