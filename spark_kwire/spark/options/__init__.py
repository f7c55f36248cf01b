"""kwire's own options, named as Spark's built-in ``kafka`` source names them, at the bottom of the Spark layer (it
imports no other part of it): one table of every option (``names.py``, its rows of ``docs/options.md`` in
``page.py``), the rules of each use derived from it (``rules.py``), the parsers of values (``values.py``), and
each use's options parsed and checked together (``parsing.py``; typed keys and values ``payloads.py``, plain JSON
inference ``inference.py``, delegation tokens ``security.py``)."""
