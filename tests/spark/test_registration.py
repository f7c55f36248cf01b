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


def test_planning_a_read_does_not_import_the_record_kernels():
    """Spark creates the data source and plans a read in Python workers of their own; a new worker (Spark
    replaces workers idle for a minute) should not pay for numba and the record kernels, which only the
    reading and writing tasks use."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import sys
        import spark_kwire
        from spark_kwire.spark import source
        from spark_kwire.spark.reading import batch, planner, stream, stream_self_limited
        from spark_kwire.client import KafkaClient, KwireError
        print(sorted(m for m in sys.modules if m == "numba" or m.startswith("spark_kwire.protocol.records")))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]", f"planning imported: {out.stdout.strip()}"
