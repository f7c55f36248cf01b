"""Getting the record kernels compiled before they are needed: warm-up, a background compile in a helper
process, per-call choice of the pure-Python kernels while numba's load, and notes of what numba's cache holds."""
