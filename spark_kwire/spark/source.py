"""The kwire data source: format("kwire") for batch and streaming reads and writes."""

from __future__ import annotations

import sys

from pyspark.errors import PySparkNotImplementedError
from pyspark.sql.datasource import DataSource, DataSourceStreamReader
from pyspark.sql.types import StructType

from spark_kwire.spark.capabilities import READ_LIMIT_API
from spark_kwire.spark.sql.catalog_tables import (
    check_options_given, is_table_creation, refuse_table_creation, without_table_keys
)
from spark_kwire.spark.sql.definition import for_read, for_write, judge_definition
from spark_kwire.spark.errors import KwireOptionError
from spark_kwire.spark.options.parsing import ReadOptions, WriteOptions
from spark_kwire.spark.options.rules import raw
from spark_kwire.spark.schema import read_schema, typed_read_schema, write_view_schema
from spark_kwire.spark.workers.garbage_collection import freeze_loaded_objects
from spark_kwire.spark.workers.zip_imports import keep_zip_imports_cheap

keep_zip_imports_cheap()  # Spark's Python workers running this stop re-reading pyspark.zip at each call


def _called_from(worker_file: str) -> bool:
    """True when PySpark's worker module ``worker_file`` is the caller (which one asks tells what Spark is doing)."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename.endswith(worker_file):
            return True
        frame = frame.f_back
    return False


# The PySpark module of the driver's long-lived source process (the one that asks a Python source for offsets).
_SOURCE_PROCESS = "python_streaming_source_runner.py"


def stream_reader_class():
    """The stream reader for this PySpark: Spark 4.2+ passes limits to latestOffset; older releases do not."""
    if READ_LIMIT_API:
        from spark_kwire.spark.reading.stream import KwireStreamReader

        return KwireStreamReader
    from spark_kwire.spark.reading.stream_self_limited import SelfLimitingStreamReader

    return SelfLimitingStreamReader


class RefusingStreamReader(DataSourceStreamReader):
    """Stands in for a stream reader whose options were refused, and raises that error on Spark's first call."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def _refuse(self, *_args, **_kwargs):
        raise self.error

    initialOffset = latestOffset = partitions = read = commit = _refuse
    getDefaultReadLimit = prepareForTriggerAvailableNow = _refuse

    def stop(self) -> None:
        pass


class KwireDataSource(DataSource):
    """Apache Kafka through the Kafka wire protocol, with the options and columns of Spark's `kafka` source."""

    def __init__(self, options) -> None:
        self._creating_table = is_table_creation(options)
        super().__init__(without_table_keys(options))

    @classmethod
    def name(cls) -> str:
        return "kwire"

    def _metadata_table(self) -> str | None:
        """The cluster-metadata table asked for with option("metadata", ...), if any."""
        return raw(self.options, "metadata")  # judged by the metadata read (spark/metadata/options.py)

    def schema(self) -> StructType:
        if self._creating_table:
            raise refuse_table_creation()
        if self._metadata_table() is not None:
            from spark_kwire.spark.metadata.tables import metadata_schema

            return metadata_schema(self._metadata_table())
        # Spark asks for the schema when the DataFrame or temporary view is defined, as Spark's kafka source checks
        # its options then; whether a batch or stream read, or a write (INSERT INTO a view), follows is known only
        # later, so check what every use refuses (definition.py).
        definition = judge_definition(self.options)
        if definition.read is None:
            return self._write_view_schema(definition.write)
        options = definition.read
        if options.typed is None:
            return read_schema(options.include_headers)
        # Typed keys or values: their reader schemas are decided now, once (Spark pickles this instance with them
        # for the reader), so the DataFrame is typed before any data is read and later reads decode to that type.
        if getattr(self, "_typed_read", None) is None:
            from spark_kwire.spark.reading.sampling import sample_values
            from spark_kwire.spark.typed.schemas import resolve_typed_read

            self._typed_read = resolve_typed_read(options, sample_values)
        return typed_read_schema(options.include_headers, self._typed_read)

    @staticmethod
    def _write_view_schema(options: WriteOptions) -> StructType:
        """A view naming no topics to read has the columns a write takes (typed from the schemas it writes with)."""
        types = {}
        if options.typed is not None:
            from spark_kwire.spark.typed.schemas import view_write_types

            types = view_write_types(options.typed, options.topic)
        return write_view_schema(types, with_topic=options.topic is None)

    def _read_options(self, streaming: bool) -> ReadOptions:
        """The read's options, with the typed sides' schemas decided at load() (see schema())."""
        options = ReadOptions.parse(for_read(self.options), streaming=streaming)
        if options.typed is None:
            return options
        from dataclasses import replace

        self.schema()  # decides the schemas when Spark did not ask for them (a schema given to .schema())
        typed = self._typed_read
        if streaming and typed.evolution is not None:  # a stream's first start records its inferred schema
            from spark_kwire.spark.typed.plain_json.inferred import record_first_version

            typed = record_first_version(typed)
        return replace(options, typed=typed)

    def _check_schema(self, schema: StructType) -> None:
        expected = self.schema()
        if schema != expected:
            raise KwireOptionError(
                "kwire has a fixed schema and does not accept a user-specified one; remove .schema(...). "
                f"Its columns are: {expected.simpleString()}."
            )

    def reader(self, schema: StructType):
        from spark_kwire.spark.reading.batch import (
            KwireBatchReader, KwirePushdownBatchReader, pushdown_enabled_by_caller
        )

        check_options_given(self.options)
        self._check_schema(schema)
        if self._metadata_table() is not None:
            from spark_kwire.spark.metadata.tables import metadata_reader

            return metadata_reader(self._metadata_table(), self.options)
        reader_class = KwirePushdownBatchReader if pushdown_enabled_by_caller() else KwireBatchReader
        freeze_loaded_objects()  # Spark plans each read in a reused Python worker that collects afterwards
        return reader_class(self._read_options(streaming=False))

    def streamReader(self, schema: StructType):
        from spark_kwire.spark.reading.stream_mode import choose_read_mode

        try:
            check_options_given(self.options)
            self._check_schema(schema)
            options = self._read_options(streaming=True)
            # Spark's driver-side source process asks once per query and takes the driver's reader if this raises
            # PySparkNotImplementedError; its planning worker asks too, and gets the tasks' reader, which reads
            # the batches of both modes (stream_mode.py).
            choice = choose_read_mode(options, in_source_process=_called_from(_SOURCE_PROCESS))
        except Exception as error:
            # Raised here, Spark's streaming worker reports "UnboundLocalError: ... 'reader'" instead of
            # the message (PySpark 4.0 to 4.3); raised from the reader's first call, the user reads it.
            return RefusingStreamReader(error)
        if choice.mode == "driver":
            self._driver_read = (options, choice)
            raise PySparkNotImplementedError(errorClass="NOT_IMPLEMENTED",
                                             messageParameters={"feature": "streamReader (kwire reads on the driver)"})
        return stream_reader_class()(options)

    def simpleStreamReader(self, schema: StructType):
        """The driver's read mode (stream_driver.py): Spark asks for it only when streamReader() declined."""
        from spark_kwire.spark.reading.stream_driver import driver_stream_reader_class
        from spark_kwire.spark.reading.stream_mode import ModeChoice

        chosen = getattr(self, "_driver_read", None)
        if chosen is None:
            self._check_schema(schema)
            options = self._read_options(streaming=True)
            chosen = (options, ModeChoice("driver", options.stream_read_mode))
        return driver_stream_reader_class()(*chosen)

    def _write_options(self, schema: StructType, overwrite: bool, *, streaming: bool,
                       commit_only: bool = False) -> WriteOptions:
        from spark_kwire.spark.writing.schema import validate_write_schema

        check_options_given(self.options)
        if overwrite:
            raise KwireOptionError(
                "Overwriting is not possible in Kafka: records cannot be replaced or deleted, so save mode "
                "'overwrite' and INSERT OVERWRITE are refused and nothing was written. Use .mode('append') or "
                "INSERT INTO (Spark offers Python data sources no other mode that fits Kafka)."
            )
        options = WriteOptions.parse(for_write(self.options), streaming=streaming, warn=not commit_only)
        if options.typed is not None and not commit_only:  # the schemas to encode with, and the fit, before any write
            from dataclasses import replace

            from spark_kwire.spark.typed.schemas import resolve_write

            options = replace(options, typed=resolve_write(options.typed, schema, options.topic))
        validate_write_schema(schema, options)
        from spark_kwire.spark.delegation import write_options_for_tasks

        return write_options_for_tasks(options)

    def writer(self, schema: StructType, overwrite: bool):
        from spark_kwire.spark.writing.writer import KwireBatchWriter

        freeze_loaded_objects()  # Spark plans each write job in a reused Python worker that collects afterwards
        return KwireBatchWriter(self._write_options(schema, overwrite, streaming=False))

    def streamWriter(self, schema: StructType, overwrite: bool):
        from spark_kwire.spark.writing.writer import KwireStreamWriter

        freeze_loaded_objects()  # made again for every micro-batch, in a reused Python worker
        # Spark plans each micro-batch's writer (write_into_data_source) and makes another one for its commit or
        # abort (python_streaming_sink_runner), which encodes nothing: that one does not ask the registry.
        commit_only = _called_from("python_streaming_sink_runner.py")
        return KwireStreamWriter(self._write_options(schema, overwrite, streaming=True, commit_only=commit_only))

