"""The payload formats by name, for callers that handle them alike (the data source's ``valueFormat``):

    fmt = payload_format("protobuf")                 # "avro" | "protobuf" | "json-schema" | "json"
    decoder = fmt.decoder(schema_text, references, message_name="Order")
    frames = fmt.frames(values)                      # the Confluent framing, with message indexes for Protobuf
    result = decoder.decode(frames, mode="PERMISSIVE")
    encoder = fmt.encoder(schema_text, schema_id, references)
    text = fmt.derive_schema(arrow_struct_type)      # what auto.register.schemas registers (fmt.schema_type)
    text = fmt.derive_named(arrow_struct_type, "shop.Order")  # the same, its record / message named so
    fmt.record_name(schema_text, references)         # "shop.Order": what RecordNameStrategy names subjects after

Every decoder has ``arrow_field`` / ``arrow_type``, ``missing_schema_ids(frames)``, ``add_writer_schema(id,
schema, references=...)`` and ``decode(values_or_frames, mode)`` -> ``results.DecodeResult``; every encoder
``check(arrow_type)`` and ``encode(column, mode)`` -> ``results.EncodeResult``. A format's modules are imported
when it is first asked for (Protobuf needs the ``protobuf`` runtime, the others do not).

Plain JSON (``json``) has no framing and no registry: its decoder takes a Spark schema (DDL or StructType JSON)
and ``json_options`` (``json.JsonOptions``), decodes the values themselves (``frames`` returns them unchanged) and has
no writer schemas to add; its encoder writes ``to_json``'s text, unframed (schema id and schema unused).

References are ``(name, schema)`` pairs in dependency order, as a registry's references come (Protobuf: the
import path; JSON Schema: what ``$ref`` names; Avro only needs their texts, :meth:`PayloadFormat.references`).
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from .framing import Frames, parse_confluent

FORMATS = ("avro", "protobuf", "json-schema", "json")
_ALIASES = {"avro": "avro", "protobuf": "protobuf", "proto": "protobuf", "json-schema": "json-schema",
            "jsonschema": "json-schema", "json_schema": "json-schema", "json": "json"}


@dataclass(frozen=True)
class PayloadFormat:
    """One payload format: its name, the registry's ``schemaType`` for it, and the options its decoder and
    encoder take beyond the schema (``decoder_options`` / ``encoder_options``)."""

    name: str
    schema_type: str | None  # AVRO, PROTOBUF or JSON, as the registry names them; None: no registry (plain JSON)
    message_indexes: bool  # whether the Confluent framing carries Protobuf's message indexes
    decoder_options: tuple[str, ...]
    encoder_options: tuple[str, ...]

    def _check(self, given: dict, accepted: tuple[str, ...], what: str) -> None:
        wrong = sorted(set(given) - set(accepted))
        if wrong:
            takes = ", ".join(accepted) or "no options"
            raise ValueError(f"{', '.join(wrong)}: not an option of the {self.name} {what} (it takes {takes})")

    def _registered(self) -> None:
        if self.schema_type is None:
            raise ValueError(f"{self.name} has no schema registry schemas (no derived schema, no record name)")

    def references(self, references) -> list:
        """``references`` (``(name, schema)`` pairs) as this format's classes take them: Avro's take the texts."""
        pairs = list(references or ())
        if self.name == "avro":
            return [item[1] if isinstance(item, tuple) else item for item in pairs]
        return pairs

    def frames(self, values: pa.Array | pa.ChunkedArray) -> Frames | pa.Array | pa.ChunkedArray:
        """The framing of every row of a binary column, as this format's decoder reads it (plain JSON: the values)."""
        if self.schema_type is None:
            return values
        return parse_confluent(values, message_indexes=self.message_indexes)

    def decoder(self, reader_schema, references=(), **options):
        """A decoder reading into the Spark shape of ``reader_schema`` (Avro: ``time_type``; Protobuf:
        ``message_name``, ``options`` (spark-protobuf's))."""
        self._check(options, self.decoder_options, "decoder")
        if self.name == "avro":
            from .avro.decoder import AvroDecoder

            return AvroDecoder(reader_schema, self.references(references), **options)
        if self.name == "protobuf":
            from .protobuf.decoder import ProtobufDecoder

            return ProtobufDecoder(reader_schema, references, **options)
        if self.name == "json":
            from .json.decoder import JsonDecoder

            return JsonDecoder(reader_schema, options.get("json_options"))
        from .json_schema.decoder import JsonSchemaDecoder

        return JsonSchemaDecoder(reader_schema, references)

    def encoder(self, schema, schema_id: int, references=(), **options):
        """An encoder writing values framed with ``schema_id`` (Protobuf: ``message_name``)."""
        self._check(options, self.encoder_options, "encoder")
        if self.name == "avro":
            from .avro.encoder import AvroEncoder

            return AvroEncoder(schema, schema_id, self.references(references))
        if self.name == "protobuf":
            from .protobuf.encoder import ProtobufEncoder

            return ProtobufEncoder(schema, schema_id, references=references, **options)
        if self.name == "json":
            from .json.encoder import JsonEncoder

            return JsonEncoder(options.get("json_options"))
        from .json_schema.encoder import JsonSchemaEncoder

        return JsonSchemaEncoder(schema, schema_id, references)

    def derive_schema(self, arrow_type: pa.DataType | pa.Schema, **options) -> str:
        """The schema text ``auto.register.schemas`` registers for values of ``arrow_type`` (Avro: spark-avro's
        ``toAvroType``; Protobuf: a proto3 message, ``record_name``/``package``; JSON: a draft-07 schema,
        ``title``)."""
        self._registered()
        if self.name == "avro":
            from .avro.spark_types import avro_schema_json

            return avro_schema_json(arrow_type, **options)
        if self.name == "protobuf":
            from .protobuf.derive import protobuf_schema_for

            return protobuf_schema_for(arrow_type, **options)
        from .json_schema.derive import json_schema_json

        return json_schema_json(arrow_type, **options)

    def derive_named(self, arrow_type: pa.DataType | pa.Schema, full_name: str | None = None) -> str:
        """:meth:`derive_schema` with its record (Avro), message (Protobuf: ``package.Message``) or title (JSON
        Schema) named ``full_name``; without one, each format's default (``topLevelRecord`` as spark-avro's
        ``toAvroType``, ``TopLevelRecord``, no title)."""
        if not full_name:
            return self.derive_schema(arrow_type)
        if self.name == "json-schema":
            return self.derive_schema(arrow_type, title=full_name)
        space, _, short = full_name.rpartition(".")
        if self.name == "avro":
            return self.derive_schema(arrow_type, record_name=short, namespace=space)
        return self.derive_schema(arrow_type, record_name=short, package=space)

    def record_name(self, schema, references=(), message_name: str | None = None) -> str | None:
        """The name Confluent's RecordNameStrategy gives ``schema``: an Avro record's full name, the Protobuf
        message's full name (``message_name``, or the file's first), a JSON Schema's ``title``; None if it has
        none."""
        self._registered()
        if self.name == "avro":
            from .avro import parse_schema
            from .avro.model import Named

            parsed = parse_schema(schema, self.references(references))
            return parsed.fullname if isinstance(parsed, Named) else None
        if self.name == "protobuf":
            from .protobuf.schemas import load_schema, select_message

            return select_message(load_schema(schema, references), message_name).full_name
        from .json_schema.model import schema_title

        return schema_title(schema)


_FORMATS = {
    "avro": PayloadFormat("avro", "AVRO", False, ("time_type",), ()),
    "protobuf": PayloadFormat("protobuf", "PROTOBUF", True, ("message_name", "options"), ("message_name",)),
    "json-schema": PayloadFormat("json-schema", "JSON", False, (), ()),
    "json": PayloadFormat("json", None, False, ("json_options",), ("json_options",)),
}


def payload_format(name: str) -> PayloadFormat:
    """The format named ``name`` (case-insensitive: avro, protobuf, json-schema, json); a ``ValueError`` listing them
    otherwise."""
    key = _ALIASES.get(str(name).strip().lower())
    if key is None:
        raise ValueError(f"unknown payload format {name!r}; accepted: {', '.join(FORMATS)}")
    return _FORMATS[key]
