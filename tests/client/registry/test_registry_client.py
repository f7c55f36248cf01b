"""kwire's registry client against the test registry (a real HTTP server): every operation, references, and the
errors for what does not exist or is refused."""

from __future__ import annotations

import json
import pickle

import pytest

from spark_kwire.client.registry import (IncompatibleSchemaError, InvalidSchemaError, RegistryClient, RegistryError,
                                         Schema, SchemaNotFoundError, SchemaReference, SubjectNotFoundError,
                                         VersionNotFoundError)

USER = {"type": "record", "name": "User", "namespace": "com.acme", "fields": [{"name": "name", "type": "string"}]}
USER_V2 = dict(USER, fields=USER["fields"] + [{"name": "age", "type": "int", "default": 0}])


def kwire(registry, **options) -> RegistryClient:
    return RegistryClient({"url": registry.url, **options})


def test_register_read_by_id_versions_subjects_and_lookup(registry):
    client = kwire(registry)
    first = client.register("users-value", Schema(json.dumps(USER)))
    second = client.register("users-value", Schema(json.dumps(USER_V2)))
    assert client.register("users-value", Schema(json.dumps(USER, indent=2))) == first  # same schema, same id
    by_id = client.schema_by_id(first)
    assert (by_id.schema_id, by_id.schema_type) == (first, "AVRO")
    assert json.loads(by_id.text) == USER
    assert client.schema_type(second) == "AVRO"
    latest = client.latest_version("users-value")
    assert (latest.schema_id, latest.subject, latest.version) == (second, "users-value", 2)
    given = client.version("users-value", 1)
    assert (given.schema_id, given.version, given.text) == (first, 1, by_id.text)
    assert client.versions("users-value") == [1, 2]
    assert client.subjects() == ["users-value"]
    assert client.subjects(prefix="nothing") == []
    found = client.lookup("users-value", Schema(json.dumps(USER)))
    assert (found.schema_id, found.version) == (first, 1)
    assert client.schema_types() == ["AVRO", "PROTOBUF", "JSON"]
    assert client.compatibility() == client.compatibility("users-value") == "BACKWARD"


def test_subject_names_that_need_escaping(registry):
    client = kwire(registry)
    subject = "team/a b%c?d#e-value"
    schema_id = client.register(subject, Schema('"string"'))
    assert client.subjects() == [subject]
    assert client.version(subject, 1).schema_id == schema_id
    assert client.lookup(subject, Schema('"string"')).subject == subject


def test_other_schema_types(registry):
    client = kwire(registry)
    person = {"type": "object", "properties": {"name": {"type": "string"}}}
    json_id = client.register("people-value", Schema(json.dumps(person), "JSON"))
    proto = 'syntax = "proto3";\npackage p;\nmessage M { string s = 1; }\n'
    proto_id = client.register("m-value", Schema(proto, "PROTOBUF"))
    assert client.schema_by_id(json_id).schema_type == "JSON"
    assert client.schema_by_id(proto_id).text == proto
    serialized = client.schema_by_id(proto_id, fmt="serialized").text
    from google.protobuf import descriptor_pb2
    import base64

    descriptor = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(serialized))
    assert [m.name for m in descriptor.message_type] == ["M"]
    assert client.version("m-value", 1, fmt="serialized").text == serialized


def test_errors_name_what_does_not_exist(registry):
    client = kwire(registry)
    client.register("users-value", Schema(json.dumps(USER)))
    with pytest.raises(SubjectNotFoundError) as caught:
        client.latest_version("nobody-value")
    assert caught.value.subject == "nobody-value" and caught.value.error_code == 40401
    assert "'nobody-value'" in str(caught.value) and registry.url in str(caught.value)
    with pytest.raises(VersionNotFoundError) as caught:
        client.version("users-value", 9)
    assert (caught.value.subject, caught.value.version, caught.value.error_code) == ("users-value", 9, 40402)
    with pytest.raises(SchemaNotFoundError) as caught:
        client.schema_by_id(4242)
    assert caught.value.schema_id == 4242 and "4242" in str(caught.value) and caught.value.error_code == 40403
    shipped = pickle.loads(pickle.dumps(caught.value))  # as Spark ships it from an executor
    assert (type(shipped), str(shipped), shipped.schema_id, shipped.status) == \
        (SchemaNotFoundError, str(caught.value), 4242, 404)
    with pytest.raises(SchemaNotFoundError) as caught:
        client.lookup("users-value", Schema('"long"'))
    assert caught.value.subject == "users-value"
    with pytest.raises(InvalidSchemaError) as caught:
        client.register("users-value", Schema('{"type": "record", "name": "R", "fields": [{"name": "x"}]}'))
    assert caught.value.error_code == 42201
    with pytest.raises(IncompatibleSchemaError) as caught:
        client.register("users-value", Schema(json.dumps(dict(USER, fields=[{"name": "id", "type": "long"}]))))
    assert caught.value.status == 409
    for bad in (0, -2, "1", True, 1.0):
        with pytest.raises(ValueError, match="version"):
            client.version("users-value", bad)
    with pytest.raises(ValueError, match="schema id"):
        client.schema_by_id("7")
    assert registry.count("GET", "/schemas/ids/7") == 0  # refused before any request


def _register_avro_chain(registry) -> tuple[RegistryClient, Schema]:
    """money <- address (uses money) ; money <- customer (uses address and money): a diamond."""
    client = kwire(registry)
    money = {"type": "record", "name": "Money", "namespace": "com.acme", "fields": [{"name": "cents", "type": "long"}]}
    address = {"type": "record", "name": "Address", "namespace": "com.acme",
               "fields": [{"name": "city", "type": "string"}, {"name": "rent", "type": "Money"}]}
    customer = {"type": "record", "name": "Customer", "namespace": "com.acme",
                "fields": [{"name": "home", "type": "Address"}, {"name": "balance", "type": "Money"}]}
    client.register("money", Schema(json.dumps(money)))
    money_ref = SchemaReference("com.acme.Money", "money", 1)
    client.register("address", Schema(json.dumps(address), references=(money_ref,)))
    root = Schema(json.dumps(customer), references=(SchemaReference("com.acme.Address", "address", 1), money_ref))
    client.register("customers-value", root)
    return client, root


def test_references_are_resolved_transitively_dependencies_first(registry):
    client, root = _register_avro_chain(registry)
    registered = client.latest_version("customers-value")
    assert registered.schema.references == root.references
    resolved = client.references(registered.schema)
    assert [(name, r.subject, r.version) for name, r in resolved] == [
        ("com.acme.Money", "money", 1), ("com.acme.Address", "address", 1)]
    # what an Avro parser needs: fastavro parses the root with the resolved named types
    import fastavro

    named: dict = {}
    for _, referenced in resolved:
        fastavro.parse_schema(json.loads(referenced.text), named_schemas=named)
    parsed = fastavro.parse_schema(json.loads(registered.text), named_schemas=named)
    assert parsed["name"] == "com.acme.Customer"
    registry.clear_log()
    assert client.references(registered.schema) == resolved  # given versions are cached
    assert registry.requests == []


def test_a_reference_cycle_is_an_error_not_a_hang(registry):
    client, root = _register_avro_chain(registry)
    money_id = client.version("money", 1).schema_id
    registry.store.schemas[money_id].references = [{"name": "com.acme.Customer", "subject": "customers-value",
                                                    "version": 1}]  # no real registry allows this
    with pytest.raises(RegistryError, match="cycle: address v1 -> money v1 -> customers-value v1 -> address v1"):
        client.references(root)


def test_protobuf_imports_resolve_to_their_descriptors(registry, proto_modules):
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    _, order_pb2 = proto_modules
    ProtobufSerializer(order_pb2.Order, SchemaRegistryClient({"url": registry.url}))(
        order_pb2.Order(id="x"), SerializationContext("orders", MessageField.VALUE))
    client = kwire(registry)
    root = client.latest_version("orders-value", fmt="serialized")
    resolved = client.references(root.schema, fmt="serialized")
    assert [name for name, _ in resolved] == ["kwire/regtest/common.proto"]
    # what a Protobuf decoder needs: a pool built from the fetched descriptors decodes the message
    import base64

    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    from google.protobuf import timestamp_pb2

    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(timestamp_pb2.DESCRIPTOR.serialized_pb)
    for name, referenced in resolved + [("root.proto", root)]:
        proto = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(referenced.text))
        proto.name = name
        pool.Add(proto)
    order_class = message_factory.GetMessageClass(pool.FindMessageTypeByName("kwire.regtest.Order"))
    message = order_pb2.Order(id="o-9", tags=["t"])
    message.total.units = 7
    decoded = order_class.FromString(message.SerializeToString())
    assert (decoded.id, list(decoded.tags), decoded.total.units) == ("o-9", ["t"], 7)
