"""What a typed read does with what it cannot read, through Spark: records that do not decode (FAILFAST names the
record, PERMISSIVE keeps it aside), schema ids the registry does not know, a registry that is down or refuses the
credentials, a subject that does not exist; each a clear error within a bounded time, never a hang, and secrets
never shown."""

from __future__ import annotations

import json
import struct
import time
import uuid

import pytest

from harness import free_port
from harness.schema_registry import SchemaRegistryServer
from tests.spark.typed_fixtures import kwire_reader, produce_avro, produce_raw, registry, unique  # noqa: F401

pytestmark = pytest.mark.timeout(600)

SCHEMA = {"type": "record", "name": "Reading", "namespace": "sensors", "fields": [
    {"name": "sensor", "type": "string"}, {"name": "celsius", "type": "double"},
    {"name": "tags", "type": {"type": "array", "items": "string"}}]}
GOOD = [{"sensor": f"s{i}", "celsius": i / 4, "tags": ["t"] * (i % 3)} for i in range(6)]


@pytest.fixture(scope="module")
def mixed_topic(bootstrap, create_topic, registry):
    """A topic holding, in partition 0: 3 good records, then a value with the wrong magic byte, one too short for
    the header, one framed with the subject's id but truncated, one framed with an id the registry does not know,
    a tombstone, and 3 more good records. Returns (topic, schema id, offsets of the bad records)."""
    topic = create_topic(unique("typed-mixed"), partitions=1)
    produce_avro(bootstrap, topic, registry.url, SCHEMA, GOOD[:3])
    from confluent_kafka.schema_registry import SchemaRegistryClient

    schema_id = SchemaRegistryClient({"url": registry.url}).get_latest_version(f"{topic}-value").schema_id
    unknown_id = 900_000 + schema_id
    produce_raw(bootstrap, topic, [
        (b"k-magic", b"\x01\x00\x00\x00\x01\x04ab"),
        (b"k-short", b"\x00\x00\x01"),
        (b"k-truncated", b"\x00" + struct.pack(">I", schema_id) + b"\x10abc"),
        (b"k-unknown", b"\x00" + struct.pack(">I", unknown_id) + b"\x02a\x00\x00\x00\x00\x00\x00\x00\x00\x00"),
        (b"k-tombstone", None),
    ])
    produce_avro(bootstrap, topic, registry.url, SCHEMA, GOOD[3:])
    return topic, schema_id, unknown_id


def test_permissive_gives_null_values_and_keeps_the_raw_records(spark, bootstrap, registry, mixed_topic):
    topic, schema_id, unknown_id = mixed_topic
    df = kwire_reader(spark, bootstrap, topic, registry.url, mode="PERMISSIVE").load()
    assert df.columns[-1] == "_corrupt_record"
    assert df.schema["_corrupt_record"].dataType.simpleString() == "struct<key:binary,value:binary,error:string>"
    by_offset = df.orderBy("offset").collect()
    assert len(by_offset) == 11
    rows = {bytes(r.key): r for r in by_offset if r.key is not None}
    good = [r for r in by_offset if r.value is not None]
    assert [r.value.sensor for r in good] == [g["sensor"] for g in GOOD]
    assert all(r._corrupt_record is None for r in good)
    assert rows[b"k-tombstone"].value is None and rows[b"k-tombstone"]._corrupt_record is None
    expected_reason = {b"k-magic": "magic", b"k-short": "short", b"k-truncated": "",
                       b"k-unknown": f"schema id {unknown_id} not found"}
    for key, reason in expected_reason.items():
        row = rows[key]
        assert row.value is None
        assert bytes(row._corrupt_record.key) == key
        assert row._corrupt_record.value is not None and len(row._corrupt_record.value) > 0
        assert row._corrupt_record.error.startswith("value: ") and reason in row._corrupt_record.error, \
            row._corrupt_record.error
    assert "40403" in rows[b"k-unknown"]._corrupt_record.error
    # columnNameOfCorruptRecord names the column, as in Spark's own readers
    renamed = kwire_reader(spark, bootstrap, topic, registry.url, mode="permissive",
                           columnNameOfCorruptRecord="bad").load()
    assert renamed.columns[-1] == "bad" and renamed.where("bad IS NOT NULL").count() == 4


def test_failfast_names_topic_partition_offset_and_schema_id(spark, bootstrap, registry, mixed_topic):
    topic, schema_id, unknown_id = mixed_topic
    started = time.monotonic()
    with pytest.raises(Exception) as info:
        kwire_reader(spark, bootstrap, topic, registry.url).load().collect()
    assert time.monotonic() - started < 120
    text = str(info.value)
    assert "KwireRecordDecodeError" in text
    assert f"topic '{topic}' partition 0 offset 3" in text  # the first bad record: the wrong magic byte
    assert "mode=PERMISSIVE" in text
    # A record framed with an id the registry does not have: the id, the record and the registry's answer.
    with pytest.raises(Exception) as info:
        kwire_reader(spark, bootstrap, topic, registry.url, startingOffsets=json.dumps({topic: {"0": 6}}),
                     endingOffsets=json.dumps({topic: {"0": 7}})).load().collect()
    text = str(info.value)
    assert f"offset 6 (schema id {unknown_id})" in text and "40403" in text and registry.url in text
    # A truncated payload: the field being read.
    with pytest.raises(Exception) as info:
        kwire_reader(spark, bootstrap, topic, registry.url, startingOffsets=json.dumps({topic: {"0": 5}}),
                     endingOffsets=json.dumps({topic: {"0": 6}})).load().collect()
    text = str(info.value)
    assert f"offset 5 (schema id {schema_id})" in text and "in field" in text


def test_unknown_subject_is_refused_at_load(spark, bootstrap, create_topic, registry):
    topic = create_topic(unique("typed-no-subject"), partitions=1)
    with pytest.raises(Exception) as info:
        kwire_reader(spark, bootstrap, topic, registry.url).load()
    text = str(info.value)
    assert f"'{topic}-value'" in text and "40401" in text and "TopicNameStrategy" in text


def test_a_registry_that_is_down_fails_within_its_timeout_naming_the_urls(spark, bootstrap, create_topic):
    topic = create_topic(unique("typed-down"), partitions=1)
    dead = [f"http://127.0.0.1:{free_port()}", f"http://127.0.0.1:{free_port()}"]
    started = time.monotonic()
    with pytest.raises(Exception) as info:
        kwire_reader(spark, bootstrap, topic, ",".join(dead), **{"schema.registry.total.timeout.ms": "5000"}).load()
    elapsed = time.monotonic() - started
    text = str(info.value)
    assert all(url in text for url in dead), text
    assert elapsed < 60, elapsed


def test_refused_credentials_name_their_source_never_the_secret(spark, bootstrap, create_topic, capsys):
    password = "pw-" + uuid.uuid4().hex
    topic = create_topic(unique("typed-auth"), partitions=1)
    with SchemaRegistryServer(users={"reader": password}) as secured:
        produce_avro(bootstrap, topic, {"url": secured.url, "basic.auth.user.info": f"reader:{password}"}, SCHEMA,
                     GOOD)
        options = {"schema.registry.basic.auth.credentials.source": "USER_INFO"}
        wrong = "wrong-" + password
        with pytest.raises(Exception) as info:
            kwire_reader(spark, bootstrap, topic, secured.url,
                         **options, **{"schema.registry.basic.auth.user.info": f"reader:{wrong}"}).load()
        text = str(info.value)
        assert "401" in text and "USER_INFO" in text
        assert password not in text and wrong not in text
        df = kwire_reader(spark, bootstrap, topic, secured.url,
                          **options, **{"schema.registry.basic.auth.user.info": f"reader:{password}"}).load()
        assert sorted(r.sensor for r in df.select("value.sensor").collect()) == sorted(g["sensor"] for g in GOOD)
        df.explain(mode="extended")
        assert password not in capsys.readouterr().out


def test_a_static_bearer_token_reads_and_is_never_shown(spark, bootstrap, create_topic, capsys):
    from spark_kwire.client.registry import RegistryClient, Schema
    from tests.formats.avro.oracle import frame, write

    token = "token-" + uuid.uuid4().hex
    topic = create_topic(unique("typed-bearer"), partitions=1)
    bearer = {"bearer.auth.credentials.source": "STATIC_TOKEN", "bearer.auth.token": token}
    with SchemaRegistryServer(bearer_tokens={token: "reader"}) as secured:
        schema_id = RegistryClient({"url": secured.url, **bearer}).register(f"{topic}-value",
                                                                           Schema(json.dumps(SCHEMA)))
        produce_raw(bootstrap, topic, [(None, frame(schema_id, write(SCHEMA, g))) for g in GOOD])
        options = {f"schema.registry.{k}": v for k, v in bearer.items()}
        df = kwire_reader(spark, bootstrap, topic, secured.url, **options).load()
        assert [r.sensor for r in df.select("value.sensor").collect()] == [g["sensor"] for g in GOOD]
        df.explain(mode="extended")
        assert token not in capsys.readouterr().out
        wrong = {**options, "schema.registry.bearer.auth.token": "wrong-" + token}
        with pytest.raises(Exception) as info:
            kwire_reader(spark, bootstrap, topic, secured.url, **wrong).load()
        assert "401" in str(info.value) and "STATIC_TOKEN" in str(info.value) and token not in str(info.value)
