"""Arrow columns as the kernels see them, format-neutral: output columns in arenas kernels fill
(``output.py``), input columns laid out for encoders (``input.py``)."""
