"""Plain JSON payloads (Kafka values of JSON text, no framing) to and from Arrow columns, as Spark's ``from_json``
and ``to_json`` read and write them.

* :class:`JsonDecoder` (``decoder.py``): a Spark schema (DDL or StructType JSON, ``schema_text.py``) -> Arrow
  struct; ``decode(values, mode)`` with PERMISSIVE's partial results, the corrupt-record field and the rescued
  data column.
* :class:`JsonEncoder` (``encoder.py``): ``check(arrow_type)``; ``encode(column)`` -> ``to_json``'s text.
* :class:`JsonOptions` (``options.py``): ``from_json`` / ``to_json``'s options.

Schema inference (``inference*.py``) lives here too.
"""

from .decoder import JsonDecoder
from .encoder import JsonEncoder
from .options import INFERENCE_OPTIONS, READ_OPTIONS, WRITE_OPTIONS, JsonOptions
from .schema_text import parse_schema_text

__all__ = ["INFERENCE_OPTIONS", "JsonDecoder", "JsonEncoder", "JsonOptions", "READ_OPTIONS", "WRITE_OPTIONS",
           "parse_schema_text"]
