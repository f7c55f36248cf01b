"""Catalog tables over kwire (`CREATE TABLE ... USING kwire`): refused with the reason and the way that works.

Spark 4.0 to 4.3 keep no OPTIONS of a catalog table over a Python data source: `CREATE TABLE` hands the source
the options plus keys of Spark's own (``provider``, ``owner``, ``option.<name>``), but every later read or write
of the table (and the write of `CREATE TABLE ... AS SELECT`) creates it with no options at all. Such a table could
never reach a broker. What Spark passes tells which case this is, never the release: should a release keep a
table's options, its reads and writes get them, and work.
"""

from __future__ import annotations

from typing import Mapping

from spark_kwire.spark.errors import KwireOptionError
from spark_kwire.spark.options.rules import given, spark_keys

# Keys Spark adds to a catalog table's options at CREATE TABLE (besides an ``option.<name>`` copy of each option).
_SPARK_TABLE_KEYS = spark_keys("catalog table")
# What Spark itself puts into a stream writer's options.
_SPARK_STREAM_WRITE_KEYS = spark_keys("streaming write")

_VIEW_EXAMPLE = ("CREATE OR REPLACE TEMPORARY VIEW events USING kwire OPTIONS "
                 "(`kafka.bootstrap.servers` 'broker:9092', subscribe 'events')")
_WHY = ("Spark does not keep the OPTIONS of a catalog table over a Python data source such as kwire (Spark 4.0 to "
        "4.3 create it with no options when the table is read or written), so the table could never reach Kafka")
_INSTEAD = (f"Use a temporary view instead, in each session: {_VIEW_EXAMPLE} (name 'topic' to INSERT INTO it; both "
            "to read and write it). In a pipeline, read with spark.readStream.format(\"kwire\") in a Python "
            "@dp.table and write with dp.create_sink")


class CatalogTableError(KwireOptionError):
    """kwire was asked to back a catalog table (or was handed no options, as Spark does for one)."""


def is_table_creation(options: Mapping[str, str]) -> bool:
    """Spark is creating a catalog table (CREATE TABLE ... USING kwire, without a column list)."""
    return given({k.lower(): v for k, v in options.items()}, "provider")


def refuse_table_creation() -> CatalogTableError:
    return CatalogTableError(f"CREATE TABLE ... USING kwire is not supported: {_WHY}. {_INSTEAD}.")


def without_table_keys(options):
    """``options`` less the keys Spark adds for a catalog table, should a release pass them to a read or write
    (a copy of the same case-insensitive mapping; ``options`` itself when it has none)."""
    lowered = {k.lower() for k in options}
    drop = [k for k in options if k.lower() in _SPARK_TABLE_KEYS
            or (k.lower().startswith("option.") and k.lower()[len("option."):] in lowered)]
    if not drop:
        return options
    kept = options.copy()
    for key in drop:
        del kept[key]
    return kept


def check_options_given(options: Mapping[str, str]) -> None:
    """Refuse a read or write handed no options of the user's (Spark's own stream-writer keys aside): Spark does
    that for a catalog table, and no kwire use works without at least kafka.bootstrap.servers."""
    if any(k.lower() not in _SPARK_STREAM_WRITE_KEYS for k in options):
        return
    raise CatalogTableError(
        f"kwire was given no options. This is what happens with a catalog table (CREATE TABLE ... USING kwire, "
        f"CREATE TABLE ... AS SELECT, saveAsTable): {_WHY}. {_INSTEAD}. With the DataFrame API, set the options "
        f"on the reader or writer, at least option(\"kafka.bootstrap.servers\", \"host:port\").")
