"""Avro's compiled kernels: the decode and encode interpreters that run a schema's program."""
