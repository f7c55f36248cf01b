"""JSON Schema, described for the format registry (``formats/payload.py``): Confluent-framed, the registry's ``JSON``
schemas, kwire's Spark types for them, a draft-07 schema derived for auto-registration (its ``title`` the record
name), its decoding kernel beside the JSON text kernels both JSON formats share (``json_text``)."""

from __future__ import annotations

from .. import json_text
from ..contract.codec import Codec, Framing, round_trip

_PACKAGE = "spark_kwire.formats.json_schema"


def _decoder(reader_schema, references):
    from .decoder import JsonSchemaDecoder

    return JsonSchemaDecoder(reader_schema, references)


def _encoder(schema, schema_id: int, references):
    from .encoder import JsonSchemaEncoder

    return JsonSchemaEncoder(schema, schema_id, references)


def _derive(arrow_type, full_name: str | None) -> str:
    """A draft-07 schema for ``arrow_type``, titled ``full_name``."""
    from .derive import json_schema_json

    return json_schema_json(arrow_type, title=full_name) if full_name else json_schema_json(arrow_type)


def _record_name(schema, references: list, message_name: str | None = None) -> str | None:
    """The schema's ``title`` (Confluent's record strategy names a JSON Schema's subject after it)."""
    from .model import schema_title

    return schema_title(schema)


_SAMPLE = {"type": "object", "required": ["l"], "properties": {
    "l": {"type": "integer"}, "s": {"type": ["string", "null"]}, "d": {"type": "array", "items": {"type": "number"}},
    "m": {"type": "object", "additionalProperties": {"type": "integer"}},
    "t": {"type": "string", "format": "date-time"},
    "day": {"type": "string", "format": "date"}, "b": {"type": "string", "contentEncoding": "base64"},
    "ok": {"type": "boolean"}, "any": {}, "inner": {"type": "object", "properties": {"x": {"type": "number"}}}}}


def _warm_up() -> None:
    import datetime

    when = datetime.datetime(2024, 5, 1, 12, tzinfo=datetime.timezone.utc)
    round_trip(CODEC, _SAMPLE, [{
        "l": 1, "s": "é\n", "d": [0.25, 1e300], "m": [("k", 2)], "t": when, "day": datetime.date(2024, 2, 29),
        "b": b"\x00", "ok": False, "any": '{"a":[1]}', "inner": {"x": 0.1}}, None])


CODEC = Codec(
    name="json-schema", aliases=("jsonschema", "json_schema"), schema_type="JSON", framing=Framing.CONFLUENT,
    new_decoder=_decoder, new_encoder=_encoder, derive=_derive, record_namer=_record_name,
    kernels=(*json_text.KERNELS, f"{_PACKAGE}.kernels.decode"),
    constants=(*json_text.CONSTANTS, f"{_PACKAGE}.program"), warm_up=_warm_up,
)
