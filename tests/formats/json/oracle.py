"""Spark's ``from_json`` / ``to_json`` as the oracle of plain JSON, both sides shown the same way: each decoded row
as Spark's ``to_json`` prints it (kwire's Arrow result handed to Spark as a DataFrame), so that every type, null,
NaN, map and year beyond 9999 compares exactly, in one Spark job per side."""

from __future__ import annotations

import json
import re

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


_NUMBER = re.compile(r"-?[0-9]+(?:[.][0-9]+)?(?:[eE][-+]?[0-9]+)?")


def _significant_digits(number: str) -> int:
    mantissa = re.split("[eE]", number.lstrip("-"))[0].replace(".", "")
    return len(mantissa.strip("0"))


def only_java17_digits(theirs: str | None, ours: str | None) -> bool:
    """Whether two rows differ only in doubles that Java 17's ``Double.toString`` printed with more digits than
    the shortest that read back as the same double (JDK-4511638: 2^-24 as 5.9604644775390625E-8, 1e23 as
    9.999999999999999E22), where kwire prints the shortest: a known difference, docs/json.md says so. Any other
    difference, a number that reads back as another double or a longer one of kwire's, still counts."""
    if theirs is None or ours is None or _NUMBER.split(theirs) != _NUMBER.split(ours):
        return False
    pairs = [(a, b) for a, b in zip(_NUMBER.findall(theirs), _NUMBER.findall(ours)) if a != b]
    return bool(pairs) and all(float(a) == float(b) and _significant_digits(b) < _significant_digits(a)
                               for a, b in pairs)


def only_spark_partial_fields(text: str | None, theirs: str | None, ours: str | None) -> bool:
    """Whether ``text`` is not JSON, kwire's row holds nothing but the corrupt record and Spark's the same corrupt
    record beside fields its parser kept (Jackson recovers from some errors inside a nested value, such as a
    number cut short; kwire gives a row of nulls): a known difference, docs/json.md says so."""
    if text is None or theirs is None or ours is None:
        return False
    try:
        json.loads(text)
        return False
    except ValueError:
        pass
    mine, spark = json.loads(ours), json.loads(theirs)
    return list(mine) == ["_corrupt_record"] and spark.get("_corrupt_record") == mine["_corrupt_record"]


def differences(spark, texts, schema=SCHEMA, options=None) -> list[tuple]:
    """(text, Spark's row, kwire's row) wherever they differ, but for the known differences in Java 17's digits
    (:func:`only_java17_digits`) and in what Spark keeps of text cut short (:func:`only_spark_partial_fields`)."""
    theirs = spark_rows(spark, texts, schema, options)
    ours = kwire_rows(spark, texts, schema, options)
    return [(t, a, b) for t, a, b in zip(texts, theirs, ours)
            if a != b and not only_java17_digits(a, b) and not only_spark_partial_fields(t, a, b)]
