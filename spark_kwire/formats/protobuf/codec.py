"""Protobuf, described for the format registry (``formats/payload.py``): Confluent-framed with message indexes, the
registry's ``PROTOBUF`` schemas (one message of a file chosen by name), spark-protobuf's types, a proto3 message
derived for auto-registration, its wire-format, one-pass, two-step and encoding kernels."""

from __future__ import annotations

from ..contract.codec import Codec, Framing, round_trip

_PACKAGE = "spark_kwire.formats.protobuf"


def _decoder(reader_schema, references, message_name: str | None = None, options=None):
    from .decoder import ProtobufDecoder

    return ProtobufDecoder(reader_schema, references, message_name=message_name, options=options)


def _encoder(schema, schema_id: int, references, message_name: str | None = None):
    from .encoder import ProtobufEncoder

    return ProtobufEncoder(schema, schema_id, message_name=message_name, references=references)


def _derive(arrow_type, full_name: str | None) -> str:
    """A proto3 message for ``arrow_type``, named ``full_name`` (``package.Message``)."""
    from .derive import protobuf_schema_for

    if not full_name:
        return protobuf_schema_for(arrow_type)
    package, _, name = full_name.rpartition(".")
    return protobuf_schema_for(arrow_type, record_name=name, package=package)


def _record_name(schema, references: list, message_name: str | None = None) -> str:
    """The message's full name: ``message_name``, or the file's first message."""
    from .schemas import load_schema, select_message

    return select_message(load_schema(schema, references), message_name).full_name


_SAMPLE = """syntax = "proto3";
import "google/protobuf/timestamp.proto";
message Warm {
  enum Kind { A = 0; B = 1; }
  int64 l = 1; optional string s = 2; repeated double d = 3; map<string, int32> m = 4; Kind k = 5;
  google.protobuf.Timestamp t = 6; Inner inner = 7; sint32 z = 8; fixed64 f = 9; bytes b = 10; bool ok = 11;
  message Inner { string name = 1; repeated Inner2 more = 2; }
  message Inner2 { float x = 1; }
  oneof choice { string c1 = 12; uint32 c2 = 13; }
}
"""


def _warm_up() -> None:
    import datetime

    when = datetime.datetime(2024, 5, 1, 12, tzinfo=datetime.timezone.utc)
    row = {"l": -3, "s": "x", "d": [1.5], "m": [("k", 2)], "k": "B", "t": when,
           "inner": {"name": "n", "more": [{"x": 0.5}]}, "z": -4, "f": 5, "b": b"\x01", "ok": True, "c1": None, "c2": 7}
    # the one-pass decoder, then the two-step one
    round_trip(CODEC, _SAMPLE, [row, None], decoder_settings=({"two_steps_only": False}, {"two_steps_only": True}))


CODEC = Codec(
    name="protobuf", aliases=("proto",), schema_type="PROTOBUF", framing=Framing.CONFLUENT_MESSAGE_INDEXES,
    new_decoder=_decoder, new_encoder=_encoder, decoder_options=("message_name", "options"),
    encoder_options=("message_name",), derive=_derive, record_namer=_record_name,
    kernels=(f"{_PACKAGE}.kernels.wire", f"{_PACKAGE}.kernels.decode", f"{_PACKAGE}.kernels.fast",
             f"{_PACKAGE}.kernels.encode"),
    constants=(f"{_PACKAGE}.opcodes",), warm_up=_warm_up,
)
