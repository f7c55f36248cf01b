"""Making Spark's Python workers cheaper for kwire: an opt-in worker daemon, garbage collection kept off what
kwire loaded, pyspark.zip read once."""
