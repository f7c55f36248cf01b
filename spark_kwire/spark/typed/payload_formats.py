"""The payload formats a typed read or write can name (``valueFormat`` / ``keyFormat``), as the Spark glue sees
them: the format layer's own entries (:func:`spark_kwire.formats.payload.payload_format`: decoder, encoder,
framing, derived schema, record name), with the data source's option values and errors. There is one table of
formats, the format layer's; this module only adds what the options mean to it (``valueMessageName`` goes to
the formats that take a message name, Spark's TIME type to those that can read it) and turns its errors into
the data source's.

The format layer is imported on first use: every read and write task imports the options, and a binary one
needs no format.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from spark_kwire.spark.errors import KwireOptionError
from spark_kwire.spark.options.values import FORMAT_NAMES, TYPED_FORMAT_NAMES

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["PayloadFormat", "payload_format", "FORMAT_NAMES", "TYPED_FORMAT_NAMES"]

References = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class PayloadFormat:
    """One typed format: its option value, the registry's ``schemaType`` and the format layer's entry, called
    with what the data source's options give (a message name, whether Spark has a TIME type)."""

    name: str
    entry: Any  # spark_kwire.formats.payload.PayloadFormat

    @property
    def registry_type(self) -> str | None:
        """AVRO, PROTOBUF or JSON, as the schema registry names it; None for plain JSON (no registry)."""
        return self.entry.schema_type

    @property
    def uses_registry(self) -> bool:
        """Whether values are framed with a schema registry id (all but plain JSON)."""
        return self.entry.schema_type is not None

    @property
    def uses_message_name(self) -> bool:
        """Whether the format has several messages per schema (Protobuf: ``valueMessageName`` chooses one)."""
        return "message_name" in self.entry.decoder_options

    def _options(self, accepted: tuple[str, ...], **given) -> dict:
        return {name: value for name, value in given.items() if name in accepted}

    def references(self, references: References) -> list:
        """``references`` in the form this format's decoder and encoder take."""
        return self.entry.references(references)

    def frames(self, values: "pa.Array"):
        return self.entry.frames(values)

    def decoder(self, schema: str, references: References = (), message_name: str | None = None,
                time_type: bool = False, json_options=None):
        options = self._options(self.entry.decoder_options, message_name=message_name, time_type=time_type,
                                json_options=json_options)
        return self.entry.decoder(schema, list(references), **options)

    def encoder(self, schema: str, schema_id: int, references: References = (), message_name: str | None = None,
                json_options=None):
        options = self._options(self.entry.encoder_options, message_name=message_name, json_options=json_options)
        return self.entry.encoder(schema, schema_id, list(references), **options)

    def derive_schema(self, arrow_type: "pa.DataType", record_name: str | None) -> str:
        """What ``auto.register.schemas`` registers for a column of ``arrow_type``: spark-avro's ``toAvroType``
        for Avro, kwire's own for Protobuf and JSON Schema; ``record_name`` (``valueRecordName``) names its
        record, message or title."""
        return self.entry.derive_named(arrow_type, record_name)

    def record_name(self, schema: str, references: References, message_name: str | None) -> str | None:
        """The fully-qualified name RecordNameStrategy names the subject of ``schema`` after."""
        return self.entry.record_name(schema, list(references), message_name)


def payload_format(name: str) -> PayloadFormat:
    """The entry of a typed format (``avro``, ``protobuf``, ``json-schema``, ``json``)."""
    if name not in TYPED_FORMAT_NAMES:
        raise KwireOptionError(f"Unknown payload format {name!r}; accepted: {', '.join(FORMAT_NAMES)}.")
    from spark_kwire.formats.payload import payload_format as format_entry

    return PayloadFormat(name, format_entry(name))
