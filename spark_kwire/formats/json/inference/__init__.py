"""Schema inference for plain JSON, as ``spark.read.json`` infers it: the scan of sampled documents, the type
lattice and its merge, inference options, and the schema rendered as Spark DDL."""
