"""The options of typed reads and writes, checked where they are parsed (no broker, no registry, no Spark): every
option refused where it does not apply, saying where it belongs, unknown ones with a "did you mean", unknown
formats refused saying which are accepted, secrets masked; and a few through Spark, to see the messages reach
the user at load()."""

from __future__ import annotations

import pickle

import pytest

from spark_kwire.spark.errors import KwireOptionError
from spark_kwire.spark.options.parsing import ReadOptions, WriteOptions
from spark_kwire.formats.payload import payload_format

BASE = {"kafka.bootstrap.servers": "localhost:9092", "subscribe": "orders"}
REGISTRY = {"schema.registry.url": "http://registry:8081"}
AVRO = {**BASE, **REGISTRY, "valueFormat": "avro"}


def read(streaming=False, **options):
    return ReadOptions.parse({k.lower(): v for k, v in options.items()}, streaming=streaming)


def write(**options):
    given = {"kafka.bootstrap.servers": "localhost:9092", "topic": "orders", **options}
    return WriteOptions.parse({k.lower(): v for k, v in given.items()})


def refused(match: str, function=read, **options):
    with pytest.raises(KwireOptionError, match=match) as info:
        function(**options)
    return str(info.value)


def test_binary_stays_the_default_and_typed_options_need_a_typed_format():
    assert read(**BASE).typed is None and write().typed is None
    assert read(**BASE, valueFormat="binary", keyFormat="BINARY").typed is None
    for name in ("valueSchema", "valueSchemaVersion", "valueRecordName", "value.subject.name.strategy"):
        text = refused("applies only when 'valueFormat'", **BASE, **{name: "x"})
        assert f"'{name}'" in text
    refused("'keySchema' applies only when 'keyFormat'", **AVRO, keySchema="\"string\"")
    for name in ("schema.registry.url", "mode", "schema.registry.basic.auth.user.info"):
        refused("applies only to typed keys or values", **BASE, **{name: "x"})


def test_typed_sides_and_their_defaults():
    typed = read(**AVRO, keyFormat="Avro").typed
    assert [s.side for s in typed.sides] == ["value", "key"]
    value = typed.side("value")
    assert (value.format, value.strategy, value.version, value.schema) == ("avro", "TopicNameStrategy", None, None)
    assert typed.mode == "FAILFAST" and typed.corrupt_column is None
    assert read(**AVRO, valueSchemaVersion="3").typed.side("value").version == 3
    assert read(**AVRO, valueSchemaVersion="latest").typed.side("value").version is None
    refused("'valueSchemaVersion' must be a registered version number", **AVRO, valueSchemaVersion="0")
    refused("at most one of 'valueSchema'", **AVRO, valueSchema='"string"', valueSchemaVersion="2")


def test_subject_name_strategies_by_every_name_confluent_uses():
    for name, expected in [("RecordNameStrategy", "RecordNameStrategy"),
                           ("io.confluent.kafka.serializers.subject.TopicRecordNameStrategy", "TopicRecordNameStrategy"),
                           ("topic_subject_name_strategy", "TopicNameStrategy")]:
        typed = read(**AVRO, **{"value.subject.name.strategy": name}).typed
        assert typed.side("value").strategy == expected
    text = refused("must name a subject name strategy", **AVRO, **{"value.subject.name.strategy": "Nope"})
    assert "RecordNameStrategy" in text


def test_every_typed_format_is_accepted_and_others_are_refused_by_name():
    for name, registry_type in (("avro", "AVRO"), ("protobuf", "PROTOBUF"), ("json-schema", "JSON")):
        assert payload_format(name).schema_type == registry_type
    value = read(**BASE, **REGISTRY, valueFormat="protobuf", valueMessageName="shop.Order").typed.side("value")
    assert (value.format, value.message_name) == ("protobuf", "shop.Order")
    by_record = read(**BASE, **REGISTRY, valueFormat="protobuf", valueRecordName="shop.Order",
                     **{"value.subject.name.strategy": "RecordNameStrategy"}).typed.side("value")
    assert by_record.message_name == "shop.Order"  # the record strategy's record is the message
    assert read(**BASE, **REGISTRY, valueFormat="JSON_Schema").typed.side("value").format == "json-schema"
    assert read(**BASE, **REGISTRY, keyFormat="jsonschema").typed.side("key").format == "json-schema"
    text = refused("must be one of binary, avro, protobuf, json-schema, json", **BASE, valueFormat="parquet")
    assert "json is plain JSON text, json-schema Confluent's framed JSON Schema" in text
    assert read(**BASE, valueFormat="JSON").typed.side("value").format == "json"  # plain JSON needs no registry
    assert read(**BASE, keyFormat="json").typed.side("key").format == "json"
    refused("'valueMessageName' names a Protobuf message; valueFormat is 'avro'", **AVRO, valueMessageName="Order")
    refused("'keyMessageName' names a Protobuf message; keyFormat is 'json-schema'", **BASE, **REGISTRY,
            keyFormat="json-schema", keyMessageName="Order")
    refused("'valueMessageName' applies only when 'valueFormat'", **BASE, valueMessageName="Order")


def test_an_inline_schema_that_needs_references_says_so():
    from spark_kwire.spark.errors import KwireSchemaError
    from spark_kwire.spark.typed.schemas import resolve_read

    for fmt, schema in (("protobuf", 'syntax = "proto3"; import "shop/money.proto"; message A { shop.Money m = 1; }'),
                        ("json-schema", '{"type": "object", "properties": {"m": {"$ref": "money.json"}}}')):
        typed = read(**BASE, valueFormat=fmt, valueSchema=schema).typed
        with pytest.raises(KwireSchemaError) as info:
            resolve_read(typed, [])
        text = str(info.value)
        assert "option 'valueSchema'" in text and "has no references" in text and "subject's registered" in text
        assert ("shop/money.proto" if fmt == "protobuf" else "money.json") in text


def test_a_registry_or_an_inline_schema_is_needed():
    refused(r"valueFormat=avro needs 'schema.registry.url'", **BASE, valueFormat="avro")
    typed = read(**BASE, valueFormat="avro", valueSchema='"string"').typed
    assert typed.registry is None and typed.side("value").schema == '"string"'
    refused("a write frames every value with its schema's registry id", write, valueFormat="avro",
            valueSchema='"string"')


def test_registry_options_are_the_registry_clients_with_their_errors():
    typed = read(**{**AVRO, "schema.registry.url": "http://a:8081,http://b:8081", "schema.registry.timeout": "3"}).typed
    assert typed.registry.urls == ("http://a:8081", "http://b:8081") and typed.registry.timeout_s == 3
    text = refused("schema.registry.timout", **AVRO, **{"schema.registry.timout": "3"})
    assert "did you mean 'timeout'" in text
    refused("schema.registry.url", **{**AVRO, "schema.registry.url": "ftp://x"})
    assert "Did you mean 'schema.registry.url'" in refused("Unknown option", **BASE, **{"schema.registy.url": "x"})


def test_secrets_stay_masked_in_reprs_errors_and_pickles():
    secret = "s3cr3t-user-info-password"
    options = read(**AVRO, **{"schema.registry.basic.auth.user.info": f"user:{secret}"})
    assert secret not in repr(options) and secret not in repr(options.typed)
    assert secret.encode() not in pickle.dumps(options)
    assert pickle.loads(pickle.dumps(options)).typed.registry == options.typed.registry
    text = refused("bearer", **AVRO, **{"schema.registry.basic.auth.user.info": f"user:{secret}",
                                       "schema.registry.bearer.auth.credentials.source": "STATIC_TOKEN",
                                       "schema.registry.bearer.auth.token": secret})
    assert secret not in text


def test_read_mode_and_corrupt_record_column():
    typed = read(**AVRO, mode="permissive").typed
    assert (typed.mode, typed.corrupt_column) == ("PERMISSIVE", "_corrupt_record")
    assert read(**AVRO, mode="PERMISSIVE", columnNameOfCorruptRecord="bad").typed.corrupt_column == "bad"
    refused("only mode=PERMISSIVE keeps", **AVRO, columnNameOfCorruptRecord="bad")
    refused("must name a new column", **AVRO, mode="PERMISSIVE", columnNameOfCorruptRecord="Offset")
    text = refused("FAILFAST .* or PERMISSIVE", **AVRO, mode="DROPMALFORMED")
    assert "never drops records silently" in text


def test_options_misplaced_between_reads_and_writes_say_where_they_belong():
    text = refused("does not apply to a kwire write", write, valueFormat="avro", mode="PERMISSIVE", **REGISTRY)
    assert "a read" in text
    refused("does not apply to a kwire batch read", **AVRO, **{"auto.register.schemas": "true"})
    refused("does not apply to a kwire streaming read", streaming=True, **AVRO, **{"use.latest.version": "false"})
    text = refused("(?i)Unknown option 'valueFromat'", **BASE, valueFromat="avro")
    assert "Did you mean 'valueFormat'" in text


def test_write_registration_rules():
    typed = write(valueFormat="avro", **REGISTRY).typed
    assert (typed.auto_register, typed.use_latest) == (False, True)
    typed = write(valueFormat="avro", **REGISTRY, **{"auto.register.schemas": "true"}).typed
    assert (typed.auto_register, typed.use_latest) == (True, False)
    refused("cannot be combined with auto.register.schemas=true", write, valueFormat="avro", valueSchemaVersion="2",
            **REGISTRY, **{"auto.register.schemas": "true"})
    refused("keep one", write, valueFormat="avro", **REGISTRY,
            **{"auto.register.schemas": "true", "use.latest.version": "true"})
    refused("'auto.register.schemas' must be 'true' or 'false'", write, valueFormat="avro", **REGISTRY,
            **{"auto.register.schemas": "yes"})


def test_typed_option_errors_reach_the_user_at_load(spark):
    with pytest.raises(Exception, match="needs 'schema.registry.url'"):
        spark.read.format("kwire").options(**BASE, valueFormat="avro").load()
    with pytest.raises(Exception, match="Did you mean 'valueFormat'"):
        spark.read.format("kwire").options(**BASE, valueformatt="avro").load()


def test_subject_options_refused_where_no_subject_is_looked_up():
    inline = {**AVRO, "valueSchema": '"string"'}
    refused("gives the reader schema inline", **inline, valueRecordName="a.B")
    refused("gives the reader schema inline", **inline, **{"value.subject.name.strategy": "RecordNameStrategy"})
    refused("names the subject under RecordNameStrategy", **AVRO, valueRecordName="a.B")
    assert read(**AVRO, valueRecordName="a.B", **{"value.subject.name.strategy": "RecordNameStrategy"}).typed
    # writes: a record name names a derived schema's record, or the subject of a record strategy
    assert write(valueFormat="avro", valueRecordName="a.B", **REGISTRY, **{"auto.register.schemas": "true"}).typed
    refused("here neither applies", write, valueFormat="avro", valueRecordName="a.B", **REGISTRY)
    refused("already names the schema", write, valueFormat="avro", valueSchemaVersion="2", **REGISTRY,
            **{"use.latest.version": "false"})
