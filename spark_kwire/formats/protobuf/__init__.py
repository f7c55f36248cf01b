"""Protobuf payloads (Confluent-framed) to and from Arrow columns, typed as spark-protobuf types them.

* :class:`ProtobufDecoder` (``decoder.py``): reader schema (+ references, message name, options) -> Arrow type;
  ``add_writer_schema(id, schema, references)``; ``decode(values_or_frames, mode)`` -> ``DecodeResult``.
* :class:`ProtobufEncoder` (``encoder.py``): ``check(arrow_type)``; ``encode(column, mode)`` -> framed binary.
* :func:`load_schema` (`.proto` text, base64 or binary ``FileDescriptorProto``, with references),
  :func:`parse_proto`, :func:`arrow_type` (spark-protobuf's mapping), :class:`ProtobufOptions`,
  :func:`protobuf_schema_for` (a `.proto` for an Arrow struct, for auto-registration).

The names are imported on first use: the kernels' modules of this package need no ``protobuf`` runtime, so
loading the format kernels (for Avro too) does not import it.
"""

from __future__ import annotations

from ..lazy_exports import lazy_exports

__all__, __getattr__ = lazy_exports(__name__, {
    "ProtobufDecoder": "decoder", "ProtobufEncoder": "encoder", "protobuf_schema_for": "derive",
    "ProtoSchema": "model", "parse_proto": "proto.parser", "load_schema": "schemas", "message_indexes": "schemas",
    "select_message": "schemas", "ProtobufOptions": "spark_types", "arrow_type": "spark_types",
})
