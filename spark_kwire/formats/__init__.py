"""Typed payloads: the schema-registry wire format, Avro, Protobuf and JSON Schema, and plain JSON, between Kafka's
bytes and Arrow columns.

The bottom layer beside ``protocol`` (bytes in, Arrow out): no sockets, no Spark. See ``payload``
(``payload_format(name)``: the formats by name, each described once by its package's ``codec.py``), ``framing`` (the
Confluent header over whole columns), ``avro``, ``protobuf``, ``json_schema``, ``json`` (decoders, encoders, schemas),
``json_text`` (the JSON text both JSON formats share), ``contract`` (what every format shares: the codec description,
the decode and encode loops, the results), ``columns`` (Arrow buffers the compiled kernels fill and read), ``vm``
(the kernels' format-neutral parts), ``kernels`` (numba or plain Python, chosen once) and ``warmup``.
"""
