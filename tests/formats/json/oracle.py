"""Spark's ``from_json`` / ``to_json`` as the oracle of plain JSON, both sides shown the same way: each decoded row
as Spark's ``to_json`` prints it (kwire's Arrow result handed to Spark as a DataFrame), so that every type, null,
NaN, map and year beyond 9999 compares exactly, in one Spark job per side."""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import functions as F

from spark_kwire.formats.json import JsonDecoder, JsonOptions

SCHEMA = ("a INT, b STRING, c DOUBLE, d DECIMAL(5,2), e BOOLEAN, f ARRAY<INT>, g MAP<STRING,INT>, "
          "h STRUCT<x: INT, y: STRING>, i TIMESTAMP, j DATE, k BINARY, l FLOAT, m BIGINT, n TINYINT, "
          "o ARRAY<STRUCT<x:INT>>, p TIMESTAMP_NTZ, q SMALLINT, r DECIMAL(38,10), _corrupt_record STRING")


def spark_rows(spark, texts: list[str | None], schema: str = SCHEMA, options: dict | None = None) -> list[str | None]:
    """``to_json(from_json(text, schema, options))`` per text, PERMISSIVE unless ``options`` say otherwise."""
    df = spark.createDataFrame([(i, t) for i, t in enumerate(texts)], "i INT, s STRING")
    parsed = F.from_json("s", schema, {"mode": "PERMISSIVE", **(options or {})})
    return [r.j for r in df.select("i", F.to_json(parsed).alias("j")).orderBy("i").collect()]


def kwire_values(texts: list[str | None], schema: str = SCHEMA, options: dict | None = None, mode="PERMISSIVE"):
    options = {"timeZone": "UTC", **(options or {})}
    return JsonDecoder(schema, JsonOptions.parse(options)).decode(pa.array(texts, pa.string()), mode)


def kwire_rows(spark, texts: list[str | None], schema: str = SCHEMA, options: dict | None = None) -> list[str | None]:
    """kwire's decode of the texts, shown as ``to_json`` of its rows."""
    from pyspark.sql import types as T

    from spark_kwire.spark.typed.spark_types import spark_type

    values = kwire_values(texts, schema, options).values
    table = pa.table({"i": pa.array(range(len(texts)), pa.int32()), "v": values})
    spark_schema = T.StructType([T.StructField("i", T.IntegerType()), T.StructField("v", spark_type(values.type))])
    df = spark.createDataFrame(table, spark_schema)  # (the schema keeps TIMESTAMP_NTZ, which Arrow alone loses)
    return [r.j for r in df.select("i", F.to_json("v").alias("j")).orderBy("i").collect()]


def differences(spark, texts, schema=SCHEMA, options=None) -> list[tuple]:
    """(text, Spark's row, kwire's row) wherever they differ."""
    theirs = spark_rows(spark, texts, schema, options)
    ours = kwire_rows(spark, texts, schema, options)
    return [(t, a, b) for t, a, b in zip(texts, theirs, ours) if a != b]
