"""Options of a metadata read (``option("metadata", <table>)``): the table, its topic and group filters, and the
options of the connection check (``option("metadata", "check")``). Which options each table takes is the table's
(rows of :mod:`spark_kwire.spark.options.names` for ``Use.METADATA``)."""

from __future__ import annotations

from typing import Mapping

from spark_kwire.client.admin.cluster_tables import NameFilter
from spark_kwire.client.check.options import CheckSettings, parse_check_options
from spark_kwire.client.errors import ConfigError
from spark_kwire.client.settings.config import ClientConfig
from spark_kwire.spark.errors import KwireOptionError
from spark_kwire.spark.options.names import BY_KEY, METADATA_TABLES, OPTIONS, Use
from spark_kwire.spark.options.parsing import kafka_params, kafka_settings, warn_ignored
from spark_kwire.spark.options.rules import check_metadata_names, given, spark_keys, value
from spark_kwire.spark.options.values import CHECK_TABLE

__all__ = ["CHECK_TABLE", "METADATA_TABLES", "CHECK_OWN_OPTIONS", "metadata_table_name", "parse_name_filter",
           "parse_metadata_options", "parse_check_table_options"]

#: The check table's own options (besides kafka.*, schema.registry.* and the topics): the rows only it takes.
CHECK_OWN_OPTIONS = tuple(r.name for r in OPTIONS if r.uses == {Use.METADATA} and r.tables == (CHECK_TABLE,))


def metadata_table_name(table: str | None) -> str:
    """The table named by option 'metadata' (case-insensitive): one of the cluster tables, or the check."""
    option = BY_KEY["metadata"]
    return option.parse(option.name, table)


def parse_name_filter(opts: Mapping[str, str], names: str, pattern: str) -> NameFilter:
    """Exact names (`subscribe` / `groups`), a whole-name regex (`subscribePattern` / `groupPattern`), or all."""
    if given(opts, names) and given(opts, pattern):
        raise KwireOptionError(f"Give at most one of the options '{names}' and '{pattern}'.")
    if given(opts, names):
        return NameFilter(names=value(opts, names), option=names)
    if given(opts, pattern):
        return NameFilter(pattern=value(opts, pattern), option=pattern)
    return NameFilter()


def parse_metadata_options(table: str, options: Mapping[str, str]) -> tuple[str, ClientConfig, NameFilter, NameFilter]:
    """(table, Kafka client settings, topic filter, group filter), after rejecting options that do not apply."""
    table = metadata_table_name(table)
    opts = {str(k).lower(): v for k, v in options.items()}
    check_metadata_names(opts, table)
    values, settings = kafka_settings(kafka_params(opts, Use.METADATA))
    warn_ignored(values)
    topics = parse_name_filter(opts, "subscribe", "subscribePattern")
    groups = parse_name_filter(opts, "groups", "groupPattern")
    return table, settings, topics, groups


def parse_check_table_options(options: Mapping[str, str]) -> tuple[CheckSettings, int | None]:
    """The check table's settings (the client's :class:`CheckSettings`, secrets masked) and ``checkTasks`` (None
    when not given: the table chooses). The keys Spark adds to a catalog table's options are left aside; an option the
    table does not take, or a wrong value, raises :class:`KwireOptionError` naming it and what is accepted."""
    aside = set(spark_keys("catalog table"))
    given_options = {str(k): v for k, v in options.items() if str(k).lower() not in aside}
    opts = {k.lower(): v for k, v in given_options.items()}
    check_metadata_names(opts, CHECK_TABLE)
    tasks = value(opts, "checkTasks")
    # the client's check reads the rest with its own names (kafka.* as given: Kafka's settings are case-sensitive)
    for_client = {k: v for k, v in given_options.items() if k.lower() not in ("metadata", "checktasks")}
    try:
        return parse_check_options(for_client), tasks
    except ConfigError as exc:
        raise KwireOptionError(str(exc)) from None
