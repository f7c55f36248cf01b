"""Interop with confluent-kafka's JSON Schema serializers through a schema registry (the harness's): what its
``JSONSerializer`` writes decodes to the table's values of the objects it was given; what kwire writes with the
registered schema, its ``JSONDeserializer`` reads back (it validates every value against the schema)."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from harness.schema_registry import SchemaRegistryServer
from spark_kwire.client.registry import RegistryClient
from spark_kwire.formats.payload import payload_format
from tests.formats.json_schema.oracle import SCHEMA, VALUES, compare, spark

CONTEXT = SerializationContext("json-events", MessageField.VALUE)
pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.NonInteractiveExampleWarning")


@pytest.fixture
def registry():
    with SchemaRegistryServer() as server:
        yield server


def test_both_ways_with_confluents_serializers(registry):
    confluent = SchemaRegistryClient({"url": registry.url})
    schema_text = json.dumps(SCHEMA)
    serializer = JSONSerializer(schema_text, confluent)
    objects = [{k: v for k, v in VALUES.example().items() if k != "unknown_property"} for _ in range(50)]
    values = [serializer(o, CONTEXT) for o in objects]
    schema_id = int.from_bytes(values[0][1:5], "big")
    registered = RegistryClient({"url": registry.url}).schema_by_id(schema_id)
    fmt = payload_format("json-schema")
    decoder = fmt.decoder(registered.text)
    assert decoder.missing_schema_ids(pa.array(values)) == [schema_id]
    decoder.add_writer_schema(schema_id, registered.text)
    decoded = decoder.decode(fmt.frames(pa.array(values)), mode="FAILFAST").values
    for o, got in zip(objects, decoded.to_pylist()):
        assert compare(spark(SCHEMA, o), got), (o, got)
    encoded = fmt.encoder(registered.text, schema_id).encode(decoded).values.to_pylist()
    deserializer = JSONDeserializer(schema_text, schema_registry_client=confluent)
    for o, raw in zip(objects, encoded):
        back = deserializer(raw, CONTEXT)  # validated against the schema by confluent-kafka
        assert spark(SCHEMA, back) == spark(SCHEMA, o)
