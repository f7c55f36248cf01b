"""Plain JSON, described for the format registry (``formats/payload.py``): values of JSON text, unframed, no
registry; read with a Spark schema (DDL or StructType JSON) as ``from_json`` reads it, or with one inferred as
``spark.read.json`` infers it; written as ``to_json`` writes a column's own type. Its kernels: the JSON text ones
both JSON formats share (``json_text``), then its lexer, dates and timestamps, patterns, JSON regenerated, each Spark
type's converter and its decode interpreter."""

from __future__ import annotations

from .. import json_text
from ..contract.codec import Capabilities, Codec, Framing, round_trip
from ..contract.results import PERMISSIVE
from .options import FROM_JSON_OPTIONS, INFERENCE_OPTIONS, WRITE_OPTIONS

_PACKAGE = "spark_kwire.formats.json"


def _decoder(schema, references, json_options=None):
    """A decoder of ``schema`` (Spark DDL or StructType JSON); plain JSON has no references."""
    from .decoder import JsonDecoder

    return JsonDecoder(schema, json_options)


def _encoder(schema, schema_id: int, references, json_options=None):
    """An encoder writing ``to_json``'s text of the column it is given (no schema, no framing)."""
    from .encoder import JsonEncoder

    return JsonEncoder(json_options)


_SAMPLE = ("id BIGINT, n INT, name STRING, score DOUBLE, ratio FLOAT, amount DECIMAL(12,2), ok BOOLEAN, day DATE, "
           "at TIMESTAMP, tags ARRAY<STRING>, attrs MAP<STRING, BIGINT>, inner STRUCT<x: DOUBLE, b: BINARY>")


def _warm_up() -> None:
    import datetime
    import decimal

    row = {"id": 1, "n": -2, "name": "é\n\"", "score": 0.1, "ratio": 0.5, "amount": decimal.Decimal("1.25"), "ok": True,
           "day": datetime.date(2024, 2, 29), "at": datetime.datetime(2024, 5, 1, 12, tzinfo=datetime.timezone.utc),
           "tags": ["a", None], "attrs": [("k", 2)], "inner": {"x": 1e300, "b": b"\x00"}}
    round_trip(CODEC, _SAMPLE, [row, None])


CODEC = Codec(
    name="json", schema_type=None, framing=Framing.NONE,
    new_decoder=_decoder, new_encoder=_encoder, decoder_options=("json_options",), encoder_options=("json_options",),
    kernels=(*json_text.KERNELS, *(f"{_PACKAGE}.kernels.{name}" for name in (
        "lexer", "times", "pattern", "regenerate", "values", "decode"))),
    constants=(*json_text.CONSTANTS, f"{_PACKAGE}.program"), warm_up=_warm_up,
    capabilities=Capabilities(
        spark_schema=True, infers_schema=True, evolves_schema=True, writes_column_type=True, partial_rows=True,
        default_mode=PERMISSIVE,
        read_options=FROM_JSON_OPTIONS, inference_options=INFERENCE_OPTIONS, write_options=WRITE_OPTIONS),
)
