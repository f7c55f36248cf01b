"""The payload formats by name: the registry the data source and the format layer's own machinery (the kernel list,
the warm-up) read, built from the description each format package exports (``<format>/codec.py``:
:class:`~.contract.codec.Codec`). Adding a format is adding its package and its line below.

    fmt = payload_format("protobuf")                 # "avro" | "protobuf" | "json-schema" | "json", any case; aliases
    decoder = fmt.decoder(schema_text, references, message_name="Order")
    frames = fmt.frames(values)                      # the Confluent framing, with message indexes for Protobuf
    result = decoder.decode(frames, mode="PERMISSIVE")
    encoder = fmt.encoder(schema_text, schema_id, references)
    text = fmt.derive_schema(arrow_struct_type)      # what auto.register.schemas registers (fmt.schema_type)
    text = fmt.derive_named(arrow_struct_type, "shop.Order")  # the same, its record / message named so
    fmt.record_name(schema_text, references)         # "shop.Order": what RecordNameStrategy names subjects after
    fmt.uses_registry, fmt.capabilities.infers_schema ...      # what the Spark layer asks instead of the name

Plain JSON (``json``) has no framing and no registry: its decoder takes a Spark schema (DDL or StructType JSON)
and ``json_options`` (``json.JsonOptions``), decodes the values themselves (``frames`` returns them unchanged) and has
no writer schemas to add; its encoder writes ``to_json``'s text, unframed (schema id and schema unused).
"""

from __future__ import annotations

from .avro.codec import CODEC as AVRO
from .contract.codec import Codec
from .json.codec import CODEC as JSON
from .json_schema.codec import CODEC as JSON_SCHEMA
from .protobuf.codec import CODEC as PROTOBUF

__all__ = ["CODECS", "FORMATS", "PayloadFormat", "payload_format"]

CODECS: tuple[Codec, ...] = (AVRO, PROTOBUF, JSON_SCHEMA, JSON)  # listed, and their kernels loaded, in this order
FORMATS = tuple(codec.name for codec in CODECS)
PayloadFormat = Codec  # (the name callers know a format's entry by)
_BY_NAME = {spelling: codec for codec in CODECS for spelling in (codec.name, *codec.aliases)}


def payload_format(name: str) -> Codec:
    """The format named ``name`` (any case, or an alias such as ``proto``); a ``ValueError`` listing them
    otherwise."""
    found = _BY_NAME.get(str(name).strip().lower())
    if found is None:
        raise ValueError(f"unknown payload format {name!r}; accepted: {', '.join(FORMATS)}")
    return found
