"""Writes, batch and stream: the writer objects and the commit, what a write task runs, exactly-once
transactions, and the columns a write accepts."""
