"""spark-kwire: Apache Kafka for PySpark through the Kafka wire protocol, in Python. No JAR.

Layers, imports pointing one way: `protocol` (bytes) <- `client` (sockets, metadata, fetch/produce)
<- `spark` (the data source). After `pip install spark-kwire`, `spark.read.format("kwire")` works
without registration (Spark imports the `pyspark_kwire` module); `register(spark)` does it explicitly.
"""

from spark_kwire._version import __version__


def register(spark) -> None:
    """Register the kwire data source with a SparkSession (local or Spark Connect)."""
    from spark_kwire.spark.source import KwireDataSource

    try:
        spark.dataSource.register(KwireDataSource)
    except Exception as e:  # noqa: BLE001 - only the "already registered" case is expected
        # Spark 4.0 refuses to register a name twice; auto-registration may have registered "kwire" already.
        if "DATA_SOURCE_ALREADY_EXISTS" not in str(e):
            raise


__all__ = ["register", "__version__"]
