"""JSON Schema's compiled kernel: the decode interpreter (JSON text itself is read and written by ``json_text``'s
kernels, the encoding walk included)."""
