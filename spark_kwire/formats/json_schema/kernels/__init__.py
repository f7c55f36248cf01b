"""JSON Schema's compiled kernels: JSON text (strings, numbers, RFC 3339 dates, skipping), doubles as text, and
the decode and encode interpreters."""
