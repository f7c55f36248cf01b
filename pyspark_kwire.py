"""Auto-registration shim: Spark registers `DefaultSource` of every top-level `pyspark_*` module it can import,
so after `pip install spark-kwire`, `spark.read.format("kwire")` works without a register call."""

from spark_kwire.spark.source import KwireDataSource as DefaultSource

__all__ = ["DefaultSource"]
