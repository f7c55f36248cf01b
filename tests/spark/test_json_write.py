"""Writes with valueFormat=json against Spark's own ``to_json``: each written value is, byte for byte, the text
``to_json`` makes of the same struct (field order, null fields left out, doubles and floats as Java prints them,
decimals, timestamps in the session or given time zone, dates, binary as base64, maps, arrays, unicode), and
``from_json`` reads the topic back into the rows written. One topic per test, a few dozen rows (~20 s)."""

from __future__ import annotations

import datetime as dt
import decimal

import numpy as np
import pytest
from pyspark.sql import functions as F
from pyspark.sql import types as T

from tests.spark.typed_fixtures import unique

pytestmark = pytest.mark.timeout(900)
UTC = dt.timezone.utc

VALUE = T.StructType([
    T.StructField("id", T.LongType()), T.StructField("name", T.StringType()), T.StructField("ok", T.BooleanType()),
    T.StructField("d", T.DoubleType()), T.StructField("f", T.FloatType()), T.StructField("dec", T.DecimalType(20, 10)),
    T.StructField("small", T.ByteType()), T.StructField("short", T.ShortType()), T.StructField("i", T.IntegerType()),
    T.StructField("ts", T.TimestampType()), T.StructField("ntz", T.TimestampNTZType()),
    T.StructField("day", T.DateType()),
    T.StructField("blob", T.BinaryType()), T.StructField("tags", T.ArrayType(T.StringType())),
    T.StructField("m", T.MapType(T.StringType(), T.DoubleType())),
    T.StructField("inner", T.StructType([T.StructField("x", T.IntegerType()), T.StructField("y", T.StringType())])),
    T.StructField("nested", T.ArrayType(T.StructType([T.StructField("k", T.StringType()),
                                                      T.StructField("v", T.ArrayType(T.LongType()))]))),
])
# whole numbers past 2^53 included, which Java 17 prints with all their digits (2.82879384806159008E17); not the
# rare others where Java 17 strays from the shortest digits (1e23 as 9.999999999999999E22), nor subnormals whose
# shortest form has one digit (5e-324, which Java prints 4.9E-324): kwire prints the shortest there
DOUBLES = [0.0, -0.0, 1.0, 1e10, 1e7, 9999999.0, 1e-3, 1e-4, 0.1, 123456.789, -2.5e-7, float("nan"), float("inf"),
           1.7976931348623157e308, 2.2250738585072014e-308, 3.0e-5, 12345678.9, 2.82879384806159e17,
           -5.691196325614262e16, 123456792.0, 2.0 ** 60 + 256]


def values() -> list:
    rows = []
    for i, x in enumerate(DOUBLES + [None] * 3):
        rows.append((
            (i, f"név {i} \"q\" \\ /\u0001\u2028😀" if i % 4 else None, i % 2 == 0, x,
             None if x is None else float(np.float32(x if abs(x) < 3e38 else 1.0)),
             decimal.Decimal(i) / decimal.Decimal(10 ** (i % 10)), i - 5, -i * 1000, i * 100000,
             dt.datetime(2024, 3, 31, 1, 30, 15, i * 37000, tzinfo=UTC) + dt.timedelta(hours=i * 5),
             dt.datetime(1999, 12, 31, 23, 59, 59, i), dt.date(1970, 1, 1) + dt.timedelta(days=i * 4000),
             bytes(range(i)), [f"t{j}" for j in range(i % 3)] + ([None] if i % 5 == 0 else []),
             {"a": x, "b": None} if i % 3 else {}, (i, None) if i % 2 else None,
             [("k", [1, None, i])] if i % 4 == 1 else []),))
    rows.append((None,))  # a null value: a tombstone
    return rows


def in_any_order(texts) -> list:
    """The texts sorted (a write's tasks send their rows in any order), a null value (a tombstone) first."""
    return sorted(texts, key=lambda t: (t is not None, t or ""))


def written(spark, bootstrap, create_topic, df, **options) -> list:
    topic = create_topic(unique("json-write"), partitions=1)
    writer = df.write.format("kwire").mode("append").option("kafka.bootstrap.servers", bootstrap) \
        .option("topic", topic).option("valueFormat", "json")
    for key, value in options.items():
        writer = writer.option(key, value)
    writer.save()
    raw = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
           .option("startingOffsets", "earliest").load().orderBy("offset"))
    return raw


def test_values_are_to_jsons_text_and_read_back(spark, bootstrap, create_topic):
    df = spark.createDataFrame(values(), T.StructType([T.StructField("value", VALUE)]))
    raw = written(spark, bootstrap, create_topic, df)
    texts = [None if r.value is None else bytes(r.value).decode() for r in raw.select("value").collect()]
    expected = [r.j for r in df.select(F.to_json("value").alias("j")).collect()]
    assert in_any_order(texts) == in_any_order(expected)
    back = raw.select(F.from_json(F.col("value").cast("string"), VALUE).alias("value"))
    assert in_any_order(r.j for r in back.select(F.to_json("value").alias("j")).collect()) == in_any_order(expected)


@pytest.mark.parametrize("options", [
    {"timeZone": "America/New_York"},
    {"timestampFormat": "dd/MM/yyyy HH:mm:ss.SSS XXX", "dateFormat": "yyyy/M/d", "timeZone": "+05:30"},
    {"ignoreNullFields": "false"},
])
def test_write_options_are_to_jsons(spark, bootstrap, create_topic, options):
    df = spark.createDataFrame(values(), T.StructType([T.StructField("value", VALUE)])).select(
        F.struct("value.id", "value.ts", "value.day", "value.inner", "value.tags").alias("value"))
    raw = written(spark, bootstrap, create_topic, df, **options)
    texts = [None if r.value is None else bytes(r.value).decode() for r in raw.select("value").collect()]
    assert in_any_order(texts) == in_any_order(r.j for r in df.select(F.to_json("value", options).alias("j")).collect())


def test_a_schema_or_read_option_on_a_json_write_is_refused(spark, bootstrap, create_topic):
    df = spark.createDataFrame([((1,),)], "value STRUCT<id: INT>")
    with pytest.raises(Exception, match="not used by a write"):
        written(spark, bootstrap, create_topic, df, valueSchema="id INT")
    with pytest.raises(Exception, match="to_json writes"):
        written(spark, bootstrap, create_topic, df, allowComments="true")
