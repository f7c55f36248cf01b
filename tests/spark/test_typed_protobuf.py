"""Typed Protobuf through the data source (valueFormat=protobuf) against real parts: confluent-kafka's
ProtobufSerializer writes through a real broker and the harness registry (base64 descriptors, references for
imports, message indexes), kwire reads through Spark; the oracle is Google's protobuf runtime parsing the same
payload bytes after the framing with the same descriptor, mapped to Spark values by spark-protobuf's documented
rules (tests/formats/protobuf/oracle.py). Writes go the other way: kwire writes, confluent-kafka's
ProtobufDeserializer reads back."""

from __future__ import annotations

import datetime as dt
import importlib
import subprocess
import sys
import types

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import timestamp_pb2

from harness.proto_text import well_known_include_dir
from spark_kwire import admin
from tests.formats.protobuf import protos
from tests.formats.protobuf.conftest import order_versions, pb  # noqa: F401 - the compiled test protos
from tests.formats.protobuf.oracle import all_types, normalize, spark_value
from tests.spark.typed_fixtures import (consume_deserialized, drawn, kwire_reader, produce_raw,  # noqa: F401
                                        produce_serialized, protobuf_deserializer_of_latest, registry, unique)

pytestmark = pytest.mark.timeout(900)
CONF = {"use.deprecated.format": False}
UTC = dt.timezone.utc

MONEY = """syntax = "proto3";
package kwire.spk;
message Money { string currency = 1; int64 units = 2; int32 nanos = 3; }
"""
PAYMENT = """syntax = "proto3";
package kwire.spk;
import "kwire/spk/money.proto";
import "google/protobuf/timestamp.proto";
message PaymentKey { int64 id = 1; }
message Payment {
  enum State { STATE_UNSET = 0; OPEN = 1; SETTLED = 2; }
  int64 id = 1;
  Money amount = 2;
  State state = 3;
  google.protobuf.Timestamp at = 4;
  map<string, string> labels = 5;
  repeated Money fees = 6;
  optional string memo = 7;
}
"""


@pytest.fixture(scope="module")
def payments(tmp_path_factory):
    """The generated classes of PAYMENT (Payment, PaymentKey) and of MONEY, which it imports (a registry
    reference)."""
    root = tmp_path_factory.mktemp("spk")
    files = {"kwire/spk/money.proto": MONEY, "kwire/spk/payment.proto": PAYMENT}
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{root}", f"-I{well_known_include_dir()}",
                    f"--python_out={root}", *files], check=True, capture_output=True)
    (root / "kwire/spk/__init__.py").touch()  # kwire/ stays a namespace package (see tests/formats/protobuf)
    sys.path.insert(0, str(root))
    try:
        payment, money = (importlib.import_module(f"kwire.spk.{m}_pb2") for m in ("payment", "money"))
        yield types.SimpleNamespace(Payment=payment.Payment, PaymentKey=payment.PaymentKey, Money=money.Money)
    finally:
        sys.path.remove(str(root))


def message_bytes(payload: bytes) -> bytes:
    """The Protobuf message of a Confluent-framed payload: after the magic byte, the schema id and the message
    indexes (a zig-zag varint count, then that many zig-zag varints; a count of 0 means [0])."""
    assert payload[0] == 0
    position = 5

    def varint() -> int:
        nonlocal position
        shift = result = 0
        while True:
            byte = payload[position]
            position += 1
            result |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return (result >> 1) ^ -(result & 1)

    for _ in range(varint()):
        varint()
    return payload[position:]


def typed_rows(df, column: str = "value") -> dict:
    """{key: the column's value} read through Arrow (Spark's toArrow), maps as dicts."""
    table = df.select("key", column).toArrow()
    t = table.schema.field(column).type
    return {k: normalize(v, t) for k, v in zip(table.column("key").to_pylist(), table.column(column).to_pylist())}


def test_every_type_reads_as_googles_runtime_parses_it(spark, bootstrap, create_topic, registry, pb):  # noqa: F811
    topic = create_topic(unique("pb-all"), partitions=2)
    messages = drawn(all_types(pb.all), 30) + [pb.all.AllTypes(), None]  # an empty message, and a tombstone
    serializer = ProtobufSerializer(pb.all.AllTypes, SchemaRegistryClient({"url": registry.url}), CONF)
    keys = [str(i).encode() for i in range(len(messages))]
    payloads = produce_serialized(bootstrap, topic, serializer, messages, keys=keys, partitions=2)
    df = kwire_reader(spark, bootstrap, topic, registry.url, valueFormat="protobuf").load()
    kept = [f.name for f in pb.all.AllTypes.DESCRIPTOR.fields if f.name != "nothing"]  # Empty: dropped
    assert df.schema["value"].dataType.fieldNames() == kept
    expected = {k: None if p is None else spark_value(pb.all.AllTypes.FromString(message_bytes(p)))
                for k, p in zip(keys, payloads)}
    assert typed_rows(df) == expected
    assert expected[b"0"] is not None and expected[keys[-1]] is None


def test_a_topic_written_under_three_versions_reads_by_field_number(spark, bootstrap, create_topic, registry,
                                                                    order_versions):  # noqa: F811
    topic = create_topic(unique("pb-evolving"), partitions=2)
    v1, v2, v3 = order_versions
    client = SchemaRegistryClient({"url": registry.url})
    messages = [v1(id=i, customer=f"c{i}", quantity=-i, tags=["a"] * (i % 3)) for i in range(8)] + \
        [v2(id=10 + i, customer="d", quantity=2**40 + i, total=i / 4, address=v2.Address(city=f"city{i}"))
         for i in range(8)] + \
        [v3(id=20 + i, buyer="e", quantity=i, total=1.5, address=v3.Address(city="x", zip=str(i)),
            note=None if i % 2 else f"n{i}") for i in range(8)]
    payloads = []
    for version, cls in enumerate((v1, v2, v3)):
        batch = [m for m in messages if type(m) is cls]
        keys = [str(m.id).encode() for m in batch]
        payloads += zip(keys, produce_serialized(bootstrap, topic, ProtobufSerializer(cls, client, CONF), batch,
                                                 keys=keys, partitions=2))
    assert len(client.get_versions(f"{topic}-value")) == 3
    latest = kwire_reader(spark, bootstrap, topic, registry.url, valueFormat="protobuf").load()
    assert typed_rows(latest) == {k: spark_value(v3.FromString(message_bytes(p))) for k, p in payloads}
    # the reader schema given inline (.proto text): each record still read by its writer schema's field numbers
    inline = kwire_reader(spark, bootstrap, topic, registry.url, valueFormat="protobuf",
                          valueSchema=protos.ORDER_V2).load()
    assert typed_rows(inline) == {k: spark_value(v2.FromString(message_bytes(p))) for k, p in payloads}
    first = kwire_reader(spark, bootstrap, topic, registry.url, valueFormat="protobuf", valueSchemaVersion=1).load()
    assert first.schema["value"].dataType.fieldNames() == ["id", "customer", "quantity", "tags"]
    assert typed_rows(first) == {k: spark_value(v1.FromString(message_bytes(p))) for k, p in payloads}


def test_a_writer_schema_that_cannot_be_read_as_the_readers_is_named(spark, bootstrap, create_topic, registry,
                                                                     order_versions):  # noqa: F811
    topic = create_topic(unique("pb-incompatible"), partitions=1)
    client = SchemaRegistryClient({"url": registry.url})
    v3 = order_versions[2]
    good_id = client.register_schema(f"{topic}-value", Schema(protos.ORDER_V3, "PROTOBUF"))
    broken_id = client.register_schema(unique("pb-elsewhere"), Schema(protos.ORDER_BROKEN, "PROTOBUF"))
    def framed(schema_id: int, message: bytes) -> bytes:  # magic byte, schema id, message indexes [0]
        return b"\x00" + schema_id.to_bytes(4, "big") + b"\x00" + message

    good = framed(good_id, v3(id=1, buyer="b").SerializeToString())
    broken = framed(broken_id, bytes.fromhex("0802") + b"\x11" + bytes(8))  # id 2, customer (a double) 0.0
    produce_raw(bootstrap, topic, [(b"good", good), (b"broken", broken)])
    df = kwire_reader(spark, bootstrap, topic, registry.url, valueFormat="protobuf", mode="PERMISSIVE").load()
    rows = {r.key: r for r in df.select("key", "value", "_corrupt_record").collect()}
    assert rows[b"good"].value.asDict() == spark_value(v3(id=1, buyer="b")) and rows[b"good"]._corrupt_record is None
    assert rows[b"broken"].value is None and bytes(rows[b"broken"]._corrupt_record.value) == broken
    error = rows[b"broken"]._corrupt_record.error
    assert f"writer schema id {broken_id} cannot be read" in error and "buyer" in error, error


def test_imports_as_references_messages_by_name_keys_and_permissive(spark, bootstrap, create_topic, registry,
                                                                   payments):
    topic = create_topic(unique("pb-payments"), partitions=1)
    client = SchemaRegistryClient({"url": registry.url})
    values = [payments.Payment(id=i, amount=payments.Money(currency="EUR", units=i * 100, nanos=i),
                               state=i % 3, at=timestamp_pb2.Timestamp(seconds=1_700_000_000 + i, nanos=1000 * i),
                               labels={"k": str(i)} if i % 2 else {}, fees=[payments.Money(units=1)] * (i % 2),
                               memo=f"m{i}" if i % 3 else None) for i in range(12)]
    keys = [payments.PaymentKey(id=i) for i in range(12)]
    payloads = produce_serialized(bootstrap, topic, ProtobufSerializer(payments.Payment, client, CONF), values,
                                  keys=keys, key_serializer=ProtobufSerializer(payments.PaymentKey, client, CONF))
    assert payloads[0][5] == 2  # message index [1]: Payment is the file's second message
    registered = client.get_latest_version(f"{topic}-value").schema
    assert [r.name for r in registered.references] == ["kwire/spk/money.proto"]
    df = kwire_reader(spark, bootstrap, topic, registry.url, valueFormat="protobuf", keyFormat="protobuf",
                      valueMessageName="kwire.spk.Payment", keyMessageName="PaymentKey").load()
    rows = df.selectExpr("key.id AS k", "value").toArrow()
    t = rows.schema.field("value").type
    got = [(k, normalize(v, t)) for k, v in zip(rows.column("k").to_pylist(), rows.column("value").to_pylist())]
    # (key 0 is PaymentKey{id: 0}: proto3 does not write a zero, and spark-protobuf shows it as null)
    assert got == [(i or None, spark_value(payments.Payment.FromString(message_bytes(p))))
                   for i, p in enumerate(payloads)]
    assert got[4][1]["at"] == dt.datetime(2023, 11, 14, 22, 13, 24, 4, tzinfo=UTC) and got[4][1]["state"] == "OPEN"
    # Without valueMessageName the reader is the file's first message (PaymentKey): the records name another one.
    with pytest.raises(Exception) as info:
        kwire_reader(spark, bootstrap, topic, registry.url, valueFormat="protobuf").load().collect()
    text = str(info.value)
    assert "offset 0" in text and "message kwire.spk.PaymentKey (valueMessageName chooses another)" in text, text
    permissive = kwire_reader(spark, bootstrap, topic, registry.url, valueFormat="protobuf",
                              mode="PERMISSIVE").load()
    bad = permissive.orderBy("offset").select("value", "_corrupt_record.value", "_corrupt_record.error").collect()
    assert [r[0] for r in bad] == [None] * 12
    assert [bytes(r[1]) for r in bad] == payloads  # the raw bytes kept as they were written
    assert all("another message type than the one read" in r.error for r in bad), bad[0].error


def test_writes_read_back_by_confluent_kafka(spark, bootstrap, create_topic, registry, payments):
    client = SchemaRegistryClient({"url": registry.url})
    # 1. the subject's latest schema (registered by confluent-kafka, with its reference), key and value typed
    topic = create_topic(unique("pb-write-latest"), partitions=2)
    # (serializing registers the subjects' schemas; nothing is produced)
    ProtobufSerializer(payments.Payment, client, CONF)(payments.Payment(id=1),
                                                       SerializationContext(topic, MessageField.VALUE))
    ProtobufSerializer(payments.PaymentKey, client, CONF)(payments.PaymentKey(id=1),
                                                          SerializationContext(topic, MessageField.KEY))
    rows = [(i, "USD", 10 * i + 1, i + 1, ["OPEN", "SETTLED"][i % 2],
             dt.datetime(2025, 3, 1, tzinfo=UTC) + dt.timedelta(microseconds=7 * i + 1),
             {"a": str(i)}, [("EUR", 1 + i, 0)], None if i % 2 else f"memo{i}") for i in range(20)]
    df = spark.createDataFrame(rows, "id bigint, cur string, units bigint, nanos int, state string, at timestamp, "
                                     "labels map<string,string>, fees array<struct<currency:string,units:bigint,"
                                     "nanos:int>>, memo string")
    value = df.selectExpr("struct(id) AS key", "struct(id, struct(cur AS currency, units, nanos) AS amount, state, "
                          "at, labels, fees, memo) AS value")
    options = {"valueFormat": "protobuf", "keyFormat": "protobuf", "valueMessageName": "Payment",
               "keyMessageName": "kwire.spk.PaymentKey"}
    _writer(value, bootstrap, topic, registry.url, **options).save()
    got = consume_deserialized(bootstrap, topic, ProtobufDeserializer(payments.Payment, CONF, client), 20,
                               key_deserializer=ProtobufDeserializer(payments.PaymentKey, CONF, client), partitions=2)
    expected = {r[0]: {"id": r[0] or None, "amount": {"currency": "USD", "units": r[2], "nanos": r[3]},
                       "state": r[4], "at": r[5], "labels": r[6], "fees": [{"currency": "EUR", "units": 1 + r[0],
                                                                             "nanos": None}], "memo": r[8]}
                for r in rows}
    assert {k.id: spark_value(v) for k, v in got} == expected
    # 2. auto.register.schemas: a `.proto` derived from the DataFrame, which protoc compiles and confluent reads
    derived_topic = create_topic(unique("pb-write-auto"), partitions=1)
    plain = df.selectExpr("struct(id, cur, units, nanos, state, at, labels, fees, memo) AS value")
    _writer(plain, bootstrap, derived_topic, registry.url, valueFormat="protobuf",
            **{"auto.register.schemas": "true"}).save()
    cls, deserializer, text = protobuf_deserializer_of_latest(client, f"{derived_topic}-value")
    assert "message TopLevelRecord" in text
    back = consume_deserialized(bootstrap, derived_topic, deserializer, 20)
    names = ["id", "cur", "units", "nanos", "state", "at", "labels", "fees", "memo"]
    assert sorted((spark_value(v) for _k, v in back), key=lambda v: v["id"]) == \
        [{**dict(zip(names, r)), "fees": [{"currency": "EUR", "units": 1 + r[0], "nanos": 0}]} for r in rows]
    # 3. a DataFrame that does not fit the subject's schema fails before anything is written, naming the field
    misfit_topic = create_topic(unique("pb-write-misfit"), partitions=1)
    ProtobufSerializer(payments.Payment, client, CONF)(payments.Payment(id=1),
                                                       SerializationContext(misfit_topic, MessageField.VALUE))
    bad = df.selectExpr("struct(id, struct(cur AS currency, CAST(units AS STRING) AS units) AS amount) AS value")
    with pytest.raises(Exception) as info:
        _writer(bad, bootstrap, misfit_topic, registry.url, valueFormat="protobuf", valueMessageName="Payment").save()
    text = str(info.value)
    assert "does not fit" in text and "amount.units" in text and "Nothing was written" in text, text
    assert admin.latest_offsets(bootstrap, misfit_topic) == {0: 0}


def test_record_name_strategy_names_subjects_after_the_message(spark, bootstrap, create_topic, registry, payments):
    from confluent_kafka.schema_registry import record_subject_name_strategy

    topic = create_topic(unique("pb-record-strategy"), partitions=1)
    client = SchemaRegistryClient({"url": registry.url})
    serializer = ProtobufSerializer(payments.Payment, client,
                                    {**CONF, "subject.name.strategy": record_subject_name_strategy})
    produce_serialized(bootstrap, topic, serializer, [payments.Payment(id=i + 1, memo="r") for i in range(5)])
    assert "kwire.spk.Payment" in client.get_subjects()  # Confluent's record name: the message's full name
    strategy = {"value.subject.name.strategy": "RecordNameStrategy", "valueRecordName": "kwire.spk.Payment"}
    df = kwire_reader(spark, bootstrap, topic, registry.url, valueFormat="protobuf", **strategy).load()
    assert [(r.id, r.memo) for r in df.select("value.id", "value.memo").collect()] == [(i + 1, "r") for i in range(5)]
    # a write with an inline schema under TopicRecordNameStrategy: the subject is <topic>-<its message's full name>
    out = create_topic(unique("pb-record-write"), partitions=1)
    _writer(spark.range(1, 4).selectExpr("struct(id, 'c' AS customer) AS value"), bootstrap, out, registry.url,
            valueFormat="protobuf", valueSchema=protos.ORDER_V1, **{"auto.register.schemas": "true",
                                                                    "value.subject.name.strategy":
                                                                        "TopicRecordNameStrategy"}).save()
    assert f"{out}-kwire.evo.Order" in client.get_subjects()
    cls, deserializer, _text = protobuf_deserializer_of_latest(client, f"{out}-kwire.evo.Order")
    got = consume_deserialized(bootstrap, out, deserializer, 3)
    assert sorted(spark_value(v)["id"] for _k, v in got) == [1, 2, 3]
    assert {spark_value(v)["customer"] for _k, v in got} == {"c"}


def test_a_protobuf_stream(spark, bootstrap, create_topic, registry, payments, tmp_path):
    topic = create_topic(unique("pb-stream"), partitions=2)
    client = SchemaRegistryClient({"url": registry.url})
    serializer = ProtobufSerializer(payments.Payment, client, CONF)
    produce_serialized(bootstrap, topic, serializer, [payments.Payment(id=i, memo="a") for i in range(1, 31)],
                       partitions=2)
    name = f"pb_stream_{unique('q').split('-')[1]}"
    stream = kwire_reader(spark, bootstrap, topic, registry.url, stream=True, valueFormat="protobuf",
                          valueMessageName="Payment", maxOffsetsPerTrigger=20).load()
    query = (stream.selectExpr("value.id", "value.memo").writeStream.format("memory").queryName(name)
             .option("checkpointLocation", str(tmp_path / "cp")).trigger(processingTime="200 milliseconds").start())
    try:
        query.processAllAvailable()
        produce_serialized(bootstrap, topic, serializer, [payments.Payment(id=i) for i in range(31, 41)],
                           partitions=2)
        query.processAllAvailable()
        assert query.exception() is None
        rows = spark.sql(f"SELECT id, memo FROM {name}").collect()
    finally:
        query.stop()
    assert sorted((r.id, r.memo) for r in rows) == [(i, "a" if i <= 30 else None) for i in range(1, 41)]


def _writer(df, bootstrap, topic, registry_url, **options):
    writer = df.write.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("topic", topic)
    for key, value in {"schema.registry.url": registry_url, **options}.items():
        writer = writer.option(key, str(value))
    return writer.mode("append")
