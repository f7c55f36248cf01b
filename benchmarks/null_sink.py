"""A Python data source whose writers (batch and stream) only count rows: the fixed cost and the ceiling of any
Python sink.

It lives in a module of its own so that Spark's Python workers import it (``_common.spark_session`` puts this
folder on their PYTHONPATH), as they import an installed connector, instead of unpickling classes by value
for every job. With the option ``count_file``, the commit writes the total row count there.
"""

from __future__ import annotations

from pyspark.sql import datasource as _api
import gc
import sys

from pyspark.sql.datasource import DataSource, DataSourceArrowWriter, DataSourceStreamWriter, WriterCommitMessage

# Spark 4.1+ has an Arrow stream writer; Spark 4.0 hands Arrow batches to any DataSourceArrowWriter.
_STREAM_BASES = ((_api.DataSourceStreamArrowWriter,) if hasattr(_api, "DataSourceStreamArrowWriter")
                 else (DataSourceStreamWriter, DataSourceArrowWriter))


_modules_frozen = 0


def freeze_loaded_objects() -> None:
    """Collect and gc.freeze() what is alive when modules were loaded since the last time: PySpark's daemon runs a
    full collection after every call in a reused worker, which then skips them (as kwire's worker_gc.py does; not
    imported from kwire, so that this sink runs on Spark alone)."""
    global _modules_frozen
    if len(sys.modules) != _modules_frozen:
        gc.collect()
        gc.freeze()
        _modules_frozen = len(sys.modules)


class CountOnly(WriterCommitMessage):
    def __init__(self, rows: int) -> None:
        self.rows = rows


class NullArrowWriter(DataSourceArrowWriter):
    """Touches nothing but each Arrow batch's row count; commit runs in a Python process of the driver."""

    def __init__(self, count_file: str | None) -> None:
        self.count_file = count_file

    def write(self, iterator):
        return CountOnly(sum(batch.num_rows for batch in iterator))

    def commit(self, messages):
        total = sum(m.rows for m in messages)
        if self.count_file:
            with open(self.count_file, "w", encoding="utf-8") as f:
                f.write(str(total))


class NullArrowStreamWriter(*_STREAM_BASES):
    """The streaming twin: counts each micro-batch's rows; commit (in the driver's commit worker) does nothing.
    Like kwire's, its calls keep the collection PySpark runs after each call in a reused worker cheap, so that the
    floor it shows is what Spark itself costs."""

    def write(self, iterator):
        freeze_loaded_objects()
        return CountOnly(sum(batch.num_rows for batch in iterator))

    def commit(self, messages, batchId):
        freeze_loaded_objects()

    def abort(self, messages, batchId):
        pass


class NullSink(DataSource):
    @classmethod
    def name(cls):
        return "null_arrow_sink"

    def writer(self, schema, overwrite):
        return NullArrowWriter(self.options.get("count_file"))

    def streamWriter(self, schema, overwrite):
        freeze_loaded_objects()  # made again for every micro-batch, in a reused Python worker
        return NullArrowStreamWriter()
