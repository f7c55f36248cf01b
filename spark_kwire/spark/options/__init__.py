"""kwire's options, named as Spark's built-in ``kafka`` source names them: parsed and checked per use
(``parsing.py``), values read alike everywhere (``values.py``), security options checked together
(``security.py``)."""
