"""The payload formats a typed read or write can name (``valueFormat`` / ``keyFormat``), each a small table entry
over the format layer: how to frame, decode, encode, derive a schema to register, and find a schema's record
name. The Spark glue calls only these entries, so a new format plugs in with one entry.

Every format follows the interface of :class:`spark_kwire.formats.avro.AvroDecoder` / ``AvroEncoder``:
``Decoder(reader_schema, references, ...)`` with ``.arrow_type``, ``.missing_schema_ids(frames)``,
``.add_writer_schema(id, schema, references=)`` and ``.decode(frames, mode)``; ``Encoder(schema, schema_id, ...)``
with ``.check(arrow_type)`` and ``.encode(column, mode)``. References are handed over as ``(name, schema text)``
pairs in dependency order (a registry's references); each entry turns them into what its classes take.

Protobuf and JSON Schema are looked up in ``spark_kwire.formats.protobuf`` / ``.json_schema`` by name: until
those packages exist, naming them fails with a clear "not available yet" error (never an ImportError).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from spark_kwire.spark.errors import KwireOptionError

if TYPE_CHECKING:
    import pyarrow as pa

FORMAT_NAMES = ("binary", "avro", "protobuf", "json-schema")
TYPED_FORMAT_NAMES = FORMAT_NAMES[1:]

__all__ = ["PayloadFormat", "payload_format", "FORMAT_NAMES", "TYPED_FORMAT_NAMES"]

References = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class PayloadFormat:
    """One payload format: its option value, the registry's ``schemaType`` and the functions the glue calls."""

    name: str
    registry_type: str  # AVRO, PROTOBUF or JSON
    make_decoder: Callable[..., Any]  # (schema text, references, message_name, time_type) -> decoder
    make_encoder: Callable[..., Any]  # (schema text, schema id, references, message_name) -> encoder
    frames: Callable[["pa.Array"], Any]  # values -> formats.framing.Frames
    derive_schema: Callable[["pa.DataType", str | None], str]  # (arrow type, record full name) -> schema text
    record_name: Callable[[str, References, str | None], str | None]  # schema -> its fully-qualified name
    uses_message_name: bool = False  # Protobuf: which message of the file
    references_as_texts: bool = False  # Avro's classes take the referenced schemas' texts, not (name, text)

    def references(self, references: References) -> list:
        """``references`` in the form this format's decoder and encoder take."""
        return [text for _name, text in references] if self.references_as_texts else list(references)

    def decoder(self, schema: str, references: References = (), message_name: str | None = None,
                time_type: bool = False):
        return self.make_decoder(schema, references, message_name, time_type)

    def encoder(self, schema: str, schema_id: int, references: References = (), message_name: str | None = None):
        return self.make_encoder(schema, schema_id, references, message_name)


# -- Avro ---------------------------------------------------------------------------------------------------

def _avro_decoder(schema, references, message_name, time_type):
    from spark_kwire.formats.avro import AvroDecoder

    return AvroDecoder(schema, references=[text for _name, text in references], time_type=time_type)


def _avro_encoder(schema, schema_id, references, message_name):
    from spark_kwire.formats.avro import AvroEncoder

    return AvroEncoder(schema, schema_id, references=[text for _name, text in references])


def _avro_frames(values):
    from spark_kwire.formats.framing import parse_confluent

    return parse_confluent(values)


def _avro_derive(arrow_type: pa.DataType, record_name: str | None) -> str:
    """spark-avro's toAvroType: record ``topLevelRecord`` unless a full name is given (``ns.Name``)."""
    from spark_kwire.formats.avro import avro_schema_json

    name = record_name or "topLevelRecord"
    namespace, _, short = name.rpartition(".")
    return avro_schema_json(arrow_type, record_name=short, namespace=namespace)


def _avro_record_name(schema, references, message_name) -> str | None:
    from spark_kwire.formats.avro import parse_schema
    from spark_kwire.formats.avro.model import Named

    parsed = parse_schema(schema, [text for _name, text in references])
    return parsed.fullname if isinstance(parsed, Named) else None


AVRO = PayloadFormat("avro", "AVRO", _avro_decoder, _avro_encoder, _avro_frames, _avro_derive, _avro_record_name,
                     references_as_texts=True)


# -- formats built elsewhere, plugged in by name when their package exists -----------------------------------

def _not_yet(name: str, module: str, missing: str) -> KwireOptionError:
    return KwireOptionError(
        f"Format '{name}' is not available yet in this version of kwire ({module} has no {missing}). "
        f"Accepted now: {', '.join(n for n in FORMAT_NAMES if n not in _LATER or _available(n))}.")


def _lookup(module: str, attribute: str):
    try:
        found = importlib.import_module(module)
    except ImportError:
        return None
    return getattr(found, attribute, None)


# What each later format's package must offer (the same interface as Avro's): module, decoder class, encoder
# class, schema derivation for auto.register.schemas, record (message) name of a schema.
_LATER = {
    "protobuf": ("PROTOBUF", "spark_kwire.formats.protobuf", "ProtobufDecoder", "ProtobufEncoder",
                 "proto_schema_for", "message_full_name", True),
    "json-schema": ("JSON", "spark_kwire.formats.json_schema", "JsonSchemaDecoder", "JsonSchemaEncoder",
                    "json_schema_for", "schema_title", False),
}


def _available(name: str) -> bool:
    _kind, module, decoder, encoder, *_ = _LATER[name]
    return _lookup(module, decoder) is not None and _lookup(module, encoder) is not None


def _later_format(name: str) -> PayloadFormat:
    kind, module, decoder_name, encoder_name, derive_name, record_name_fn, message = _LATER[name]
    decoder_class, encoder_class = _lookup(module, decoder_name), _lookup(module, encoder_name)
    if decoder_class is None or encoder_class is None:
        raise _not_yet(name, module, decoder_name if decoder_class is None else encoder_name)
    from spark_kwire.formats.framing import parse_confluent

    def make_decoder(schema, references, message_name, time_type):
        extra = {"message_name": message_name} if message else {}
        return decoder_class(schema, references=references, **extra)

    def make_encoder(schema, schema_id, references, message_name):
        extra = {"message_name": message_name} if message else {}
        return encoder_class(schema, schema_id, references=references, **extra)

    def derive(arrow_type, record_name):
        function = _lookup(module, derive_name)
        if function is None:
            raise _not_yet(f"{name}' with 'auto.register.schemas", module, derive_name)
        return function(arrow_type, record_name) if record_name else function(arrow_type)

    def record(schema, references, message_name):
        function = _lookup(module, record_name_fn)
        if function is None:
            return message_name
        return function(schema, references, message_name) if message else function(schema)

    return PayloadFormat(name, kind, make_decoder, make_encoder,
                         lambda values: parse_confluent(values, message_indexes=message), derive, record,
                         uses_message_name=message)


def payload_format(name: str) -> PayloadFormat:
    """The entry of a typed format (``avro``, ``protobuf``, ``json-schema``)."""
    if name == "avro":
        return AVRO
    if name in _LATER:
        return _later_format(name)
    raise KwireOptionError(f"Unknown payload format {name!r}; accepted: {', '.join(FORMAT_NAMES)}.")
