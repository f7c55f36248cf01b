"""kwire from SQL: options judged at a view's or a load()'s definition, before the use is known
(``definition.py``), and catalog tables refused with the way that works (``catalog_tables.py``)."""
