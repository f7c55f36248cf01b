"""Spark itself as the oracle: spark-avro's ``from_avro`` (org.apache.spark:spark-avro_2.13:4.0.0) decodes the
same payloads (after the 5-byte Confluent header). kwire's Arrow type must convert to the very StructType
``from_avro`` yields, and its values, handed to Spark, must be the rows ``from_avro`` gives (compared as
Spark's own JSON of each row). For writing, the derived schema must be ``toAvroType``'s and the bytes
``to_avro``'s.

Passes on PySpark 4.3 (the newest) and 4.0.5 (``make test-release-4.0.5
RELEASE_TESTS=tests/formats/avro/test_spark_avro_oracle.py``): since Spark 4.0 the Avro type mapping lives
in spark-sql itself, so each release maps as it does (4.1+: time-micros is TIME)."""

from __future__ import annotations

import decimal
import json

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kwire.formats.avro.decoder import AvroDecoder
from tests.formats.avro.oracle import frame, values, without_logical_types, write
from tests.formats.avro.schemas import ALL_TYPES, V1, V2, V3

pytestmark = pytest.mark.timeout(900)

OTHER_SCHEMAS = [
    "string",
    {"type": "array", "items": ["null", {"type": "enum", "name": "E", "symbols": ["A", "B"]}]},
    {"type": "map", "values": ["null", "long", "string"]},
    # (not top-level unions: spark-avro cannot decode [null, record] at the top at all, and reads a top-level
    # [null, long] null as 0; kwire gives null)
    {"type": "record", "name": "Odd", "fields": [
        # logical types spark-avro ignores because Avro does: on the wrong base type, or a decimal that
        # does not fit its fixed
        {"name": "ts_on_int", "type": {"type": "int", "logicalType": "timestamp-millis"}},
        {"name": "date_on_long", "type": {"type": "long", "logicalType": "date"}},
        {"name": "dec_too_big", "type": {"type": "fixed", "name": "F2", "size": 2, "logicalType": "decimal",
                                         "precision": 10, "scale": 2}},
        {"name": "dec_bad_scale", "type": {"type": "bytes", "logicalType": "decimal", "precision": 2, "scale": 3}},
        # (not timestamp-nanos: bigint in Spark 4.0, TIMESTAMP_LTZ(9) in 4.3, which pyspark 4.3 cannot parse)
        {"name": "empty", "type": {"type": "record", "name": "Nothing", "fields": []}},
    ]},
]


def spark_reads_time_as_time() -> bool:
    """from_avro reads time-micros as TIME(6) where Spark has its TIME type in general use (4.2 on, SPARK-54473;
    bigint before, 4.1 included): the capability the data source decides it by."""
    from spark_kwire.spark.capabilities import TIME_TYPE

    return TIME_TYPE.available


def new_decoder(schema) -> AvroDecoder:
    return AvroDecoder(schema, time_type=spark_reads_time_as_time())


def from_arrow_type(t):
    """The Spark type of an Arrow type as Spark's Arrow conversion (ArrowUtils) reads it. PySpark's own
    from_arrow_type agrees from 4.2 on; in 4.0 it drops list and map item nullability, and in 4.0 and 4.1 it reads
    timestamps without a time zone as TIMESTAMP (so does not serve as the oracle there)."""
    spark_type = _spark_type(t)
    if spark_reads_time_as_time():  # the releases (4.2 on) whose from_arrow_type also follows ArrowUtils
        from pyspark.sql.pandas.types import from_arrow_type as convert

        assert convert(t) == spark_type
    return spark_type


def _spark_type(t):
    from pyspark.sql import types as T

    simple = [(pa.types.is_null, T.NullType), (pa.types.is_boolean, T.BooleanType), (pa.types.is_int32, T.IntegerType),
              (pa.types.is_int64, T.LongType), (pa.types.is_float32, T.FloatType), (pa.types.is_float64, T.DoubleType),
              (pa.types.is_string, T.StringType), (pa.types.is_binary, T.BinaryType), (pa.types.is_date32, T.DateType)]
    for test, spark in simple:
        if test(t):
            return spark()
    if pa.types.is_decimal(t):
        return T.DecimalType(t.precision, t.scale)
    if pa.types.is_timestamp(t):
        return T.TimestampType() if t.tz else T.TimestampNTZType()
    if pa.types.is_time64(t):
        return T.TimeType(6)
    if pa.types.is_list(t):
        return T.ArrayType(_spark_type(t.value_type), t.value_field.nullable)
    if pa.types.is_map(t):
        return T.MapType(_spark_type(t.key_type), _spark_type(t.item_type), t.item_field.nullable)
    assert pa.types.is_struct(t), t
    return T.StructType([T.StructField(f.name, _spark_type(f.type), f.nullable) for f in t])


def spark_rows(spark, schema_json: str, framed: list[bytes], reader_json: str | None = None):
    """(data type, JSON of each row) that spark-avro decodes from the payloads."""
    from pyspark.sql.avro.functions import from_avro
    from pyspark.sql.functions import col, expr, struct, to_json

    df = spark.createDataFrame([(i, v) for i, v in enumerate(framed)], "id int, value binary")
    options = {"avroSchema": reader_json} if reader_json else {}
    decoded = df.select("id", from_avro(expr("substring(value, 6)"), schema_json, options).alias("v"))
    rows = decoded.select("id", to_json(struct(col("v"))).alias("j")).orderBy("id").collect()
    return decoded.schema["v"].dataType, [_parsed(r.j) for r in rows]


def _parsed(text: str):
    # maps have no order (spark-avro builds them from Java HashMaps): compare parsed JSON objects; decimals
    # exactly
    return json.loads(text, parse_float=decimal.Decimal)


def kwire_rows(spark, column: pa.Array):
    from pyspark.sql.functions import col, struct, to_json

    from pyspark.sql.types import IntegerType, StructField, StructType

    table = pa.table({"id": pa.array(range(len(column)), pa.int32()), "v": column})
    # the schema a data source declares (timestamps without a time zone are TIMESTAMP_NTZ)
    schema = StructType([StructField("id", IntegerType()), StructField("v", from_arrow_type(column.type))])
    df = spark.createDataFrame(table, schema=schema)
    return [_parsed(r.j) for r in df.select("id", to_json(struct(col("v"))).alias("j")).orderBy("id").collect()]


def check_against_spark(spark, schema, records, plain=None):
    """``plain``: the schema fastavro writes with (the same encoding), when it refuses ``schema``."""
    text = json.dumps(schema)
    framed = [frame(1, write(plain or schema, r)) for r in records]
    decoder = new_decoder(schema)
    decoder.add_writer_schema(1, schema)
    ours = decoder.decode(pa.array(framed, pa.binary()))
    spark_type, spark_json = spark_rows(spark, text, framed)
    assert from_arrow_type(decoder.arrow_type) == spark_type
    assert kwire_rows(spark, ours.values) == spark_json


def test_every_type_as_spark_avro_decodes_it(spark):
    # Lists of at most 12 records: hypothesis could draw lists of 20-40 records of every type only by discarding
    # most attempts as too large (one example in ~180 s, 4 asked for); 8 examples of 5-12 take seconds.
    @settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(values(ALL_TYPES), min_size=5, max_size=12))
    def check(records):
        check_against_spark(spark, ALL_TYPES, records)

    check()


@pytest.mark.parametrize("schema", OTHER_SCHEMAS, ids=lambda s: json.dumps(s)[:40])
def test_other_shapes_as_spark_avro_decodes_them(spark, schema):
    plain = without_logical_types(schema)

    @settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(values(plain), min_size=10, max_size=20))
    def check(records):
        check_against_spark(spark, schema, records, plain)

    check()


def test_schema_evolution_as_spark_avro_resolves_it(spark):
    """from_avro with the writer's schema and ``avroSchema`` = the reader's resolves as Java's Avro does;
    kwire decodes the three writers' payloads in one batch."""
    writers = {1: V1, 2: V2, 3: V3}

    @settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(values(V1), min_size=5, max_size=10), st.lists(values(V2), min_size=5, max_size=10),
           st.lists(values(V3), min_size=5, max_size=10))
    def check(r1, r2, r3):
        batch = [(1, r) for r in r1] + [(2, r) for r in r2] + [(3, r) for r in r3]
        framed = [frame(i, write(writers[i], r)) for i, r in batch]
        decoder = new_decoder(V3)
        for i, w in writers.items():
            decoder.add_writer_schema(i, w)
        ours = kwire_rows(spark, decoder.decode(pa.array(framed, pa.binary())).values)
        expected = []
        for i, w in writers.items():
            part = [f for (j, _), f in zip(batch, framed) if j == i]
            spark_type, rows = spark_rows(spark, json.dumps(w), part, json.dumps(V3))
            assert from_arrow_type(decoder.arrow_type) == spark_type
            expected += rows
        assert ours == expected

    check()


# ---- writing: the schema spark-avro derives, and the bytes to_avro writes ----

WRITE_SCHEMA_SPARK = (
    "id bigint not null, b tinyint, s smallint, i int not null, l bigint, f float, d double, ok boolean, "
    "name string, raw binary, price decimal(12,2), big decimal(38,0), day date, at timestamp, local timestamp_ntz, "
    "tags array<string>, scores array<double> not null, attrs map<string,int>, "
    "address struct<street: string, zip: int not null, geo: struct<lat: double, lon: double>, "
    "amount: decimal(5,1)>, lines array<struct<sku: string, qty: int, cost: decimal(9,3)>>"
)


def write_schema(ddl: str = WRITE_SCHEMA_SPARK):
    """The Spark schema of the write tests; ``scores`` holds no nulls (DDL cannot say so)."""
    from pyspark.sql.types import ArrayType, DoubleType, StructField, StructType

    parsed = StructType.fromDDL(ddl)
    return StructType([StructField(f.name, ArrayType(DoubleType(), containsNull=False), f.nullable)
                       if f.name == "scores" else f for f in parsed.fields])


def to_arrow_type(spark_type):
    from pyspark.sql.pandas.types import to_arrow_type as convert

    try:
        return convert(spark_type, timezone="UTC")
    except TypeError:  # PySpark 4.0: no time zone argument
        return convert(spark_type)


def test_derived_schema_is_spark_avros(spark):
    """avro_schema_for(Arrow type of a Spark schema) is what SchemaConverters.toAvroType gives (compared as
    fastavro parses both: full names, same structure and attributes)."""
    import fastavro
    from spark_kwire.formats.avro.spark_types import avro_schema_for

    spark_type = write_schema()
    jvm = spark._jvm
    java_type = spark._jsparkSession.parseDataType(spark_type.json())
    for nullable, name, namespace in ((False, "topLevelRecord", ""), (True, "Order", "com.acme")):
        theirs = json.loads(jvm.org.apache.spark.sql.avro.SchemaConverters.toAvroType(
            java_type, nullable, name, namespace).toString())
        ours = avro_schema_for(to_arrow_type(spark_type), nullable=nullable, record_name=name, namespace=namespace)
        assert fastavro.parse_schema(ours) == fastavro.parse_schema(theirs)


def test_encoded_bytes_are_to_avros(spark):
    """kwire's encoder and Spark's to_avro write the same bytes for the same rows and schema (no maps here:
    spark-avro writes a map in its HashMap's order)."""
    import datetime

    from pyspark.sql.avro.functions import to_avro
    from pyspark.sql.functions import col, struct
    from spark_kwire.formats.avro.encoder import AvroEncoder
    from spark_kwire.formats.avro.spark_types import avro_schema_json

    ddl = WRITE_SCHEMA_SPARK.replace("attrs map<string,int>, ", "")
    spark_type = write_schema(ddl)
    utc = datetime.timezone.utc
    rows = []
    for i in range(60):
        rows.append((
            i * 10**12, (i % 256) - 128, i * 500 - 15000, -i, None if i % 5 == 0 else -(2**62) + i, i / 3,
            -i / 7, i % 2 == 0, None if i % 4 == 0 else "naïve ✓" * (i % 3), bytes(range(i % 9)),
            decimal.Decimal(i * 1234567) / 100, decimal.Decimal(-(10**37) + i) if i % 2 else None,
            datetime.date(1960, 1, 1) + datetime.timedelta(days=i * 400),
            datetime.datetime(1965, 3, 4, 5, 6, 7, 891011, tzinfo=utc) + datetime.timedelta(days=i * 333),
            datetime.datetime(2030, 1, 1) - datetime.timedelta(seconds=i * 12345.678),
            None if i % 6 == 0 else ["a", None, "c"][: i % 4], [float(i)] * (i % 3),
            None if i % 7 == 0 else ("s", i, (1.5, None), decimal.Decimal(i) / 10),
            [("x", i, decimal.Decimal("-1.5"))] * (i % 2)))
    df = spark.createDataFrame(rows, spark_type)
    schema_text = avro_schema_json(to_arrow_type(spark_type))
    theirs = [r.v for r in df.select(to_avro(struct(*[col(c) for c in df.columns]), schema_text).alias("v"))
              .collect()]
    # the Arrow batches Spark hands a Python data source writer
    table = pa.Table.from_batches(df._collect_as_arrow())
    column = pa.StructArray.from_arrays([c.combine_chunks() for c in table.columns], fields=list(table.schema))
    ours = AvroEncoder(schema_text, 77).encode(column).values.to_pylist()
    assert [o[5:] for o in ours] == [bytes(t) for t in theirs]
