"""The table of kwire's options (spark_kwire/spark/options/names.py) is whole, and the parsing of every use goes
through it: for each option and each use, parsing options that give it accepts it where the table says it applies
and refuses it elsewhere with the table's reason. No Spark, no broker."""

from __future__ import annotations

import pytest

from spark_kwire.client.admin.cluster_tables import TABLES
from spark_kwire.spark.errors import KwireOptionError
from spark_kwire.spark.metadata.options import parse_metadata_options
from spark_kwire.spark.options.names import BY_KEY, INFERRED_JSON_SIDE, JSON_SIDE, OPTIONS, READS, TYPED_SIDE, \
    WRITES, Use
from spark_kwire.spark.options.parsing import ReadOptions, WriteOptions
from spark_kwire.spark.options.rules import READ_ONLY, SUBSCRIPTIONS, WRITE_ONLY, accepted, given, metadata_options, \
    names_read, names_write, value
from spark_kwire.spark.sql.definition import judge_definition

_DATA_USES = (Use.BATCH_READ, Use.STREAM_READ, Use.BATCH_WRITE, Use.STREAM_WRITE, Use.VIEW)
_READ = {"kafka.bootstrap.servers": "localhost:9", "subscribe": "t"}
_WRITE = {"kafka.bootstrap.servers": "localhost:9", "topic": "t"}


def _parse(use: Use, options: dict) -> None:
    if use is Use.BATCH_READ:
        ReadOptions.parse({**_READ, **options}, streaming=False)
    elif use is Use.STREAM_READ:
        ReadOptions.parse({**_READ, **options}, streaming=True)
    elif use is Use.BATCH_WRITE:
        WriteOptions.parse({**_WRITE, **options}, streaming=False, warn=False)
    elif use is Use.STREAM_WRITE:
        WriteOptions.parse({**_WRITE, "checkpointlocation": "/c", **options}, streaming=True, warn=False)
    else:
        judge_definition({"kafka.bootstrap.servers": "localhost:9", **options})


def _refusal(use: Use, key: str) -> str | None:
    """The message refusing option ``key`` by name in ``use``, or None when its name is accepted (its value, an
    arbitrary one here, may still be refused, or need other options)."""
    try:
        _parse(use, {key: "x"})
    except KwireOptionError as error:
        text = str(error)
        return text if "does not apply to" in text or "Unknown option" in text else None
    return None


def test_every_option_is_placed_in_every_use():
    """Each option applies to a use or says why not (the metadata tables aside: there, other options are unknown)."""
    wrong = [f"{o.name}: {use.name} neither applies nor refuses with a reason" for o in OPTIONS for use in _DATA_USES
             if not o.applies_to(use) and use not in o.refused]
    wrong += [f"{o.name}: {use.name} both applies and refuses" for o in OPTIONS for use in o.refused
              if o.applies_to(use)]
    wrong += [f"{o.name}: metadata tables {set(o.tables) - set(TABLES)} do not exist" for o in OPTIONS
              if not set(o.tables) <= set(TABLES)]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("use", _DATA_USES, ids=lambda use: use.name)
def test_each_use_accepts_and_refuses_every_option_as_the_table_says(use):
    wrong = []
    for option in OPTIONS:
        key = option.key + "x" if option.prefix else option.key  # a key of the family a prefix row stands for
        if option.added_by_spark == "catalog table":
            continue  # taken away before any use sees them (spark/sql/catalog_tables.py)
        if use is Use.VIEW and option.key == "metadata":
            continue  # option("metadata", ...) makes a metadata read: the view's judgment never sees it
        refusal = _refusal(use, key)
        if option.applies_to(use) and refusal is not None:
            wrong.append(f"{option.name} in {use.name}: refused ({refusal})")
        elif not option.applies_to(use):
            expected = f"Option '{option.name}' does not apply to a kwire {use.value}: {option.refused[use]}."
            if refusal != expected:
                wrong.append(f"{option.name} in {use.name}: {refusal!r}, the table says {expected!r}")
    assert not wrong, "\n".join(wrong)


def test_an_unknown_option_gets_the_closest_name_the_use_accepts():
    with pytest.raises(KwireOptionError, match=r"Unknown option 'deliveryguarante' for a kwire write\. Did you mean "
                                               r"'deliveryGuarantee'\?"):
        _parse(Use.BATCH_WRITE, {"deliveryguarante": "exactly-once"})
    with pytest.raises(KwireOptionError) as info:
        _parse(Use.BATCH_READ, {"maxRecordsPerPartiton": "5"})
    assert "Did you mean 'maxRecordsPerPartition'?" in str(info.value)
    assert all(name in str(info.value) for name in accepted({Use.BATCH_READ}))  # the accepted names, listed


def test_the_metadata_tables_take_the_options_the_table_gives_them():
    for table in TABLES:
        names = metadata_options(table)
        assert "metadata" in names
        for option in (o for o in OPTIONS if o.applies_to(Use.METADATA) and o.key != "metadata"):
            options = {"kafka.bootstrap.servers": "localhost:9", option.key: "x"}
            if table in option.tables:
                parse_metadata_options(table, options)
            else:
                with pytest.raises(KwireOptionError, match=f"Option '{option.name}' does not apply to metadata "
                                                           f"table '{table}' \\(only to: {', '.join(option.tables)}"):
                    parse_metadata_options(table, options)


def test_a_view_read_and_written_leaves_each_uses_options_to_it():
    assert {"topic", "deliveryguarantee", "ignorenullfields"} <= WRITE_ONLY
    assert {"startingoffsets", "mode", "schemalocation"} <= READ_ONLY
    assert not READ_ONLY & WRITE_ONLY
    for key in READ_ONLY | WRITE_ONLY:
        option = BY_KEY[key]
        assert option.applies_to(Use.VIEW) and (option.uses & READS) and not (option.uses & WRITES) or \
            (option.uses & WRITES) and not (option.uses & READS)
    # a view naming both: its read leaves ignoreNullFields (only a write's) aside
    both = {"kafka.bootstrap.servers": "localhost:9", "subscribe": "t", "topic": "t", "valueFormat": "json",
            "ignoreNullFields": "false", "startingOffsets": "earliest"}
    definition = judge_definition(both)
    assert definition.read is not None and definition.write is not None


def test_the_json_options_are_those_the_format_layer_reads():
    """The table names from_json's and to_json's options itself (importing the JSON format costs every task its
    kernels); they must be the ones formats/json reads (columnNameOfCorruptRecord is a row of every typed format)."""
    from spark_kwire.formats.json import READ_OPTIONS, WRITE_OPTIONS
    from spark_kwire.spark.options.names import JSON_OPTIONS

    def taken_by(use):
        return {name for name in JSON_OPTIONS if BY_KEY[name.lower()].applies_to(use)}

    assert taken_by(Use.BATCH_READ) | {"columnNameOfCorruptRecord"} == set(READ_OPTIONS)
    assert taken_by(Use.BATCH_WRITE) == set(WRITE_OPTIONS)


_NEEDS_MESSAGE = {TYPED_SIDE: "applies only to typed keys or values", JSON_SIDE: "applies to plain JSON: set",
                  INFERRED_JSON_SIDE: "applies to plain JSON read with no schema"}


@pytest.mark.parametrize("use", (Use.BATCH_READ, Use.BATCH_WRITE), ids=lambda use: use.name)
def test_an_option_needing_a_typed_or_json_side_is_refused_without_one(use):
    """The table's ``needs`` decides: each row that needs a typed (or plain JSON) key or value is refused, saying
    so, when both are binary; a row needing nothing is not refused for that."""
    wrong = []
    for option in OPTIONS:
        if not option.applies_to(use) or option.added_by_spark or option.key in ("subscribe", "topic"):
            continue
        key = option.key + "x" if option.prefix else option.key
        try:
            _parse(use, {key: "1"})
            refusal = ""
        except KwireOptionError as error:
            refusal = str(error)
        needs_message = next((m for what, m in _NEEDS_MESSAGE.items() if m in refusal), None)
        if option.needs is not None and _NEEDS_MESSAGE[option.needs] not in refusal:
            wrong.append(f"{option.name} needs a {option.needs} but binary sides got {refusal!r}")
        elif option.needs is None and needs_message is not None:
            wrong.append(f"{option.name} needs nothing in the table but was refused: {refusal!r}")
    assert not wrong, "\n".join(wrong)


def test_the_topics_of_a_read_and_a_write_are_named_by_the_table():
    assert SUBSCRIPTIONS == ("subscribe", "subscribePattern", "assign")
    assert names_read({"SubscribePattern": "t.*"}) and not names_read({"topic": "t"})
    assert names_write({"TOPIC": "t"}) and not names_write({"assign": "{}"})
    with pytest.raises(KwireOptionError, match="Exactly one of the options 'subscribe', 'subscribePattern' or "
                                               "'assign' must be set \\(none was given\\)"):
        ReadOptions.parse({"kafka.bootstrap.servers": "localhost:9"})


def test_an_option_read_by_a_name_the_table_lacks_is_a_mistake_of_ours():
    with pytest.raises(KeyError):
        given({"subscribe": "t"}, "subscribes")
    with pytest.raises(KeyError):
        value({"subscribe": "t"}, "subscribes")
