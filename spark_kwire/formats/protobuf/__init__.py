"""Protobuf payloads (Confluent-framed) to and from Arrow columns, typed as spark-protobuf types them.

* :class:`ProtobufDecoder` (``decoder.py``): reader schema (+ references, message name, options) -> Arrow type;
  ``add_writer_schema(id, schema, references)``; ``decode(values_or_frames, mode)`` -> ``DecodeResult``.
* :class:`ProtobufEncoder` (``encoder.py``): ``check(arrow_type)``; ``encode(column, mode)`` -> framed binary.
* :func:`load_schema` (`.proto` text, base64 or binary ``FileDescriptorProto``, with references),
  :func:`parse_proto`, :func:`arrow_type` (spark-protobuf's mapping), :class:`ProtobufOptions`,
  :func:`protobuf_schema_for` (a `.proto` for an Arrow struct, for auto-registration).
"""

from .decoder import ProtobufDecoder
from .derive import protobuf_schema_for
from .encoder import ProtobufEncoder
from .model import ProtoSchema
from .proto_parser import parse_proto
from .schemas import load_schema, message_indexes, select_message
from .spark_types import ProtobufOptions, arrow_type

__all__ = ["ProtoSchema", "ProtobufDecoder", "ProtobufEncoder", "ProtobufOptions", "arrow_type", "load_schema",
           "message_indexes", "parse_proto", "protobuf_schema_for", "select_message"]
