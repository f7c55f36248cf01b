"""The cluster as DataFrames: ``option("metadata", <table>)``'s schemas and reader (``tables.py``) and its
options (``options.py``)."""
