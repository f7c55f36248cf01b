"""Streams of plain JSON read with no schema (issue #36 item 4), against a real broker: a stream with a
schemaLocation that meets a new field stops with a clear message and, restarted on the same checkpoint, delivers
the new field with every record exactly once (counted by partition and offset); rescue mode keeps the new field in
the rescued-data column; failOnNewColumns stops and records nothing; none drops the new field.

One topic for the module: 2 partitions of version-1 documents {"id", "name"}, the DataFrames defined (load(),
schema inferred) before version-2 documents (with "extra") are produced; each query then reads the whole topic.
"""

from __future__ import annotations

import json
import os
import uuid

import pytest

pytestmark = pytest.mark.timeout(600)

V1 = [(p, {"id": p * 100 + i, "name": f"n{p}-{i}"}) for p in range(2) for i in range(10)]
V2 = [(p, {"id": p * 100 + i, "name": f"n{p}-{i}", "extra": i * 1.5}) for p in range(2) for i in range(10, 15)]
MISFIT = {"id": "oops", "name": "m"}  # an id of another type, produced after load(): no new field
V2.append((0, MISFIT))


def _as_text(pairs) -> list[str]:
    return sorted(json.dumps(p) for p in pairs)


@pytest.fixture(scope="module")
def topic(bootstrap, create_topic, produce):
    name = create_topic(f"json-evolution-{uuid.uuid4().hex[:8]}", partitions=2)
    produce(name, [(None, json.dumps(doc).encode(), None, None, p) for p, doc in V1])
    return name


@pytest.fixture(scope="module")
def produce_v2(bootstrap, topic, produce):
    """Produces the version-2 documents once, when a test first asks (after its DataFrames were defined)."""
    done = []

    def go():
        if not done:
            produce(topic, [(None, json.dumps(doc).encode(), None, None, p) for p, doc in V2])
            done.append(True)
    return go


@pytest.fixture(scope="module")
def frames(spark, bootstrap, topic, tmp_path_factory):
    """The DataFrames of every mode, defined (schema inferred) while the topic holds version-1 documents only."""
    folder = tmp_path_factory.mktemp("json-evolution")
    return folder, {
        "add": stream(spark, bootstrap, topic, schemaLocation=str(folder / "add"), maxOffsetsPerTrigger=20),
        "rescue": stream(spark, bootstrap, topic, schemaEvolutionMode="rescue"),
        "fail": stream(spark, bootstrap, topic, schemaLocation=str(folder / "fail"),
                       schemaEvolutionMode="failOnNewColumns"),
        "none": stream(spark, bootstrap, topic),  # no schemaLocation: inferred at the start, fixed; none
    }


def stream(spark, bootstrap, topic, **options):
    reader = (spark.readStream.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
              .option("startingOffsets", "earliest").option("valueFormat", "json"))
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def run(frame, checkpoint, rows: list, **trigger):
    """Runs ``frame`` to the end of what is there, rows collected by foreachBatch; the query's error or None."""
    def collect(batch, _batch_id):
        rows.extend(batch.collect())
    query = (frame.writeStream.foreachBatch(collect).option("checkpointLocation", str(checkpoint))
             .trigger(processingTime="100 milliseconds").start())
    try:
        query.processAllAvailable()
        return None
    except Exception as error:  # noqa: BLE001 - the query's failure is what some tests look for
        return error
    finally:
        query.stop()


def test_add_new_columns_stops_then_restarts_with_the_new_field_exactly_once(spark, bootstrap, topic, frames,
                                                                             produce_v2, tmp_path):
    folder, defined = frames
    location, first = folder / "add", defined["add"]
    assert first.schema["value"].dataType.simpleString() == "struct<id:bigint,name:string>"
    rows: list = []
    assert run(first.select("partition", "offset", "value.*"), tmp_path / "cp", rows) is None  # version 1 only
    assert sorted(os.listdir(location / "_schemas")) == ["0"]
    produce_v2()
    error = run(first.select("partition", "offset", "value.*"), tmp_path / "cp", rows)
    assert error is not None and "schemaEvolutionMode=addNewColumns recorded the wider schema as version 1" in \
        str(error) and "start it again from load() with the same checkpointLocation" in str(error)
    assert "`extra` DOUBLE" in str(error)
    recorded = json.loads((location / "_schemas" / "1").read_text())
    assert [f["name"] for f in recorded["value"]["fields"]] == ["id", "name", "extra"]
    stale = run(first.select("partition", "offset", "value.*"), tmp_path / "cp", rows)  # the old DataFrame again
    assert "recorded after this DataFrame was defined" in str(stale) and \
        "define the DataFrame again (load())" in str(stale)
    again = stream(spark, bootstrap, topic, schemaLocation=str(location), maxOffsetsPerTrigger=20)
    assert again.schema["value"].dataType.simpleString() == "struct<id:bigint,name:string,extra:double>"
    assert run(again.select("partition", "offset", "value.*", "_corrupt_record.error"), tmp_path / "cp",
               rows) is None
    by_offset = [(r.partition, r.offset) for r in rows]
    assert sorted(by_offset) == sorted([(p, o) for p in range(2) for o in range(15)] + [(0, 15)])  # each once
    assert _as_text((r.id, r.asDict().get("extra")) for r in rows) == _as_text(
        (None if doc is MISFIT else doc["id"], doc.get("extra")) for _p, doc in V1 + V2)
    # the id of another type reads as from_json reads it (null, the record in the corrupt-record column)
    assert [r.error for r in rows if r.offset == 15] == [
        "value: JSON value of another type than the schema's (field id)"]


def test_rescue_fail_on_new_columns_and_none(frames, produce_v2, tmp_path):
    folder, defined = frames
    rescue, failing, dropping = defined["rescue"], defined["fail"], defined["none"]
    assert rescue.schema["value"].dataType.simpleString() == "struct<id:bigint,name:string,_rescued_data:string>"
    produce_v2()
    rescued: list = []
    assert run(rescue.select("offset", "value.*"), tmp_path / "cp-rescue", rescued) is None
    assert _as_text((r.id, r._rescued_data and json.loads(r._rescued_data)) for r in rescued) == _as_text(
        (None, {"id": "oops"}) if d is MISFIT else (d["id"], {"extra": d["extra"]} if "extra" in d else None)
        for _p, d in V1 + V2)
    error = run(failing.select("value.*"), tmp_path / "cp-fail", [])
    assert error is not None and "schemaEvolutionMode=failOnNewColumns stops the query and keeps the schema" in \
        str(error)
    assert sorted(os.listdir(folder / "fail" / "_schemas")) == ["0"]  # nothing recorded
    dropped: list = []
    assert run(dropping.select("value.*"), tmp_path / "cp-none", dropped) is None
    assert _as_text(tuple(r) for r in dropped) == _as_text((None if d is MISFIT else d["id"], d["name"])
                                                          for _p, d in V1 + V2)


def test_stream_options_are_judged(spark, bootstrap, topic):
    with pytest.raises(Exception, match="addNewColumns compares the records with a recorded schema, so it needs "
                                        "'schemaLocation'"):
        stream(spark, bootstrap, topic, schemaEvolutionMode="addNewColumns")
    with pytest.raises(Exception, match="schemaEvolutionMode' must be one of addNewColumns, rescue"):
        stream(spark, bootstrap, topic, schemaEvolutionMode="merge")
    with pytest.raises(Exception, match="is a URI kwire cannot write"):
        stream(spark, bootstrap, topic, schemaLocation="s3://bucket/schemas")
    with pytest.raises(Exception, match="must be an absolute path"):
        stream(spark, bootstrap, topic, schemaLocation="relative/schemas")
    with pytest.raises(Exception, match="'valueSchema' gives the schema. Drop one of them"):
        stream(spark, bootstrap, topic, schemaLocation="/tmp/x", valueSchema="id BIGINT")
