"""Options of a metadata read (``option("metadata", <table>)``): the table, its topic and group filters. Which
options each table takes is the table's (rows of :mod:`spark_kwire.spark.options.names` for ``Use.METADATA``)."""

from __future__ import annotations

from typing import Mapping

from spark_kwire.client.admin.cluster_tables import NameFilter
from spark_kwire.client.settings.config import ClientConfig
from spark_kwire.spark.errors import KwireOptionError
from spark_kwire.spark.options.names import BY_KEY, Use
from spark_kwire.spark.options.parsing import kafka_params, kafka_settings, warn_ignored
from spark_kwire.spark.options.rules import check_metadata_names, given, value


def metadata_table_name(table: str | None) -> str:
    """The table named by option 'metadata' (case-insensitive), one of the cluster tables."""
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
