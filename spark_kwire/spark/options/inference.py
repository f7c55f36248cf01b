"""The options of a plain JSON side read with no schema: how it is sampled (``samplingRecords``,
``samplingTimeoutMs``) and, in streams, where the inferred schema's versions are kept (``schemaLocation``) and
what a stream does with top-level fields the schema does not have (``schemaEvolutionMode``, Auto Loader's names):

* ``addNewColumns`` (the default with a schemaLocation): the micro-batch that meets new fields records a wider
  schema in the location and fails; a restart of the query reads with it;
* ``rescue``: the schema never widens; unknown fields (and values of another type) go to the rescued-data column,
  ``rescuedDataColumn`` or, when none is named, ``_rescued_data`` (Auto Loader's default name);
* ``failOnNewColumns``: the micro-batch that meets new fields fails, the schema unchanged;
* ``none`` (the default without a schemaLocation): new fields are dropped, as ``from_json`` drops them.

``addNewColumns`` and ``failOnNewColumns`` compare with a recorded schema, so they need a schemaLocation;
``rescue`` and ``none`` work with a schema inferred at the start (or given in ``valueSchema``) too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from spark_kwire.spark.errors import KwireOptionError
from spark_kwire.spark.options.names import BY_KEY, INFERRED_JSON_SIDE
from spark_kwire.spark.options.rules import given, needing, value
from spark_kwire.spark.options.values import EVOLUTION_MODES as MODES

__all__ = ["Evolution", "MODES", "ADD_NEW_COLUMNS", "RESCUE", "FAIL_ON_NEW_COLUMNS", "NONE", "DEFAULT_RESCUED_COLUMN",
           "parse_evolution", "parse_sampling", "refuse_without_json", "DEFAULT_SAMPLING_RECORDS",
           "DEFAULT_SAMPLING_TIMEOUT_MS"]

ADD_NEW_COLUMNS, RESCUE, FAIL_ON_NEW_COLUMNS, NONE = MODES
DEFAULT_RESCUED_COLUMN = "_rescued_data"
DEFAULT_SAMPLING_RECORDS = BY_KEY["samplingrecords"].default
DEFAULT_SAMPLING_TIMEOUT_MS = BY_KEY["samplingtimeoutms"].default
_RESCUED_OPTION = BY_KEY["rescueddatacolumn"].name  # the JSON options given are (documented name, value) pairs


@dataclass(frozen=True)
class Evolution:
    """A stream's schema evolution: ``mode`` (one of MODES), ``location`` (an absolute local or mounted directory,
    or None) and ``version``, the recorded version the read's schema came from (None: not recorded yet)."""

    mode: str
    location: str | None = None
    version: int | None = None

    @property
    def detects_new_fields(self) -> bool:
        return self.mode in (ADD_NEW_COLUMNS, FAIL_ON_NEW_COLUMNS)


def refuse_without_json(opts: Mapping[str, Any]) -> None:
    """These options shape a plain JSON side's inferred schema: refused when no side is JSON."""
    for option in needing(INFERRED_JSON_SIDE):
        if given(opts, option.name):
            raise KwireOptionError(f"Option '{option.name}' applies to plain JSON read with no schema: set "
                                   f"'valueFormat' (or 'keyFormat') to json and leave out 'valueSchema' ('keySchema').")


def parse_sampling(opts: Mapping[str, Any], sides) -> tuple[int, int]:
    """(records per partition, time bound in ms) of the inference at load()."""
    inferred = [s for s in sides if s.payload.capabilities.infers_schema and s.schema is None]
    if not inferred:
        for name in ("samplingRecords", "samplingTimeoutMs"):  # the evolution's options are judged below
            if given(opts, name):
                _refuse_with_schemas(name, sides)
    return value(opts, "samplingRecords"), value(opts, "samplingTimeoutMs")


def _refuse_with_schemas(name: str, sides) -> None:
    json_sides = [s for s in sides if s.payload.capabilities.infers_schema]
    if not json_sides:
        refuse_without_json({name.lower(): ""})
    schemas = " and ".join(f"'{s.option('schema')}'" for s in json_sides)
    raise KwireOptionError(f"Option '{name}' applies to a plain JSON side whose schema is inferred; {schemas} gives "
                           f"the schema. Drop one of them.")


def parse_evolution(opts: Mapping[str, Any], sides, json_given: tuple) -> tuple[Evolution | None, tuple]:
    """(the stream's Evolution or None, the JSON options with the rescued-data column rescue mode implies)."""
    mode = value(opts, "schemaEvolutionMode")
    if mode is None and not given(opts, "schemaLocation"):
        return None, json_given
    json_sides = [s for s in sides if s.payload.capabilities.evolves_schema]
    if not json_sides:
        refuse_without_json(opts)
    inferred = [s for s in json_sides if s.schema is None]
    location = None
    if given(opts, "schemaLocation"):
        if len(inferred) < len(json_sides):
            _refuse_with_schemas("schemaLocation", [s for s in json_sides if s.schema is not None])
        location = value(opts, "schemaLocation")
    mode = mode or (ADD_NEW_COLUMNS if location else NONE)
    if mode in (ADD_NEW_COLUMNS, FAIL_ON_NEW_COLUMNS) and location is None:
        raise KwireOptionError(
            f"schemaEvolutionMode={mode} compares the records with a recorded schema, so it needs 'schemaLocation' "
            f"(a directory where the inferred schema's versions are kept). Without one, a stream's schema is "
            f"inferred when it starts and stays fixed: schemaEvolutionMode=rescue keeps new fields in the "
            f"rescued-data column, none (the default) drops them.")
    if mode == RESCUE and not any(name == _RESCUED_OPTION for name, _ in json_given):
        json_given = (*json_given, (_RESCUED_OPTION, DEFAULT_RESCUED_COLUMN))
    return Evolution(mode, location), json_given
