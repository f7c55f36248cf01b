"""JSON Schema payloads (Confluent-framed) to and from Arrow columns, typed as ``spark_types.py`` describes.

* :class:`JsonSchemaDecoder` (``decoder.py``): reader schema -> Arrow type; ``decode(values_or_frames, mode)``.
* :class:`JsonSchemaEncoder` (``encoder.py``): ``check(arrow_type)``; ``encode(column, mode)`` -> framed JSON.
* :func:`parse_json_schema`, :func:`arrow_type`, :func:`json_schema_for` (a JSON Schema for an Arrow struct).

The names are imported on first use, so that the format registry (``codec.py``) loads no more than its description.
"""

from __future__ import annotations

from ..lazy_exports import lazy_exports

__all__, __getattr__ = lazy_exports(__name__, {
    "JType": "model", "JsonSchemaDecoder": "decoder", "JsonSchemaEncoder": "encoder", "arrow_type": "spark_types",
    "json_schema_for": "derive", "json_schema_json": "derive", "parse_json_schema": "model",
})
