"""Typed keys and values (issue #29): Avro, Protobuf and JSON Schema in the schema-registry wire format, read
into typed columns and written from them, for batch and streaming alike.

Their options are parsed in ``spark_kwire.spark.options`` (``payloads.py``: ``SideSpec``, ``TypedOptions``; a
side's format is ``formats.payload``'s description, asked for its capabilities),
``schemas.py`` (schemas decided on the driver: registry subjects and versions, fit of a DataFrame),
``spark_types.py`` (Arrow <-> Spark types), ``decoding.py`` / ``encoding.py`` (what read and write tasks run).
"""
