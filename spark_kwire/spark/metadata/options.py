"""Options of a metadata read (``option("metadata", <table>)``): the table, its topic and group filters."""

from __future__ import annotations

import difflib
from typing import Mapping

from spark_kwire.client.admin.cluster_tables import TABLES, NameFilter
from spark_kwire.client.settings.config import ClientConfig
from spark_kwire.spark.errors import KwireOptionError
from spark_kwire.spark.options.parsing import kafka_params, kafka_settings, parse_names, parse_pattern, warn_ignored

# The options a metadata read accepts (lower-case key -> documented spelling), and which tables use them.
_METADATA_OPTION_NAMES = {"metadata": "metadata", "subscribe": "subscribe", "subscribepattern": "subscribePattern",
                          "groups": "groups", "grouppattern": "groupPattern"}
_TOPIC_FILTERS = ("subscribe", "subscribepattern")
_GROUP_FILTERS = ("groups", "grouppattern")
_APPLIES = {"topics": _TOPIC_FILTERS, "partitions": _TOPIC_FILTERS, "groups": _GROUP_FILTERS,
            "group_offsets": _TOPIC_FILTERS + _GROUP_FILTERS}


def metadata_table_name(table: str | None) -> str:
    """The table named by option 'metadata' (case-insensitive), one of the cluster tables."""
    name = (table or "").strip().lower()
    if name not in TABLES:
        hint = difflib.get_close_matches(name, TABLES, n=1, cutoff=0.6)
        suggestion = f" Did you mean '{hint[0]}'?" if hint else ""
        raise KwireOptionError(
            f"Unknown metadata table {table!r} (option 'metadata').{suggestion} "
            f"Accepted tables: {', '.join(TABLES)}."
        )
    return name


def parse_name_filter(opts: Mapping[str, str], names_key: str, pattern_key: str, what: str) -> NameFilter:
    """Exact names (`subscribe` / `groups`), a whole-name regex (`subscribePattern` / `groupPattern`), or all."""
    spelled = _METADATA_OPTION_NAMES
    given = [k for k in (names_key, pattern_key) if k in opts]
    if len(given) > 1:
        raise KwireOptionError(f"Give at most one of the options '{spelled[names_key]}' and '{spelled[pattern_key]}'.")
    if names_key in opts:
        return NameFilter(names=parse_names(opts[names_key], spelled[names_key], what), option=spelled[names_key])
    if pattern_key in opts:
        return NameFilter(pattern=parse_pattern(opts[pattern_key], spelled[pattern_key]), option=spelled[pattern_key])
    return NameFilter()


def parse_metadata_options(table: str, options: Mapping[str, str]) -> tuple[str, ClientConfig, NameFilter, NameFilter]:
    """(table, Kafka client settings, topic filter, group filter), after rejecting options that do not apply."""
    table = metadata_table_name(table)
    opts = {str(k).lower(): v for k, v in options.items()}
    for key in opts:
        if key.startswith("kafka.") or key == "metadata" or key in _APPLIES[table]:
            continue
        if key in _METADATA_OPTION_NAMES:
            usable = ", ".join(t for t in TABLES if key in _APPLIES[t])
            raise KwireOptionError(
                f"Option '{_METADATA_OPTION_NAMES[key]}' does not apply to metadata table '{table}' (only to: {usable}).")
        accepted = ["metadata"] + [_METADATA_OPTION_NAMES[k] for k in _APPLIES[table]]
        hint = difflib.get_close_matches(key, [a.lower() for a in accepted], n=1, cutoff=0.75)
        suggestion = f" Did you mean '{_METADATA_OPTION_NAMES[hint[0]]}'?" if hint else ""
        raise KwireOptionError(
            f"Unknown option '{key}' for a kwire metadata read of table '{table}'.{suggestion} Accepted options: "
            f"{', '.join(accepted)}, and Kafka client settings prefixed with 'kafka.'."
        )
    values, settings = kafka_settings(kafka_params(opts))
    warn_ignored(values)
    topics = parse_name_filter(opts, "subscribe", "subscribepattern", "topic")
    groups = parse_name_filter(opts, "groups", "grouppattern", "group")
    return table, settings, topics, groups
