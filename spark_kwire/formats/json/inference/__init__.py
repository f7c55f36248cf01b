"""Schema inference for plain JSON, as ``spark.read.json`` infers it: the scan of sampled documents, the type
lattice and its merge, the timestamps it recognises (read as the decoding kernels read them), and the schema
rendered as Spark DDL. Its options are plain JSON's (``json/options.py``)."""
