"""kwire's registry client next to confluent-kafka's: what one registers the other reads with the same id and
text; and records written by confluent-kafka's serializers through a real broker are decoded with the schemas
kwire's client fetches (decoded by fastavro, protobuf and json, not by kwire)."""

from __future__ import annotations

import base64
import io
import json
import struct

import fastavro
from confluent_kafka.schema_registry import Schema as ConfluentSchema
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from spark_kwire.client.registry import RegistryClient, Schema, SchemaReference, topic_name_strategy
from tests.client.conftest import rdkafka_consume

TRADE = {"type": "record", "name": "Trade", "namespace": "com.acme.markets", "fields": [
    {"name": "symbol", "type": "string"}, {"name": "price", "type": "double"},
    {"name": "qty", "type": ["null", "long"], "default": None},
    {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}}]}


def both(registry) -> tuple[RegistryClient, SchemaRegistryClient]:
    return RegistryClient({"url": registry.url}), SchemaRegistryClient({"url": registry.url})


def test_registered_by_confluent_read_by_kwire(registry, proto_modules):
    kwire, confluent = both(registry)
    avro_id = confluent.register_schema("trades-value", ConfluentSchema(json.dumps(TRADE, indent=2), "AVRO"))
    _, order_pb2 = proto_modules
    ProtobufSerializer(order_pb2.Order, confluent)(order_pb2.Order(id="x"),
                                                   SerializationContext("orders", MessageField.VALUE))
    proto_id = confluent.get_latest_version("orders-value").schema_id
    for schema_id in (avro_id, proto_id):
        theirs = SchemaRegistryClient({"url": registry.url}).get_schema(schema_id)
        ours = kwire.schema_by_id(schema_id)
        assert (ours.schema_id, ours.text, ours.schema_type) == (schema_id, theirs.schema_str, theirs.schema_type)
        assert [(r.name, r.subject, r.version) for r in ours.schema.references] == \
            [(r.name, r.subject, r.version) for r in theirs.references]
        theirs_serialized = SchemaRegistryClient({"url": registry.url}).get_schema(schema_id, fmt="serialized")
        assert kwire.schema_by_id(schema_id, fmt="serialized").text == theirs_serialized.schema_str
    latest_theirs = confluent.get_latest_version("trades-value")
    latest_ours = kwire.latest_version("trades-value")
    assert (latest_ours.schema_id, latest_ours.version, latest_ours.guid) == \
        (latest_theirs.schema_id, latest_theirs.version, latest_theirs.guid)


def test_registered_by_kwire_read_and_used_by_confluent(registry):
    kwire, confluent = both(registry)
    address = {"type": "record", "name": "Address", "namespace": "com.acme", "fields": [{"name": "city", "type": "string"}]}
    kwire.register("com.acme.Address", Schema(json.dumps(address)))
    holder = {"type": "record", "name": "Holder", "namespace": "com.acme", "fields": [{"name": "a", "type": "Address"}]}
    refs = (SchemaReference("com.acme.Address", "com.acme.Address", 1),)
    holder_id = kwire.register("holders-value", Schema(json.dumps(holder), references=refs))
    theirs = confluent.get_schema(holder_id)
    assert theirs.schema_str == kwire.schema_by_id(holder_id).text
    assert [(r.name, r.subject, r.version) for r in theirs.references] == [("com.acme.Address", "com.acme.Address", 1)]
    # confluent's serializer finds the schema kwire registered instead of registering its own
    serializer = AvroSerializer(confluent, ConfluentSchema(json.dumps(holder), "AVRO",
                                                           [r for r in theirs.references]),
                                conf={"auto.register.schemas": False})
    data = serializer({"a": {"city": "Oslo"}}, SerializationContext("holders", MessageField.VALUE))
    assert struct.unpack(">bI", data[:5]) == (0, holder_id)
    assert kwire.lookup("holders-value", Schema(json.dumps(holder), references=refs)).schema_id == holder_id
    assert confluent.get_versions("holders-value") == [1]


def test_avro_records_through_a_real_broker_decoded_with_schemas_kwire_fetched(registry, bootstrap, create_topic,
                                                                              produce, topic_name):
    topic = create_topic(topic_name)
    serializer = AvroSerializer(SchemaRegistryClient({"url": registry.url}), json.dumps(TRADE))
    trades = [{"symbol": f"S{i}", "price": i * 1.5, "qty": None if i % 3 else i, "at": 1_700_000_000_000 + i}
              for i in range(50)]
    context = SerializationContext(topic, MessageField.VALUE)
    produce(topic, [(None, serializer(t, context)) for t in trades])
    messages = rdkafka_consume(bootstrap, topic, len(trades))
    kwire = RegistryClient({"url": registry.url})
    subject = topic_name_strategy(topic, False)
    decoded = []
    for message in messages:
        magic, schema_id = struct.unpack(">bI", message.value()[:5])
        assert magic == 0
        writer = fastavro.parse_schema(json.loads(kwire.schema_by_id(schema_id).text))
        decoded.append(fastavro.schemaless_reader(io.BytesIO(message.value()[5:]), writer))
    for value in decoded:
        value["at"] = int(value["at"].timestamp() * 1000)
    assert decoded == trades
    assert kwire.latest_version(subject).schema_id == schema_id
    assert registry.count("GET", f"/schemas/ids/{schema_id}") == 1  # 50 records, one fetch
    # and confluent's deserializer reads the same bytes the same way
    deserializer = AvroDeserializer(SchemaRegistryClient({"url": registry.url}))
    assert deserializer(messages[0].value(), context)["symbol"] == trades[0]["symbol"]


def test_protobuf_and_json_records_through_a_real_broker(registry, bootstrap, create_topic, produce, topic_name,
                                                         proto_modules):
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, timestamp_pb2

    _, order_pb2 = proto_modules
    confluent = SchemaRegistryClient({"url": registry.url})
    proto_topic, json_topic = create_topic(topic_name + "-pb"), create_topic(topic_name + "-js")
    orders = [order_pb2.Order(id=f"o{i}", tags=["t"] * i) for i in range(5)]
    serializer = ProtobufSerializer(order_pb2.Order, confluent)
    produce(proto_topic, [(None, serializer(o, SerializationContext(proto_topic, MessageField.VALUE)))
                          for o in orders])
    person = {"type": "object", "properties": {"name": {"type": "string"}, "n": {"type": "integer"}}}
    people = [{"name": f"p{i}", "n": i} for i in range(5)]
    json_serializer = JSONSerializer(json.dumps(person), confluent)
    produce(json_topic, [(None, json_serializer(p, SerializationContext(json_topic, MessageField.VALUE)))
                         for p in people])

    kwire = RegistryClient({"url": registry.url})
    got_orders = []
    for message in rdkafka_consume(bootstrap, proto_topic, len(orders)):
        schema_id = struct.unpack(">I", message.value()[1:5])[0]
        assert message.value()[5] == 0  # message index [0] written as one zero byte
        root = kwire.schema_by_id(schema_id, fmt="serialized")
        pool = descriptor_pool.DescriptorPool()
        pool.AddSerializedFile(timestamp_pb2.DESCRIPTOR.serialized_pb)
        for name, referenced in kwire.references(root.schema, fmt="serialized") + [("root.proto", root)]:
            proto = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(referenced.text))
            proto.name = name
            pool.Add(proto)
        cls = message_factory.GetMessageClass(pool.FindMessageTypeByName("kwire.regtest.Order"))
        got_orders.append(order_pb2.Order.FromString(cls.FromString(message.value()[6:]).SerializeToString()))
    assert got_orders == orders
    got_people = []
    for message in rdkafka_consume(bootstrap, json_topic, len(people)):
        schema_id = struct.unpack(">I", message.value()[1:5])[0]
        assert kwire.schema_type(schema_id) == "JSON"
        got_people.append(json.loads(message.value()[5:]))
    assert got_people == people
