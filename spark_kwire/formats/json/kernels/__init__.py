"""Plain JSON's compiled kernels (plain Python, compiled by numba through ``formats/kernels.py``): the lexer,
numbers, dates and timestamps, patterns, each Spark type's converter, JSON text regenerated, and the decode and
encode interpreters."""
