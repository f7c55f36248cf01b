"""The kernels both JSON formats use: ``floats.py`` (doubles from decimal digits, exactly), ``text.py`` (reading JSON
text), ``names.py`` (a property by name), ``write.py`` (writing JSON values), ``numbers.py`` (doubles and floats as
Java prints them) and ``encode.py`` (the encoding walk, with ``to_json``'s leaves)."""
