"""Avro, described for the format registry (``formats/payload.py``): Confluent-framed, the registry's ``AVRO``
schemas, spark-avro's types and ``toAvroType`` for auto-registration, its two interpreters as kernels."""

from __future__ import annotations

from ..contract.codec import Codec, Framing, round_trip

_PACKAGE = "spark_kwire.formats.avro"


def _texts(references: list) -> list:
    """References as Avro's classes take them: the schema texts (names come from inside the schemas)."""
    return [item[1] if isinstance(item, tuple) else item for item in references]


def _decoder(reader_schema, references, time_type: bool = False):
    from .decoder import AvroDecoder

    return AvroDecoder(reader_schema, references, time_type=time_type)


def _encoder(schema, schema_id: int, references):
    from .encoder import AvroEncoder

    return AvroEncoder(schema, schema_id, references)


def _derive(arrow_type, full_name: str | None) -> str:
    """spark-avro's ``toAvroType``; the record named ``full_name`` (its namespace before the last dot)."""
    from .spark_types import avro_schema_json

    if not full_name:
        return avro_schema_json(arrow_type)
    namespace, _, name = full_name.rpartition(".")
    return avro_schema_json(arrow_type, record_name=name, namespace=namespace)


def _record_name(schema, references: list, message_name: str | None = None) -> str | None:
    """The record's full name (None for a schema that is no named type)."""
    from .model import Named
    from .parser import parse_schema

    parsed = parse_schema(schema, references)
    return parsed.fullname if isinstance(parsed, Named) else None


# a reader schema with a field the writer's lacks (its default fills it), and most kinds of values
_SAMPLE = {"type": "record", "name": "Warm", "fields": [
    {"name": "l", "type": "long"}, {"name": "s", "type": ["null", "string"]},
    {"name": "a", "type": {"type": "array", "items": {"type": "map", "values": "double"}}},
    {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}},
    {"name": "d", "type": {"type": "bytes", "logicalType": "decimal", "precision": 20, "scale": 2}},
    {"name": "u", "type": ["int", "string", "boolean"]}, {"name": "f", "type": "float"},
    {"name": "default", "type": "int", "default": 1}]}


def _warm_up() -> None:
    import decimal

    import pyarrow as pa

    writer = {**_SAMPLE, "fields": _SAMPLE["fields"][:-1]}
    reader_type = CODEC.decoder(_SAMPLE).arrow_type
    row_type = pa.struct([reader_type.field(i) for i in range(reader_type.num_fields - 1)])
    row = {"l": 1, "s": "x", "a": [[("k", 1.5)]], "e": "B", "d": decimal.Decimal("1.25"),
           "u": {"member0": 3, "member1": None, "member2": None}, "f": 0.5}
    round_trip(CODEC, _SAMPLE, [row, None], writer_schema=writer, row_type=row_type,
               expected=[{**row, "default": 1}, None])


CODEC = Codec(
    name="avro", schema_type="AVRO", framing=Framing.CONFLUENT,
    new_decoder=_decoder, new_encoder=_encoder, decoder_options=("time_type",),
    derive=_derive, record_namer=_record_name, reference_form=_texts,
    kernels=(f"{_PACKAGE}.kernels.decode", f"{_PACKAGE}.kernels.encode"), constants=(f"{_PACKAGE}.opcodes",),
    warm_up=_warm_up,
)
