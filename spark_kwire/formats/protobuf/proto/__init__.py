"""The ``.proto`` reader: text to tokens (``lexer.py``), tokens to a ``FileDescriptorProto`` (``parser.py``)."""
