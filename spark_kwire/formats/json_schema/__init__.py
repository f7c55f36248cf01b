"""JSON Schema payloads (Confluent-framed) to and from Arrow columns, typed as ``spark_types.py`` describes.

* :class:`JsonSchemaDecoder` (``decoder.py``): reader schema -> Arrow type; ``decode(values_or_frames, mode)``.
* :class:`JsonSchemaEncoder` (``encoder.py``): ``check(arrow_type)``; ``encode(column, mode)`` -> framed JSON.
* :func:`parse_json_schema`, :func:`arrow_type`, :func:`json_schema_for` (a JSON Schema for an Arrow struct).
"""

from .decoder import JsonSchemaDecoder
from .derive import json_schema_for, json_schema_json
from .encoder import JsonSchemaEncoder
from .model import JType, parse_json_schema
from .spark_types import arrow_type

__all__ = ["JType", "JsonSchemaDecoder", "JsonSchemaEncoder", "arrow_type", "json_schema_for", "json_schema_json",
           "parse_json_schema"]
