"""Plain JSON topics read with valueFormat=json against Spark's own reading of the same records: the built-in
``kafka`` source and ``from_json`` with the same schema and mode (batch), on a topic of realistic nested documents
with the awkward records of a real topic among them (values of another type, unknown fields, malformed text, a
tombstone, an empty value, unicode escapes). Also FAILFAST (the first bad record named by topic, partition and
offset), a stream over the same topic, the rescued-data column, and the options' errors. One topic for the module
(~30 s)."""

from __future__ import annotations

import json

import pytest
from pyspark.sql import functions as F

from spark_kwire.spark.errors import KwireOptionError
from tests.spark.typed_fixtures import kwire_reader, produce_raw, unique

pytestmark = pytest.mark.timeout(900)

SCHEMA = ("id BIGINT, customer STRUCT<name: STRING, email: STRING, vip: BOOLEAN>, total DECIMAL(12,2), "
          "score DOUBLE, qty INT, created TIMESTAMP, day DATE, tags ARRAY<STRING>, "
          "lines ARRAY<STRUCT<sku: STRING, price: DOUBLE, n: SMALLINT>>, attrs MAP<STRING, STRING>, "
          "blob BINARY, _corrupt_record STRING")
ODD = [
    '{"id": "seven", "score": 1.5, "qty": 3}',  # a string for a BIGINT: that field null, the rest kept
    '{"id": 108, "customer": {"name": "Zoë \\u00e9\\ud83d\\ude00", "vip": "yes"}, "total": 12.345}',
    '{"id": 109, "lines": [{"sku": "a", "price": "x"}, {"sku": "b", "n": 40000}], "tags": ["t", 5]}',
    '{"id": 110, "extra": {"deep": [1, 2, {"x": null}]}, "created": "2024-05-01 10:00:00", "day": "2024-5-1"}',
    '{"id": 111, "created": 1714557600, "score": NaN, "attrs": {"k": 1, "j": {"a": 1.50}}}',
    '{"id": 112, "total": 1e20}', '{"id": 113, "qty": 1.0}', '{"id": 114', "[1, 2]", "", "null", None,
    '{"id": 115, "blob": "aGVsbG8=", "day": "not a date"}',
]


def document(i: int) -> str:
    return json.dumps({
        "id": i, "customer": {"name": f"customer {i % 97}", "email": f"c{i}@example.com", "vip": i % 5 == 0},
        "total": f"{i * 37 % 100000 / 100:.2f}", "score": i / 7, "qty": i % 13,
        "created": f"2024-05-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00Z", "day": f"2024-06-{1 + i % 30:02d}",
        "tags": [f"t{j}" for j in range(i % 4)],
        "lines": [{"sku": f"s{i}-{j}", "price": round(j * 1.25 + i % 10, 2), "n": j} for j in range(i % 3)],
        "attrs": {"src": "web", "seq": str(i)} if i % 2 else {}})


@pytest.fixture(scope="module")
def topic(bootstrap, create_topic):
    name = create_topic(unique("json-read"), partitions=2)
    values = [document(i) for i in range(60)] + ODD
    produce_raw(bootstrap, name, [(json.dumps({"k": i, "p": i % 2}).encode(), None if v is None else v.encode(), i % 2)
                                  for i, v in enumerate(values)])
    return name


def builtin(spark, bootstrap, topic, mode="PERMISSIVE", options=None):
    raw = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
           .option("startingOffsets", "earliest").load())
    return raw.select("partition", "offset", F.from_json(F.col("value").cast("string"), SCHEMA,
                                                         {"mode": mode, **(options or {})}).alias("value"))


def rows(df) -> list:
    return [(r.partition, r.offset, r.j) for r in
            df.select("partition", "offset", F.to_json("value").alias("j")).orderBy("partition", "offset").collect()]


def test_permissive_reads_the_rows_from_json_gives(spark, bootstrap, topic):
    ours = kwire_reader(spark, bootstrap, topic, valueFormat="json", valueSchema=SCHEMA).load()
    theirs = builtin(spark, bootstrap, topic)
    assert rows(ours) == rows(theirs)
    # kwire's corrupt-record column (raw key and value, and why) marks the rows from_json marks bad
    bad = ours.where("_corrupt_record IS NOT NULL").select("partition", "offset", "_corrupt_record.error").collect()
    expected = theirs.where("value._corrupt_record IS NOT NULL").select("partition", "offset").collect()
    assert sorted((r.partition, r.offset) for r in bad) == sorted((r.partition, r.offset) for r in expected)
    assert len(bad) == 9 and all(r.error.startswith("value: ") for r in bad)


def test_json_keys_read_as_from_json_reads_them(spark, bootstrap, topic):
    ours = kwire_reader(spark, bootstrap, topic, valueFormat=None, keyFormat="json",
                        keySchema="k INT, p SMALLINT").load()
    raw = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
           .option("startingOffsets", "earliest").load())
    theirs = raw.select("partition", "offset",
                        F.from_json(F.col("key").cast("string"), "k INT, p SMALLINT").alias("key"))
    key_rows = [(r.partition, r.offset, r.j) for r in ours.select("partition", "offset", F.to_json("key").alias("j"))
                .orderBy("partition", "offset").collect()]
    assert key_rows == [(r.partition, r.offset, r.j) for r in theirs.select("partition", "offset", F.to_json("key")
                        .alias("j")).orderBy("partition", "offset").collect()]
    assert ours.schema["value"].dataType.simpleString() == "binary"


def test_the_value_type_is_from_jsons(spark, bootstrap, topic):
    ours = kwire_reader(spark, bootstrap, topic, valueFormat="json", valueSchema=SCHEMA).load()
    assert ours.schema["value"].dataType == builtin(spark, bootstrap, topic).schema["value"].dataType


def test_failfast_stops_at_the_first_bad_record_naming_it(spark, bootstrap, topic):
    with pytest.raises(Exception) as kwire_error:
        kwire_reader(spark, bootstrap, topic, valueFormat="json", valueSchema=SCHEMA, mode="FAILFAST").load() \
            .collect()
    with pytest.raises(Exception):  # Spark fails too
        builtin(spark, bootstrap, topic, mode="FAILFAST").collect()
    text = str(kwire_error.value)
    assert f"topic '{topic}' partition " in text and " offset " in text and "value" in text


def test_a_stream_reads_the_same_rows(spark, bootstrap, topic, tmp_path):
    name = f"json_stream_{unique('q').split('-')[1]}"
    stream = kwire_reader(spark, bootstrap, topic, stream=True, valueFormat="json", valueSchema=SCHEMA).load()
    query = (stream.select("partition", "offset", "value").writeStream.format("memory").queryName(name)
             .option("checkpointLocation", str(tmp_path / "cp")).trigger(processingTime="200 milliseconds").start())
    try:
        query.processAllAvailable()
        assert query.exception() is None
        got = rows(spark.table(name))
    finally:
        query.stop()
    assert got == rows(builtin(spark, bootstrap, topic))


def test_rescued_data_keeps_what_does_not_fit(spark, bootstrap, topic):
    ours = kwire_reader(spark, bootstrap, topic, valueFormat="json", valueSchema=SCHEMA,
                        rescuedDataColumn="_rescued").load()
    assert ours.schema["value"].dataType.fieldNames()[-1] == "_rescued"
    by_id = {r.id: r for r in ours.select("value.id", "value._rescued", "_corrupt_record").collect()}
    assert json.loads(by_id[108]._rescued) == {"customer": {"vip": "yes"}}  # no longer a bad row: kept instead
    assert by_id[108]._corrupt_record is None
    assert json.loads(by_id[110]._rescued) == {"extra": {"deep": [1, 2, {"x": None}]}}
    # inside an array the whole array is kept; ["t", 5] fits ARRAY<STRING> (5 reads as "5")
    assert json.loads(by_id[109]._rescued) == {"lines": [{"sku": "a", "price": "x"}, {"sku": "b", "n": 40000}]}
    assert json.loads(by_id[113]._rescued) == {"qty": 1.0}
    assert by_id[0]._rescued is None  # a document that fits rescues nothing
    malformed = ours.where("_corrupt_record IS NOT NULL").count()
    assert malformed == 3  # only text that is not a JSON object is still a bad row


@pytest.mark.parametrize("options, message", [
    ({}, "valueFormat=json needs the schema"),
    ({"valueSchema": "id BIGINT, x FOO"}, "cannot be read as JSON"),
    ({"valueSchema": "id BIGINT", "valueSchemaVersion": "2"}, "plain JSON text"),
    ({"valueSchema": "id BIGINT", "timestampFormat": "yyyy-MM-dd EEE"}, "not supported"),
])
def test_schema_and_option_errors_say_what_is_accepted(spark, bootstrap, topic, options, message):
    with pytest.raises(Exception, match=message):
        kwire_reader(spark, bootstrap, topic, valueFormat="json", **options).load().collect()


def test_json_options_need_a_json_side(spark, bootstrap, topic):
    with pytest.raises(Exception, match="applies to plain JSON"):
        kwire_reader(spark, bootstrap, topic, valueFormat=None, allowComments="true").load()
    assert issubclass(KwireOptionError, Exception)
