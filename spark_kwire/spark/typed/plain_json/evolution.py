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

import os
import re
from dataclasses import dataclass
from typing import Any, Mapping

from spark_kwire.spark.errors import KwireOptionError
from spark_kwire.spark.options.values import parse_positive_int

__all__ = ["Evolution", "MODES", "ADD_NEW_COLUMNS", "RESCUE", "FAIL_ON_NEW_COLUMNS", "NONE", "DEFAULT_RESCUED_COLUMN",
           "parse_evolution", "parse_sampling", "refuse_without_json", "DEFAULT_SAMPLING_RECORDS",
           "DEFAULT_SAMPLING_TIMEOUT_MS"]

ADD_NEW_COLUMNS, RESCUE, FAIL_ON_NEW_COLUMNS, NONE = "addNewColumns", "rescue", "failOnNewColumns", "none"
MODES = (ADD_NEW_COLUMNS, RESCUE, FAIL_ON_NEW_COLUMNS, NONE)
DEFAULT_RESCUED_COLUMN = "_rescued_data"
DEFAULT_SAMPLING_RECORDS = 1_000
DEFAULT_SAMPLING_TIMEOUT_MS = 30_000
_NAMES = ("samplingRecords", "samplingTimeoutMs", "schemaLocation", "schemaEvolutionMode")
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


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
    for name in _NAMES:
        if name.lower() in opts:
            raise KwireOptionError(f"Option '{name}' applies to plain JSON read with no schema: set 'valueFormat' (or "
                                   f"'keyFormat') to json and leave out 'valueSchema' ('keySchema').")


def parse_sampling(opts: Mapping[str, Any], sides) -> tuple[int, int]:
    """(records per partition, time bound in ms) of the inference at load()."""
    inferred = [s for s in sides if s.payload.capabilities.infers_schema and s.schema is None]
    if not inferred:
        for name in _NAMES[:2]:
            if name.lower() in opts:
                _refuse_with_schemas(name, sides)
    return (parse_positive_int(opts, "samplingRecords", DEFAULT_SAMPLING_RECORDS),
            parse_positive_int(opts, "samplingTimeoutMs", DEFAULT_SAMPLING_TIMEOUT_MS))


def _refuse_with_schemas(name: str, sides) -> None:
    json_sides = [s for s in sides if s.payload.capabilities.infers_schema]
    if not json_sides:
        refuse_without_json({name.lower(): ""})
    given = " and ".join(f"'{s.option('schema')}'" for s in json_sides)
    raise KwireOptionError(f"Option '{name}' applies to a plain JSON side whose schema is inferred; {given} gives "
                           f"the schema. Drop one of them.")


def _mode(opts: Mapping[str, Any]) -> str | None:
    raw = opts.get("schemaevolutionmode")
    if raw is None:
        return None
    by_lower = {m.lower(): m for m in MODES}
    mode = by_lower.get(str(raw).strip().lower())
    if mode is None:
        raise KwireOptionError(f"Option 'schemaEvolutionMode' must be one of {', '.join(MODES)} (Auto Loader's "
                               f"values), got {raw!r}.")
    return mode


def _location(raw: Any) -> str:
    text = str(raw).strip()
    if text.lower().startswith("file:"):
        text = re.sub(r"^file:(//)?", "", text, flags=re.I)
    elif _URI.match(text):
        raise KwireOptionError(
            f"Option 'schemaLocation' must be a directory kwire can write with plain file operations: an absolute "
            f"local path or a mounted one (e.g. /dbfs/..., /Volumes/..., an NFS mount) seen at the same path by the "
            f"driver and the executors; {raw!r} is a URI kwire cannot write.")
    if not os.path.isabs(text):
        raise KwireOptionError(f"Option 'schemaLocation' must be an absolute path (the executors record new schema "
                               f"versions there, from their own working directories), got {raw!r}.")
    return os.path.normpath(text)


def parse_evolution(opts: Mapping[str, Any], sides, json_given: tuple) -> tuple[Evolution | None, tuple]:
    """(the stream's Evolution or None, the JSON options with the rescued-data column rescue mode implies)."""
    mode, raw_location = _mode(opts), opts.get("schemalocation")
    if mode is None and raw_location is None:
        return None, json_given
    json_sides = [s for s in sides if s.payload.capabilities.evolves_schema]
    if not json_sides:
        refuse_without_json(opts)
    inferred = [s for s in json_sides if s.schema is None]
    location = None
    if raw_location is not None:
        if len(inferred) < len(json_sides):
            _refuse_with_schemas("schemaLocation", [s for s in json_sides if s.schema is not None])
        location = _location(raw_location)
    mode = mode or (ADD_NEW_COLUMNS if location else NONE)
    if mode in (ADD_NEW_COLUMNS, FAIL_ON_NEW_COLUMNS) and location is None:
        raise KwireOptionError(
            f"schemaEvolutionMode={mode} compares the records with a recorded schema, so it needs 'schemaLocation' "
            f"(a directory where the inferred schema's versions are kept). Without one, a stream's schema is "
            f"inferred when it starts and stays fixed: schemaEvolutionMode=rescue keeps new fields in the "
            f"rescued-data column, none (the default) drops them.")
    if mode == RESCUE and not any(name.lower() == "rescueddatacolumn" for name, _ in json_given):
        json_given = (*json_given, ("rescuedDataColumn", DEFAULT_RESCUED_COLUMN))
    return Evolution(mode, location), json_given
