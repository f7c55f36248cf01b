"""The kwire data source: format("kwire") for batch and streaming reads and writes."""

from __future__ import annotations

from pyspark.sql.datasource import DataSource, DataSourceStreamReader
from pyspark.sql.types import StructType

from spark_kwire.spark.options import KwireOptionError, ReadOptions, WriteOptions
from spark_kwire.spark.schema import read_schema


class KwireDataSource(DataSource):
    """Apache Kafka through the Kafka wire protocol, with the options and columns of Spark's `kafka` source."""

    @classmethod
    def name(cls) -> str:
        return "kwire"

    def _include_headers(self) -> bool:
        return str(self.options.get("includeHeaders", "false")).strip().lower() == "true"

    def _metadata_table(self) -> str | None:
        """The cluster-metadata table asked for with option("metadata", ...), if any."""
        return self.options.get("metadata")

    def schema(self) -> StructType:
        if self._metadata_table() is not None:
            from spark_kwire.spark.metadata import metadata_schema

            return metadata_schema(self._metadata_table())
        # Spark asks for the schema when the DataFrame is defined (load()), as Spark's kafka source checks its
        # options then; whether it is a batch or a stream is known only later, so check what both refuse.
        ReadOptions.parse(self.options, streaming=None)
        return read_schema(self._include_headers())

    def _check_schema(self, schema: StructType) -> None:
        expected = self.schema()
        if schema != expected:
            raise KwireOptionError(
                "kwire has a fixed schema and does not accept a user-specified one; remove .schema(...). "
                f"Its columns are: {expected.simpleString()}."
            )

    def reader(self, schema: StructType):
        from spark_kwire.spark.batch import KwireBatchReader, KwirePushdownBatchReader, pushdown_enabled_by_caller

        self._check_schema(schema)
        if self._metadata_table() is not None:
            from spark_kwire.spark.metadata import MetadataReader

            return MetadataReader(self._metadata_table(), self.options)
        reader_class = KwirePushdownBatchReader if pushdown_enabled_by_caller() else KwireBatchReader
        return reader_class(ReadOptions.parse(self.options))

    def streamReader(self, schema: StructType):
        from spark_kwire.spark.stream import KwireStreamReader

        try:
            self._check_schema(schema)
            return KwireStreamReader(ReadOptions.parse(self.options, streaming=True))
        except KwireOptionError as e:
            # Raised here, some Spark releases report an UnboundLocalError instead; raised by the reader's
            # first call, the query fails with this message on every release.
            return RefusedStreamReader(e)

    def _write_options(self, schema: StructType, overwrite: bool, *, streaming: bool) -> WriteOptions:
        from spark_kwire.spark.writer import validate_write_schema

        if overwrite:
            raise KwireOptionError(
                "Save mode 'overwrite' is not allowed for Kafka: records cannot be replaced. "
                "Use .mode('append') (Spark offers Python data sources no other mode that fits Kafka)."
            )
        options = WriteOptions.parse(self.options, streaming=streaming)
        validate_write_schema(schema, options)
        return options

    def writer(self, schema: StructType, overwrite: bool):
        from spark_kwire.spark.writer import KwireBatchWriter

        return KwireBatchWriter(self._write_options(schema, overwrite, streaming=False))

    def streamWriter(self, schema: StructType, overwrite: bool):
        from spark_kwire.spark.writer import KwireStreamWriter

        return KwireStreamWriter(self._write_options(schema, overwrite, streaming=True))


class RefusedStreamReader(DataSourceStreamReader):
    """Stands in for a stream reader whose options were refused: the query's first call to it fails with
    the refusal (e.g. option 'metadata' on readStream: the metadata tables are batch-only)."""

    def __init__(self, error: KwireOptionError) -> None:
        self.error = error

    def _refuse(self, *_args, **_kwargs):
        raise KwireOptionError(str(self.error))

    initialOffset = latestOffset = partitions = read = commit = _refuse

    def stop(self) -> None:
        pass
