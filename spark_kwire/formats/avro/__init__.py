"""Avro payloads (Confluent-framed) to and from Arrow columns, typed as spark-avro types them.

* :class:`AvroDecoder` (``decoder.py``): reader schema -> Arrow type; ``add_writer_schema(id, schema)``;
  ``decode(values_or_frames, mode)`` -> :class:`DecodeResult`.
* :class:`AvroEncoder` (``encoder.py``): ``check(arrow_type)``; ``encode(column, mode)`` -> framed binary.
* :func:`parse_schema`, :func:`resolve` (reader vs writer), :func:`arrow_type` (spark-avro's mapping),
  :func:`avro_schema_for` / :func:`avro_schema_json` (spark-avro's ``toAvroType``),
  :func:`parsing_canonical_form`, :func:`fingerprint64`.
"""

from .canonical import fingerprint64, parsing_canonical_form
from .decoder import FAILFAST, PERMISSIVE, AvroDecoder, DecodeResult
from .encoder import AvroEncoder, EncodeResult
from .parser import parse_schema
from .resolution import resolve
from .spark_types import arrow_type, avro_schema_for, avro_schema_json

__all__ = [
    "FAILFAST", "PERMISSIVE", "AvroDecoder", "AvroEncoder", "DecodeResult", "EncodeResult", "arrow_type",
    "avro_schema_for", "avro_schema_json", "fingerprint64", "parse_schema", "parsing_canonical_form", "resolve",
]
