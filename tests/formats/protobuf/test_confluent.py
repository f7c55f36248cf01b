"""Interop with confluent-kafka's Protobuf serializers through a schema registry (the harness's, serving Confluent's
REST API): what its ``ProtobufSerializer`` writes (base64 descriptors registered, references for imports, message
indexes), kwire decodes to what spark-protobuf shows of the message; what kwire writes with the registered schema,
its ``ProtobufDeserializer`` reads back equal."""

from __future__ import annotations

import pyarrow as pa
import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from harness.schema_registry import SchemaRegistryServer
from spark_kwire.client.registry import RegistryClient
from spark_kwire.formats.payload import payload_format
from tests.formats.protobuf.oracle import all_types, normalize, spark_value

CONTEXT = SerializationContext("pb-events", MessageField.VALUE)
# sample messages come from the hypothesis strategy's examples (the registry fixture is per test)
pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.NonInteractiveExampleWarning")


@pytest.fixture
def registry():
    with SchemaRegistryServer() as server:
        yield server


def kwire_decoder(client: RegistryClient, schema_id: int, message: str):
    """The decoder the data source would make: the writer schema by id in its serialized form, with references."""
    registered = client.schema_by_id(schema_id, fmt="serialized")
    references = [(name, ref.text) for name, ref in client.references(registered.schema, fmt="serialized")]
    decoder = payload_format("protobuf").decoder(registered.text, references, message_name=message)
    decoder.add_writer_schema(schema_id, registered.text, references=references)
    return decoder


def test_confluent_serializer_output_decodes_as_spark_protobuf_shows_it(registry, pb):
    confluent = SchemaRegistryClient({"url": registry.url})
    serializer = ProtobufSerializer(pb.all.AllTypes, confluent, {"use.deprecated.format": False})
    messages = [all_types(pb.all).example() for _ in range(40)] + [pb.all.AllTypes()]
    values = [serializer(m, CONTEXT) for m in messages]
    schema_id = int.from_bytes(values[0][1:5], "big")
    decoder = kwire_decoder(RegistryClient({"url": registry.url}), schema_id, "kwire.pbtest.AllTypes")
    result = decoder.decode(pa.array(values, pa.binary()), mode="FAILFAST")
    assert [normalize(v, decoder.arrow_type) for v in result.values.to_pylist()] == [spark_value(m) for m in messages]
    # a message that is not the file's first: Confluent writes its index ([1]); kwire reads it as that message
    other = ProtobufSerializer(pb.all.Other, confluent, {"use.deprecated.format": False})(pb.all.Other(name="o"),
                                                                                         SerializationContext(
                                                                                             "pb-other",
                                                                                             MessageField.VALUE))
    assert other[5:6] == b"\x02"  # one index: 1 (zig-zag)
    other_id = int.from_bytes(other[1:5], "big")
    d = kwire_decoder(RegistryClient({"url": registry.url}), other_id, "kwire.pbtest.Other")
    assert d.decode(pa.array([other])).values.to_pylist() == [{"name": "o"}]


def test_kwire_output_reads_back_with_confluents_deserializer(registry, pb):
    confluent = SchemaRegistryClient({"url": registry.url})
    first = ProtobufSerializer(pb.all.AllTypes, confluent, {"use.deprecated.format": False})(pb.all.AllTypes(), CONTEXT)
    schema_id = int.from_bytes(first[1:5], "big")
    client = RegistryClient({"url": registry.url})
    decoder = kwire_decoder(client, schema_id, "kwire.pbtest.AllTypes")
    messages = [all_types(pb.all).example() for _ in range(40)]
    serializer = ProtobufSerializer(pb.all.AllTypes, confluent, {"use.deprecated.format": False})
    decoded = decoder.decode(pa.array([serializer(m, CONTEXT) for m in messages])).values
    registered = client.schema_by_id(schema_id, fmt="serialized")
    references = [(name, ref.text) for name, ref in client.references(registered.schema, fmt="serialized")]
    encoder = payload_format("protobuf").encoder(registered.text, schema_id, references,
                                                 message_name="kwire.pbtest.AllTypes")
    framed = encoder.encode(decoded).values.to_pylist()
    deserializer = ProtobufDeserializer(pb.all.AllTypes, {"use.deprecated.format": False}, confluent)
    for original, raw in zip(messages, framed):
        back = deserializer(raw, CONTEXT)
        assert spark_value(back) == spark_value(original)
