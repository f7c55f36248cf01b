"""kwire is found by Spark with no register call, and register(spark) works too."""


def test_kwire_format_resolves_without_register_call(spark, bootstrap):
    df = spark.read.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("subscribe", "t").load()
    assert df.columns == ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType"]


def test_explicit_register(spark, bootstrap):
    import spark_kwire

    spark_kwire.register(spark)
    df = (spark.read.format("kwire").option("kafka.bootstrap.servers", bootstrap).option("subscribe", "t")
          .option("includeHeaders", "true").load())
    assert df.schema["headers"].dataType.simpleString() == "array<struct<key:string,value:binary>>"
