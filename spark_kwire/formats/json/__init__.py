"""Plain JSON payloads (Kafka values of JSON text, no framing) to and from Arrow columns, as Spark's ``from_json``
and ``to_json`` read and write them.

* :class:`JsonDecoder` (``decoder.py``): a Spark schema (DDL or StructType JSON, ``schema_text.py``) -> Arrow
  struct; ``decode(values, mode)`` with PERMISSIVE's partial results, the corrupt-record field and the rescued
  data column.
* :class:`JsonEncoder` (``encoder.py``): ``check(arrow_type)``; ``encode(column)`` -> ``to_json``'s text.
* :class:`JsonOptions` (``options.py``): ``from_json`` / ``to_json``'s options.

Schema inference (``inference/``) lives here too. The names are imported on first use, so that the format
registry (``codec.py``) loads no more than its description.
"""

from __future__ import annotations

from ..lazy_exports import lazy_exports

__all__, __getattr__ = lazy_exports(__name__, {
    "INFERENCE_OPTIONS": "options", "JsonDecoder": "decoder", "JsonEncoder": "encoder", "JsonOptions": "options",
    "READ_OPTIONS": "options", "WRITE_OPTIONS": "options", "parse_schema_text": "schema_text",
})
