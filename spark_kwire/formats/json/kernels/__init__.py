"""Plain JSON's compiled kernels (plain Python, compiled by numba through ``formats/kernels.py``): the lexer,
dates and timestamps, patterns, each Spark type's converter, JSON text regenerated, and the decode interpreter
(writing is ``json_text``'s encoding walk)."""
