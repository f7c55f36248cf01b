"""What each use accepts and refuses, derived from the one table (:mod:`.names`): the names a use accepts, the
refusal of a misplaced option (with the reason its row gives) or of an unknown one (with the closest accepted
name), the options of each metadata table, the options a view's read and write each leave aside, the keys Spark
adds itself, and an option's value read with its row's parser and default.

Keys are compared lower-cased (Spark hands a source its options so); messages use the documented spelling.
"""

from __future__ import annotations

import difflib
from typing import Any, Iterable, Mapping

from spark_kwire.spark.errors import KwireOptionError
from spark_kwire.spark.options.names import BY_KEY, KAFKA_REFUSED, OPTIONS, READ_TARGET, READS, WRITE_TARGET, \
    WRITES, Option, Use

__all__ = ["row", "value", "raw", "given", "given_needing", "names_read", "names_write", "accepted", "check_names",
           "metadata_options", "check_metadata_names", "kafka_refused", "ignored_in", "spark_keys", "needing",
           "SUBSCRIPTIONS", "READ_ONLY", "WRITE_ONLY"]

_PREFIXED = tuple(r for r in OPTIONS if r.prefix)


def row(key: str) -> Option | None:
    """The row of an option key (any case), a prefix row for a key it stands for, or None."""
    k = key.lower()
    found = BY_KEY.get(k)
    if found is None:
        found = next((r for r in _PREFIXED if k.startswith(r.key_prefix)), None)
    return found


def value(opts: Mapping[str, Any], name: str) -> Any:
    """Option ``name`` of ``opts`` (lower-case keys) read by its row's parser, or the row's default when absent."""
    option = BY_KEY[name.lower()]
    given_value = opts.get(option.key)
    return option.default if given_value is None else option.parse(option.name, given_value)


def raw(opts: Mapping[str, Any], name: str) -> Any:
    """Option ``name`` of ``opts`` (lower-case keys) as given, unparsed (None when absent): for a value another
    layer reads (from_json's options), or one judged where it is used."""
    return opts.get(BY_KEY[name.lower()].key)


def given(opts: Mapping[str, Any], name: str) -> bool:
    """Whether ``opts`` (lower-case keys) gives option ``name`` (a name of the table: a KeyError otherwise)."""
    return BY_KEY[name.lower()].key in opts


def needing(what: str) -> tuple[Option, ...]:
    """The rows that need ``what`` among the other options (names.TYPED_SIDE, JSON_SIDE, INFERRED_JSON_SIDE)."""
    return tuple(r for r in OPTIONS if r.needs == what)


def given_needing(opts: Mapping[str, Any], what: str) -> list[tuple[str, Option]]:
    """(key as given, row) of the options of ``opts`` (lower-case keys) that need ``what``, in the order given."""
    found = [(key, row(key)) for key in opts if not key.startswith("kafka.")]
    return [(key, option) for key, option in found if option is not None and option.needs == what]


#: The documented names of the options that name the topics a read reads (exactly one of them is given).
SUBSCRIPTIONS = tuple(r.name for r in OPTIONS if r.target == READ_TARGET)
_WRITE_TARGETS = frozenset(r.key for r in OPTIONS if r.target == WRITE_TARGET)


def names_read(options: Mapping[str, Any]) -> bool:
    """The options (any case) name topics to read."""
    keys = {k.lower() for k in SUBSCRIPTIONS}
    return any(k.lower() in keys for k in options)


def names_write(options: Mapping[str, Any]) -> bool:
    """The options (any case) name the topic to write."""
    return any(k.lower() in _WRITE_TARGETS for k in options)


def _in_order(uses: Iterable[Use]) -> list[Use]:
    return [use for use in Use if use in set(uses)]


def _applies(option: Option, uses: Iterable[Use]) -> bool:
    return any(option.applies_to(use) for use in uses)


def accepted(uses: Iterable[Use]) -> list[str]:
    """The documented names the uses accept (any of them), sorted as messages list them."""
    uses = set(uses)
    return sorted((r.name for r in OPTIONS if _applies(r, uses)), key=str.lower)


def _what(uses: Iterable[Use]) -> str:
    uses = frozenset(uses)
    return "a kwire read" if uses == READS else "a kwire " + " or ".join(u.value for u in _in_order(uses))


def _unknown(key: str, known: list[str], what: str) -> KwireOptionError:
    spelled = {name.lower(): name for name in known}
    hint = difflib.get_close_matches(key.lower(), list(spelled), n=1, cutoff=0.75)
    suggestion = f" Did you mean '{spelled[hint[0]]}'?" if hint else ""
    return KwireOptionError(f"Unknown option '{key}' for {what}.{suggestion} Accepted options: {', '.join(known)}, "
                            f"and Kafka client settings prefixed with 'kafka.'.")


def check_names(opts: Mapping[str, Any], uses: Iterable[Use]) -> None:
    """Refuse the options none of ``uses`` takes (``kafka.*`` settings aside, which the client's settings judge): a
    misplaced one with its row's reason, saying where it belongs; an unknown one with the closest accepted name.
    Several uses: what Spark will do is not known yet, and an option any of them takes is accepted."""
    uses = _in_order(uses)
    for key in opts:
        k = key.lower()
        if k.startswith("kafka."):
            continue
        option = row(k)
        if option is not None and _applies(option, uses):
            continue
        reason = None if option is None else next((option.refused[u] for u in uses if u in option.refused), None)
        if reason is not None:
            raise KwireOptionError(f"Option '{option.name}' does not apply to {_what(uses)}: {reason}.")
        raise _unknown(key, accepted(uses), _what(uses))


def metadata_options(table: str) -> list[str]:
    """The documented names a metadata table takes (``metadata`` itself and its filters)."""
    return sorted((r.name for r in OPTIONS if r.applies_to(Use.METADATA) and (not r.tables or table in r.tables)),
                  key=str.lower)


def check_metadata_names(opts: Mapping[str, Any], table: str) -> None:
    """Refuse the options a read of metadata table ``table`` does not take (``opts``: lower-case keys)."""
    for key in opts:
        if key.startswith("kafka."):
            continue
        option = BY_KEY.get(key)
        if option is not None and option.applies_to(Use.METADATA):
            if not option.tables or table in option.tables:
                continue
            raise KwireOptionError(f"Option '{option.name}' does not apply to metadata table '{table}' (only to: "
                                   f"{', '.join(option.tables)}).")
        raise _unknown(key, metadata_options(table), f"a kwire metadata read of table '{table}'")


def kafka_refused(use: Use) -> dict[str, str]:
    """The ``kafka.*`` settings (without the prefix) ``use`` refuses, as Spark's source does, with the reason."""
    return {name: reasons[use] for name, reasons in KAFKA_REFUSED.items() if use in reasons}


def ignored_in(use: Use) -> list[str]:
    """The options ``use`` accepts and ignores with a warning (a stream's options reused by a batch read)."""
    return [r.name for r in OPTIONS if use in r.ignored_in]


def spark_keys(added_by: str) -> tuple[str, ...]:
    """The (lower-case) keys Spark puts into the options itself: for a "streaming write", a "catalog table"."""
    return tuple(r.key for r in OPTIONS if r.added_by_spark == added_by)


def _only(uses: frozenset, others: frozenset) -> frozenset:
    return frozenset(r.key for r in OPTIONS if r.applies_to(Use.VIEW) and _applies(r, uses) and not _applies(r, others))


#: Of the options a view takes, those only reads use and those only writes use: a view naming both topics to read
#: and a topic to write hands each use its options less the other's (spark/sql/definition.py).
READ_ONLY = _only(READS, WRITES)
WRITE_ONLY = _only(WRITES, READS)
