"""One payload format, described once: what the format registry (``payload.py``), the kernel list
(``kernels.py``), the warm-up (``warmup.py``) and the Spark layer need to know of it. Each format package exports one
:class:`Codec` as ``CODEC`` from its ``codec.py``, and the registry lists them; nothing else names the formats one
by one.

A description is data and small functions: its factories import the format's modules when first called, so
that reading the registry loads no decoder (Protobuf's need the ``protobuf`` runtime).

Every decoder a codec makes has ``arrow_field`` / ``arrow_type``, ``missing_schema_ids(frames)``,
``add_writer_schema(id, schema, references=...)`` and ``decode(values_or_frames, mode)`` ->
``results.DecodeResult``; every encoder ``check(arrow_type)`` and ``encode(column, mode)`` ->
``results.EncodeResult``. References are ``(name, schema)`` pairs in dependency order, as a registry's references
come; :meth:`Codec.references` gives them in the form the format's classes take.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Callable

from .results import FAILFAST, PERMISSIVE


class Framing(enum.Enum):
    """How a format's values are framed in Kafka."""

    NONE = "none"  # the values are the payloads (plain JSON)
    CONFLUENT = "confluent"  # magic byte 0, the schema id (4 bytes), the payload
    CONFLUENT_MESSAGE_INDEXES = "confluent with message indexes"  # ... Protobuf's message indexes before the payload


@dataclass(frozen=True)
class Capabilities:
    """What the Spark layer asks a format instead of testing its name (registry use and message names are
    :attr:`Codec.uses_registry` and :attr:`Codec.takes_message_name`)."""

    # the reader schema is given as Spark DDL or a StructType's JSON (valueSchema), not as a registry schema
    spark_schema: bool = False
    # with no schema given, load() infers one from records sampled from the topic (spark.read.json's rules)
    infers_schema: bool = False
    # a stream records its inferred schema in schemaLocation and meets new fields (schemaEvolutionMode)
    evolves_schema: bool = False
    # a write encodes the column's own type, with no writer schema and no registry (valueSchema refused on writes)
    writes_column_type: bool = False
    # PERMISSIVE keeps what fits of a bad record, its text in the value's corrupt-record field and what did not
    # fit in a rescued-data column (from_json's way), instead of a null value (from_avro's)
    partial_rows: bool = False
    # a read's mode when none is given: FAILFAST as from_avro's, PERMISSIVE as from_json's
    default_mode: str = FAILFAST
    # the Spark options a read passes to this format's decoder (from_json's), those that shape an inferred schema
    # (spark.read.json's), and those a write passes to its encoder (to_json's)
    read_options: tuple[str, ...] = ()
    inference_options: tuple[str, ...] = ()
    write_options: tuple[str, ...] = ()


def _unchanged(references: list) -> list:
    return references


@dataclass(frozen=True)
class Codec:
    """A payload format: its names, its place in the schema registry and Kafka's framing, how to make its decoder
    and encoder and derive and name its schemas, its compiled kernels and warm-up, and its capabilities."""

    name: str  # as users write it (valueFormat)
    schema_type: str | None  # AVRO, PROTOBUF or JSON, as the registry names it; None: no registry (plain JSON)
    framing: Framing
    # (schema, references, **decoder_options) -> decoder; (schema, schema_id, references, **encoder_options) ->
    # encoder; references as :meth:`references` gives them
    new_decoder: Callable[..., Any]
    new_encoder: Callable[..., Any]
    # the kernel modules, in dependency order (after the format-neutral building blocks), and the modules whose
    # constants they compile in; a module two formats share is listed by both
    kernels: tuple[str, ...]
    constants: tuple[str, ...]
    warm_up: Callable[[], None]  # runs a small sample through the decoder and encoder (compiling the kernels)
    aliases: tuple[str, ...] = ()  # other spellings accepted, lower case
    decoder_options: tuple[str, ...] = ()  # the keyword options new_decoder takes beyond the schema
    encoder_options: tuple[str, ...] = ()
    # (arrow_type, full_name or None) -> the schema text auto.register.schemas registers, its record, message or
    # title named ``full_name``; None for a format without registry schemas
    derive: Callable[[Any, str | None], str] | None = None
    # (schema, references, message_name) -> the name Confluent's RecordNameStrategy gives the schema, or None
    record_namer: Callable[..., str | None] | None = None
    reference_form: Callable[[list], list] = _unchanged  # references as the format's classes take them
    capabilities: Capabilities = field(default_factory=Capabilities)

    @property
    def uses_registry(self) -> bool:
        """Whether values are framed with a schema registry id (every format but plain JSON)."""
        return self.schema_type is not None

    @property
    def takes_message_name(self) -> bool:
        """Whether a schema holds several messages, one chosen by name (Protobuf: valueMessageName)."""
        return "message_name" in self.decoder_options

    def _check(self, given: dict, accepted: tuple[str, ...], what: str) -> None:
        wrong = sorted(set(given) - set(accepted))
        if wrong:
            takes = ", ".join(accepted) or "no options"
            raise ValueError(f"{', '.join(wrong)}: not an option of the {self.name} {what} (it takes {takes})")

    def _registered(self, what: Callable | None) -> Callable:
        if what is None or not self.uses_registry:
            raise ValueError(f"{self.name} has no schema registry schemas (no derived schema, no record name)")
        return what

    def references(self, references) -> list:
        """``references`` (``(name, schema)`` pairs) as this format's classes take them (Avro's take the texts)."""
        return self.reference_form(list(references or ()))

    def frames(self, values):
        """The framing of every row of a binary column, as this format's decoder reads it (unframed: the values)."""
        if self.framing is Framing.NONE:
            return values
        from ..framing import parse_confluent

        return parse_confluent(values, message_indexes=self.framing is Framing.CONFLUENT_MESSAGE_INDEXES)

    def decoder(self, reader_schema, references=(), **options):
        """A decoder reading into the Spark shape of ``reader_schema`` (options: :attr:`decoder_options`)."""
        self._check(options, self.decoder_options, "decoder")
        return self.new_decoder(reader_schema, self.references(references), **options)

    def encoder(self, schema, schema_id: int, references=(), **options):
        """An encoder writing values framed with ``schema_id`` (options: :attr:`encoder_options`)."""
        self._check(options, self.encoder_options, "encoder")
        return self.new_encoder(schema, schema_id, self.references(references), **options)

    def derive_schema(self, arrow_type) -> str:
        """The schema text ``auto.register.schemas`` registers for values of ``arrow_type``, with the format's
        default record name."""
        return self._registered(self.derive)(arrow_type, None)

    def derive_named(self, arrow_type, full_name: str | None = None) -> str:
        """:meth:`derive_schema` with its record (Avro), message (Protobuf: ``package.Message``) or title (JSON
        Schema) named ``full_name``; without one, the format's default."""
        return self._registered(self.derive)(arrow_type, full_name or None)

    def record_name(self, schema, references=(), message_name: str | None = None) -> str | None:
        """The name Confluent's RecordNameStrategy gives ``schema``, None if it has none."""
        return self._registered(self.record_namer)(schema, self.references(references), message_name)


def round_trip(codec: Codec, schema, rows: list, *, writer_schema=None, row_type=None, expected: list | None = None,
               decoder_settings: tuple[dict, ...] = ({},)) -> None:
    """Encodes ``rows`` (of ``row_type``, else of the decoder's type) with ``writer_schema`` (else ``schema``) and
    decodes them back with ``schema``, once per ``decoder_settings`` (attributes set on the decoder first), checking
    that they come back as ``expected`` (else as given): how a warm-up runs a format's kernels once."""
    import pyarrow as pa

    decoder = codec.decoder(schema)
    written = schema if writer_schema is None else writer_schema
    if codec.uses_registry:
        decoder.add_writer_schema(1, written)
    column = pa.array(rows, row_type or decoder.arrow_type)
    values = codec.encoder(written, 1).encode(column).values
    want = column.to_pylist() if expected is None else expected
    for settings in decoder_settings:
        for name, value in settings.items():
            setattr(decoder, name, value)
        result = decoder.decode(codec.frames(values), mode=PERMISSIVE)
        assert result.error_count == 0 and result.values.to_pylist() == want, result.describe(0)
