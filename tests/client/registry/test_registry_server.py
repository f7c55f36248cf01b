"""The test schema registry (harness/schema_registry.py) against a client nobody here wrote: confluent-kafka's
SchemaRegistryClient and its Avro, Protobuf and JSON Schema serializers and deserializers. What they send and
expect back is what a real registry serves; these tests prove the harness serves it."""

from __future__ import annotations

import base64
import json
import struct
import urllib.error
import urllib.request

import pytest
from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from harness.proto_text import compile_proto, identity
from tests.client.registry.conftest import COMMON_PROTO, ORDER_PROTO

USER = {"type": "record", "name": "User", "namespace": "com.acme", "fields": [
    {"name": "name", "type": "string"}, {"name": "age", "type": ["null", "int"], "default": None}]}
ADDRESS = {"type": "record", "name": "Address", "namespace": "com.acme", "fields": [{"name": "city", "type": "string"}]}
CUSTOMER = {"type": "record", "name": "Customer", "namespace": "com.acme", "fields": [
    {"name": "name", "type": "string"}, {"name": "home", "type": "Address"}]}
PERSON_JSON = {"$schema": "http://json-schema.org/draft-07/schema#", "title": "Person", "type": "object",
               "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
               "required": ["name"]}


def sr(registry, **conf) -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": registry.url, **conf})


def value_ctx(topic: str = "users") -> SerializationContext:
    return SerializationContext(topic, MessageField.VALUE)


def raw(registry, method: str, path: str, body=None, headers=None) -> tuple[int, object]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(registry.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/vnd.schemaregistry.v1+json",
                                              **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


# -- the registry API as confluent-kafka's client uses it --------------------------------------------------

def test_ids_are_global_and_the_same_schema_keeps_its_id(registry):
    client = sr(registry)
    first = client.register_schema("users-value", Schema(json.dumps(USER), "AVRO"))
    # whitespace, attribute order and {"type": "string"} for "string" do not make another schema
    reordered = {"fields": [{"type": {"type": "string"}, "name": "name"}, USER["fields"][1]], "name": "User",
                 "type": "record", "namespace": "com.acme"}
    again = client.register_schema("users-value", Schema(json.dumps(reordered, indent=4), "AVRO"))
    elsewhere = sr(registry).register_schema("archive-value", Schema(json.dumps(USER), "AVRO"))
    assert first == again == elsewhere
    assert client.get_versions("users-value") == [1]
    other = client.register_schema("other-value", Schema('"string"', "AVRO"))
    assert other != first
    assert sorted(client.get_subjects()) == ["archive-value", "other-value", "users-value"]
    versions = client.get_schema_versions(first)
    assert sorted((v.subject, v.version) for v in versions) == [("archive-value", 1), ("users-value", 1)]


def test_lookup_latest_and_given_versions(registry):
    client = sr(registry)
    v1 = client.register_schema("users-value", Schema(json.dumps(USER), "AVRO"))
    evolved = dict(USER, fields=USER["fields"] + [{"name": "email", "type": "string", "default": ""}])
    v2 = client.register_schema("users-value", Schema(json.dumps(evolved), "AVRO"))
    fresh = sr(registry)
    latest = fresh.get_latest_version("users-value")
    assert (latest.schema_id, latest.version) == (v2, 2)
    assert json.loads(latest.schema.schema_str) == json.loads(fresh.get_schema(v2).schema_str)
    assert fresh.get_version("users-value", 1).schema_id == v1
    found = fresh.lookup_schema("users-value", Schema(json.dumps(USER), "AVRO"))
    assert (found.schema_id, found.version, found.subject) == (v1, 1, "users-value")
    assert fresh.get_schema_types() == ["AVRO", "PROTOBUF", "JSON"]


def test_documented_error_codes(registry):
    client = sr(registry)
    client.register_schema("users-value", Schema(json.dumps(USER), "AVRO"))
    cases = [
        (lambda: client.get_version("nobody", 1), 404, 40401),
        (lambda: client.get_version("users-value", 7), 404, 40402),
        (lambda: client.get_schema(999), 404, 40403),
        (lambda: client.lookup_schema("users-value", Schema('"long"', "AVRO")), 404, 40403),
        (lambda: client.register_schema("x", Schema('{"type": "record"', "AVRO")), 422, 42201),
        (lambda: client.register_schema("x", Schema('{"type": "nope"}', "AVRO")), 422, 42201),
        (lambda: client.register_schema("x", Schema("{}", "XML")), 422, 42201),
        (lambda: client.set_compatibility(level="SIDEWAYS"), 422, 42203),
    ]
    for call, status, code in cases:
        with pytest.raises(SchemaRegistryError) as caught:
            call()
        assert (caught.value.http_status_code, caught.value.error_code) == (status, code), caught.value
    assert raw(registry, "GET", "/subjects/users-value/versions/0")[1]["error_code"] == 42202


def test_compatibility_is_checked_for_avro(registry):
    client = sr(registry)
    client.register_schema("users-value", Schema(json.dumps(USER), "AVRO"))
    needs_a_value = dict(USER, fields=USER["fields"] + [{"name": "email", "type": "string"}])
    with pytest.raises(SchemaRegistryError) as caught:
        client.register_schema("users-value", Schema(json.dumps(needs_a_value), "AVRO"))
    assert caught.value.http_status_code == 409
    assert not client.test_compatibility("users-value", Schema(json.dumps(needs_a_value), "AVRO"))
    with pytest.raises(SchemaRegistryError) as caught:  # nor may the subject change its schema type
        client.register_schema("users-value", Schema(json.dumps(PERSON_JSON), "JSON"))
    assert caught.value.http_status_code == 409
    client.set_compatibility("users-value", "NONE")
    assert client.get_compatibility("users-value") == "NONE"
    assert client.register_schema("users-value", Schema(json.dumps(needs_a_value), "AVRO"))
    assert client.get_compatibility() == "BACKWARD"


def test_soft_and_permanent_deletes(registry):
    client = sr(registry)
    schema_id = client.register_schema("users-value", Schema(json.dumps(USER), "AVRO"))
    with pytest.raises(SchemaRegistryError) as caught:
        client.delete_subject("users-value", permanent=True)
    assert caught.value.error_code == 40405
    assert client.delete_subject("users-value") == [1]
    assert "users-value" not in client.get_subjects()
    assert "users-value" in client.get_subjects(deleted=True)
    with pytest.raises(SchemaRegistryError) as caught:
        sr(registry).get_version("users-value", 1)
    assert caught.value.error_code == 40401
    assert sr(registry).get_version("users-value", 1, deleted=True).schema_id == schema_id
    assert sr(registry).get_schema(schema_id).schema_str  # a soft-deleted schema is still readable by id
    found = sr(registry).lookup_schema("users-value", Schema(json.dumps(USER), "AVRO"), deleted=True)
    assert found.schema_id == schema_id
    assert client.delete_subject("users-value", permanent=True) == [1]
    with pytest.raises(SchemaRegistryError) as caught:
        sr(registry).get_schema(schema_id)
    assert caught.value.error_code == 40403


def test_avro_named_references(registry):
    client = sr(registry)
    address_id = client.register_schema("com.acme.Address", Schema(json.dumps(ADDRESS), "AVRO"))
    refs = [SchemaReference("com.acme.Address", "com.acme.Address", 1)]
    customer = Schema(json.dumps(CUSTOMER), "AVRO", refs)
    customer_id = client.register_schema("customers-value", customer)
    assert customer_id != address_id
    got = sr(registry).get_schema(customer_id)
    assert [(r.name, r.subject, r.version) for r in got.references] == [("com.acme.Address", "com.acme.Address", 1)]
    with pytest.raises(SchemaRegistryError) as caught:  # without the reference the name is unknown
        client.register_schema("broken-value", Schema(json.dumps(CUSTOMER), "AVRO"))
    assert caught.value.error_code == 42201
    with pytest.raises(SchemaRegistryError) as caught:  # a referenced version cannot be deleted
        client.delete_version("com.acme.Address", 1)
    assert caught.value.error_code == 42206

    serializer = AvroSerializer(client, customer, conf={"auto.register.schemas": False, "use.latest.version": True})
    value = {"name": "Ada", "home": {"city": "Turin"}}
    data = serializer(value, value_ctx("customers"))
    assert data[:5] == b"\x00" + struct.pack(">I", customer_id)
    assert AvroDeserializer(sr(registry))(data, value_ctx("customers")) == value


def test_avro_serializer_round_trip_through_a_fresh_client(registry):
    serializer = AvroSerializer(sr(registry), json.dumps(USER))
    values = [{"name": "a", "age": 1}, {"name": "b", "age": None}]
    encoded = [serializer(v, value_ctx()) for v in values]
    reader_client = sr(registry)  # its own cache: it must fetch the writer's schema by id
    deserializer = AvroDeserializer(reader_client)
    assert [deserializer(e, value_ctx()) for e in encoded] == values
    assert registry.count("GET", "/schemas/ids/1") == 1


def test_serializer_options_latest_version_with_metadata_and_normalize(registry):
    from confluent_kafka.schema_registry.common.schema_registry_client import Metadata, MetadataProperties

    client = sr(registry)
    tagged = Schema(json.dumps(USER), "AVRO", metadata=Metadata(None, MetadataProperties({"owner": "team-a"}), None))
    tagged_id = client.register_schema("users-value", tagged)
    evolved = dict(USER, fields=USER["fields"] + [{"name": "email", "type": "string", "default": ""}])
    latest_id = client.register_schema("users-value", Schema(json.dumps(evolved), "AVRO"))
    value = {"name": "Ada", "age": 3}
    by_metadata = AvroSerializer(sr(registry), None, conf={"auto.register.schemas": False,
                                                           "use.latest.with.metadata": {"owner": "team-a"}})
    assert struct.unpack(">I", by_metadata(value, value_ctx())[1:5])[0] == tagged_id
    latest = AvroSerializer(sr(registry), None, conf={"auto.register.schemas": False, "use.latest.version": True})
    assert struct.unpack(">I", latest(dict(value, email="a@b"), value_ctx())[1:5])[0] == latest_id
    normalized = AvroSerializer(sr(registry), json.dumps(evolved, indent=1), conf={"normalize.schemas": True})
    assert struct.unpack(">I", normalized(dict(value, email="a@b"), value_ctx())[1:5])[0] == latest_id
    assert raw(registry, "GET", "/subjects/users-value/versions?offset=1&limit=1") == (200, [2])
    with pytest.raises(SchemaRegistryError) as caught:
        sr(registry).get_latest_with_metadata("users-value", {"owner": "team-b"})
    assert caught.value.error_code == 40403


def test_json_schema_serializer_round_trip(registry):
    serializer = JSONSerializer(json.dumps(PERSON_JSON), sr(registry))
    data = serializer({"name": "Ada", "age": 36}, value_ctx("people"))
    assert JSONDeserializer(None, schema_registry_client=sr(registry))(data, value_ctx("people")) == \
        {"name": "Ada", "age": 36}
    stored = sr(registry).get_latest_version("people-value")
    assert stored.schema.schema_type == "JSON"
    assert json.loads(stored.schema.schema_str) == PERSON_JSON
    with pytest.raises(SchemaRegistryError) as caught:  # not a valid JSON schema: the meta-schema refuses it
        sr(registry).register_schema("bad", Schema(json.dumps({"type": 12}), "JSON"))
    assert caught.value.error_code == 42201


# -- Protobuf: base64 descriptors (Python serializer) and .proto text (Java serializers) -------------------

def order_message(order_pb2):
    message = order_pb2.Order(id="o-1", tags=["a", "b"], counts={"x": 2}, note="n", card="4111")
    message.total.currency, message.total.units = "EUR", 1250
    message.placed_at.seconds = 1_700_000_000
    return message


def test_protobuf_serializer_registers_descriptors_and_reads_them_back(registry, proto_modules):
    _, order_pb2 = proto_modules
    serializer = ProtobufSerializer(order_pb2.Order, sr(registry))
    message = order_message(order_pb2)
    data = serializer(message, value_ctx("orders"))
    decoded = ProtobufDeserializer(order_pb2.Order, {}, sr(registry))(data, value_ctx("orders"))
    assert decoded == message
    # the import became a reference subject; the well-known type did not
    latest = sr(registry).get_latest_version("orders-value")
    assert [(r.name, r.subject) for r in latest.schema.references] == \
        [("kwire/regtest/common.proto", "kwire/regtest/common.proto")]
    # by default a real registry answers .proto text: protoc compiles it into the file the serializer sent
    text = latest.schema.schema_str
    assert text.startswith('syntax = "proto3";')
    compiled = compile_proto(text, {"kwire/regtest/common.proto": COMMON_PROTO})
    from google.protobuf import descriptor_pb2

    original = descriptor_pb2.FileDescriptorProto.FromString(order_pb2.DESCRIPTOR.serialized_pb)
    assert identity(compiled) == identity(original)
    serialized = sr(registry).get_latest_version("orders-value", fmt="serialized").schema.schema_str
    assert base64.b64decode(serialized) == order_pb2.DESCRIPTOR.serialized_pb


def test_protobuf_text_registered_as_java_does_is_read_by_the_python_deserializer(registry, proto_modules):
    _, order_pb2 = proto_modules
    client = sr(registry)
    common_id = client.register_schema("kwire/regtest/common.proto", Schema(COMMON_PROTO, "PROTOBUF"))
    refs = [SchemaReference("kwire/regtest/common.proto", "kwire/regtest/common.proto", 1)]
    order_id = client.register_schema("orders-value", Schema(ORDER_PROTO, "PROTOBUF", refs))
    assert sr(registry).get_schema(order_id).schema_str == ORDER_PROTO  # text stays as registered
    message = order_message(order_pb2)
    framed = b"\x00" + struct.pack(">I", order_id) + b"\x00" + message.SerializeToString()  # index [0]: Order
    reader = sr(registry)
    registry.clear_log()
    assert ProtobufDeserializer(order_pb2.Order, {}, reader)(framed, value_ctx("orders")) == message
    asked = [r.query.get("format") for r in registry.requests if r.path == f"/schemas/ids/{order_id}"]
    assert asked == ["serialized"]
    # the same file sent as a descriptor by the Python serializer is the same schema: same ids, no new versions
    serializer = ProtobufSerializer(order_pb2.Order, sr(registry))
    data = serializer(message, value_ctx("orders"))
    assert struct.unpack(">I", data[1:5])[0] == order_id
    assert sr(registry).get_versions("orders-value") == [1]
    assert sr(registry).get_versions("kwire/regtest/common.proto") == [1]
    assert common_id != order_id


def test_protobuf_text_that_protoc_refuses_is_an_invalid_schema(registry):
    status, body = raw(registry, "POST", "/subjects/bad/versions",
                       {"schemaType": "PROTOBUF", "schema": 'syntax = "proto3"; message M { strin x = 1; }'})
    assert (status, body["error_code"]) == (422, 42201)
    assert "strin" in body["message"]
    status, body = raw(registry, "POST", "/subjects/bad/versions",
                       {"schemaType": "PROTOBUF", "schema": ORDER_PROTO})  # its import has no reference
    assert (status, body["error_code"]) == (422, 42201)


# -- the harness's knobs -----------------------------------------------------------------------------------

def test_faults_and_the_request_log(registry):
    registry.respond_next(1, 503)
    assert raw(registry, "GET", "/subjects")[0] == 503
    assert raw(registry, "GET", "/subjects") == (200, [])
    registry.refuse_next(1)
    with pytest.raises((urllib.error.URLError, ConnectionError)):
        raw(registry, "GET", "/subjects")
    registry.respond_next(1, 429, headers={"Retry-After": "1"})
    assert raw(registry, "GET", "/subjects")[0] == 429
    assert registry.count("GET", "/subjects") == 4
    assert [r.status for r in registry.requests] == [503, 200, None, 429]


def test_basic_auth_bearer_tokens_and_denied_principals():
    from harness.schema_registry import SchemaRegistryServer

    with SchemaRegistryServer(users={"alice": "pw"}, bearer_tokens={"tok": "svc"}, denied={"mallory"}) as server:
        server.users["mallory"] = "pw2"
        assert raw(server, "GET", "/subjects")[1]["error_code"] == 401
        basic = base64.b64encode(b"alice:pw").decode()
        assert raw(server, "GET", "/subjects", headers={"Authorization": f"Basic {basic}"}) == (200, [])
        assert raw(server, "GET", "/subjects", headers={"Authorization": "Bearer tok"}) == (200, [])
        assert raw(server, "GET", "/subjects", headers={"Authorization": "Bearer nope"})[0] == 401
        denied = base64.b64encode(b"mallory:pw2").decode()
        assert raw(server, "GET", "/subjects", headers={"Authorization": f"Basic {denied}"})[1]["error_code"] == 40301
        assert [r.principal for r in server.requests] == [None, "alice", "svc", None, "mallory"]
        assert all("pw" not in json.dumps(r.headers) for r in server.requests)
        confluent = SchemaRegistryClient({"url": server.url, "basic.auth.user.info": "alice:pw"})
        assert confluent.register_schema("s", Schema('"int"', "AVRO")) == 1


def test_https_with_the_harness_certificates(certs):
    from harness.schema_registry import SchemaRegistryServer

    with SchemaRegistryServer(certs=certs) as server:
        assert server.url.startswith("https://")
        client = SchemaRegistryClient({"url": server.url, "ssl.ca.location": str(certs.ca_cert)})
        assert client.register_schema("s", Schema('"int"', "AVRO")) == 1
        untrusting = SchemaRegistryClient({"url": server.url, "ssl.ca.location": str(certs.other_ca_cert),
                                           "max.retries": 0})
        with pytest.raises(Exception, match="(?i)certificate"):
            untrusting.get_subjects()
