"""The format-neutral machinery of the compiled decoders: reading bytes, appending to output columns."""
