"""Avro payloads (Confluent-framed) to and from Arrow columns, typed as spark-avro types them.

* :class:`AvroDecoder` (``decoder.py``): reader schema -> Arrow type; ``add_writer_schema(id, schema)``;
  ``decode(values_or_frames, mode)`` -> :class:`DecodeResult`.
* :class:`AvroEncoder` (``encoder.py``): ``check(arrow_type)``; ``encode(column, mode)`` -> framed binary.
* :func:`parse_schema`, :func:`resolve` (reader vs writer), :func:`arrow_type` (spark-avro's mapping),
  :func:`avro_schema_for` / :func:`avro_schema_json` (spark-avro's ``toAvroType``),
  :func:`parsing_canonical_form`, :func:`fingerprint64`.

The names are imported on first use, so that the format registry (``codec.py``) loads no more than its description.
"""

from __future__ import annotations

from ..lazy_exports import lazy_exports

__all__, __getattr__ = lazy_exports(__name__, {
    "FAILFAST": "decoder", "PERMISSIVE": "decoder", "AvroDecoder": "decoder", "DecodeResult": "decoder",
    "AvroEncoder": "encoder", "EncodeResult": "encoder", "parse_schema": "parser", "resolve": "resolution",
    "arrow_type": "spark_types", "avro_schema_for": "spark_types", "avro_schema_json": "spark_types",
    "fingerprint64": "canonical", "parsing_canonical_form": "canonical",
})
