"""What the typed-data Spark tests share: one schema registry per test process (the harness's, serving Confluent's
REST API), confluent-kafka's Avro serializer and deserializer as the independent writer and reader, and Spark's
own ``from_avro`` (spark-avro, loaded by the session's ``spark`` fixture) over Spark's built-in ``kafka`` source
as the oracle of typed reads.

Import the fixtures into a test module (``from tests.spark.typed_fixtures import registry  # noqa: F401``). The
registry is one server for the whole process, never a new one per module: Spark's Python workers keep kwire's
decoders and registry caches per registry URL, and a later server on a recycled port would hand out the same
schema ids for other schemas.
"""

from __future__ import annotations

import atexit
import decimal
import json
import threading
import time
import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from harness.schema_registry import SchemaRegistryServer

_server: SchemaRegistryServer | None = None
_lock = threading.Lock()


def the_registry() -> SchemaRegistryServer:
    """The process's test registry, started on first use."""
    global _server
    with _lock:
        if _server is None:
            _server = SchemaRegistryServer().start()
            atexit.register(_server.stop)
        return _server


@pytest.fixture(scope="module")
def registry() -> SchemaRegistryServer:
    server = the_registry()
    server.clear_faults()
    return server


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def serializer(registry: str | dict, schema, *, conf: dict | None = None) -> AvroSerializer:
    """confluent-kafka's AvroSerializer (registers the schema under the subject of its strategy); ``registry``: its
    URL or a SchemaRegistryClient configuration."""
    text = schema if isinstance(schema, str) else json.dumps(schema)
    client_conf = registry if isinstance(registry, dict) else {"url": registry}
    return AvroSerializer(SchemaRegistryClient(client_conf), text, conf=conf)


def produce_avro(bootstrap: str, topic: str, registry_url: str | dict, schema, values, *, keys=None, key_schema=None,
                 partitions: int | None = None, serializer_conf: dict | None = None) -> None:
    """Write ``values`` (and ``keys``) with confluent-kafka's AvroSerializer (a None value is a tombstone); record
    i goes to partition i % partitions when ``partitions`` is given. Waits for every delivery."""
    value_ser = serializer(registry_url, schema, conf=serializer_conf)
    key_ser = serializer(registry_url, key_schema, conf=serializer_conf) if key_schema is not None else None
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    errors = []
    for i, value in enumerate(values):
        payload = value_ser(value, SerializationContext(topic, MessageField.VALUE)) if value is not None else None
        key = None
        if keys is not None:
            key = key_ser(keys[i], SerializationContext(topic, MessageField.KEY)) if key_ser else keys[i]
        extra = {"partition": i % partitions} if partitions else {}
        producer.produce(topic, value=payload, key=key, on_delivery=lambda err, msg: err and errors.append(err),
                         **extra)
        producer.poll(0)
    assert producer.flush(60) == 0
    assert not errors, errors


def produce_serialized(bootstrap: str, topic: str, value_serializer, values, *, keys=None, key_serializer=None,
                       partitions: int | None = None) -> list[bytes | None]:
    """Write ``values`` with any of confluent-kafka's serializers (``serializer(value, context)``; a None value is a
    tombstone), keys as they are or through ``key_serializer``; record i goes to partition i % partitions when
    ``partitions`` is given. Returns the value payloads written, in order."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    errors, payloads = [], []
    for i, value in enumerate(values):
        payload = value_serializer(value, SerializationContext(topic, MessageField.VALUE)) \
            if value is not None else None
        payloads.append(payload)
        key = None if keys is None else keys[i]
        if key_serializer is not None and key is not None:
            key = key_serializer(key, SerializationContext(topic, MessageField.KEY))
        extra = {"partition": i % partitions} if partitions else {}
        producer.produce(topic, value=payload, key=key, on_delivery=lambda err, msg: err and errors.append(err),
                         **extra)
        producer.poll(0)
    assert producer.flush(60) == 0
    assert not errors, errors
    return payloads


def consume_deserialized(bootstrap: str, topic: str, value_deserializer, expected: int, *, key_deserializer=None,
                         partitions: int = 1, isolation: str = "read_uncommitted", timeout_s: float = 60) -> list:
    """[(key, value)] of ``topic`` read by confluent-kafka's consumer through its deserializers, once ``expected``
    records arrived (and two more seconds of reading found no more)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("typed-check"),
                         "enable.auto.commit": False, "isolation.level": isolation})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    got, settle = [], None
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            for message in consumer.consume(500, timeout=0.5):
                assert message.error() is None, message.error()
                value, key = message.value(), message.key()
                if value is not None:
                    value = value_deserializer(value, SerializationContext(topic, MessageField.VALUE))
                if key_deserializer is not None and key is not None:
                    key = key_deserializer(key, SerializationContext(topic, MessageField.KEY))
                got.append((key, value))
            if len(got) >= expected:
                settle = settle or time.monotonic() + 2
                if time.monotonic() > settle:
                    break
    finally:
        consumer.close()
    return got


def protobuf_deserializer_of_latest(client: SchemaRegistryClient, subject: str):
    """(message class, confluent-kafka's ProtobufDeserializer of it, `.proto` text) for the first message of a
    subject's latest `.proto` text (as kwire registers derived schemas), compiled by protoc (not by kwire) into a
    descriptor pool of its own."""
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer
    from google.protobuf import descriptor_pb2, descriptor_pool, duration_pb2, message_factory, timestamp_pb2

    from harness.proto_text import compile_proto

    text = client.get_latest_version(subject).schema.schema_str
    pool = descriptor_pool.DescriptorPool()
    for known in (timestamp_pb2, duration_pb2):
        pool.Add(descriptor_pb2.FileDescriptorProto.FromString(known.DESCRIPTOR.serialized_pb))
    pool.Add(compile_proto(text, name="derived.proto"))
    file = pool.FindFileByName("derived.proto")
    cls = message_factory.GetMessageClass(next(iter(file.message_types_by_name.values())))
    return cls, ProtobufDeserializer(cls, {"use.deprecated.format": False}, client), text


def produce_raw(bootstrap: str, topic: str, records) -> None:
    """Write (key, value[, partition]) byte records as they are."""
    producer = Producer({"bootstrap.servers": bootstrap})
    for key, value, *rest in records:
        producer.produce(topic, value=value, key=key, **({"partition": rest[0]} if rest else {}))
    assert producer.flush(60) == 0


def consume_avro(bootstrap: str, topic: str, registry_url: str, expected: int, *, partitions: int = 1,
                 typed_key: bool = False, isolation: str = "read_uncommitted", timeout_s: float = 60):
    """[(key, value)] of ``topic`` read by confluent-kafka's consumer and AvroDeserializer (see
    :func:`consume_deserialized`)."""
    client = SchemaRegistryClient({"url": registry_url})
    return consume_deserialized(bootstrap, topic, AvroDeserializer(client), expected,
                                key_deserializer=AvroDeserializer(client) if typed_key else None,
                                partitions=partitions, isolation=isolation, timeout_s=timeout_s)


def drawn(strategy, count: int) -> list:
    """``count`` values drawn from a hypothesis strategy (one fixed draw: each Spark read costs seconds)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st

    found = []

    @settings(max_examples=1, derandomize=True, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(st.lists(strategy, min_size=count, max_size=count))
    def draw(values):
        found[:] = values

    draw()
    return found


def kwire_reader(spark, bootstrap: str, topic: str, registry_url: str | None = None, *, stream: bool = False,
                 **options):
    """A kwire reader of ``topic`` from the earliest offsets, with valueFormat=avro unless options say otherwise."""
    reader = (spark.readStream if stream else spark.read).format("kwire")
    settings = {"kafka.bootstrap.servers": bootstrap, "subscribe": topic, "startingOffsets": "earliest",
                "valueFormat": "avro", **({"schema.registry.url": registry_url} if registry_url else {}), **options}
    for key, value in settings.items():
        if value is not None:
            reader = reader.option(key, str(value))
    return reader


def oracle_frame(spark, bootstrap: str, topic: str, schemas_by_id: dict[int, str], reader_schema: str | None = None):
    """Spark's built-in kafka source and spark-avro's from_avro: the value of each record decoded with the writer
    schema of its id (``schemas_by_id``), resolved to ``reader_schema`` when given (the ``avroSchema`` option),
    as a DataFrame of (partition, offset, value). Tombstones give a null value."""
    from pyspark.sql.avro.functions import from_avro
    from pyspark.sql import functions as F

    raw = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
           .option("startingOffsets", "earliest").load()
           .select("partition", "offset", "value",
                   F.expr("CAST(conv(hex(substring(value, 2, 4)), 16, 10) AS INT)").alias("schema_id")))
    options = {"avroSchema": reader_schema} if reader_schema else {}
    parts = []
    for schema_id, writer in sorted(schemas_by_id.items()):
        part = raw.where((F.col("schema_id") == schema_id) | F.col("value").isNull()) if len(schemas_by_id) > 1 \
            else raw
        parts.append(part.select("partition", "offset",
                                 from_avro(F.expr("substring(value, 6)"), writer, options).alias("value")))
    result = parts[0]
    for part in parts[1:]:
        result = result.unionByName(part)
    return result.dropDuplicates(["partition", "offset"])


def rows_as_json(df, column: str = "value") -> list:
    """[(partition, offset, parsed JSON of the column)] ordered by partition and offset: Spark's own rendering of
    the values (maps compare as dicts, decimals exactly)."""
    from pyspark.sql import functions as F

    rows = (df.select("partition", "offset", F.to_json(F.struct(F.col(column))).alias("j"))
            .orderBy("partition", "offset").collect())
    return [(r.partition, r.offset, json.loads(r.j, parse_float=decimal.Decimal)) for r in rows]
