"""New top-level fields met by a stream's read task (schemaEvolutionMode addNewColumns or failOnNewColumns).

The compiled decoder already sets aside what a schema does not hold (its rescued-data column): the side is
decoded with one, and only the rows whose rescued object names a top-level field the schema lacks (names compared
ignoring case) are looked at in Python. The new fields' types are inferred from those rows' rescued text (the
fields' own JSON, as the records hold it) with the read's options, as ``spark.read.json`` would type them; the
wider schema is the recorded one with the new fields after its own (addNewColumns records it as the next version
in the schemaLocation). Either mode then fails the task, so the micro-batch commits nothing and a restart reads
its records again.
"""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pyarrow as pa

from spark_kwire.spark.errors import KwireSchemaError
from spark_kwire.spark.options.inference import ADD_NEW_COLUMNS
from spark_kwire.spark.typed.plain_json.sides import JsonSideDecoder, session_time_zone

__all__ = ["KwireNewFieldsError", "EvolvingJsonSideDecoder", "new_field_rows", "stop_for_new_fields",
           "without_field"]

_UNKNOWN_FIELDS = "__kwire_unknown_fields"  # the rescued column of its own a detecting decoder drops again


class KwireNewFieldsError(KwireSchemaError):
    """A stream met top-level JSON fields its schema does not have (addNewColumns: recorded for the restart;
    failOnNewColumns: not recorded)."""


def without_field(values: pa.StructArray, index: int) -> pa.StructArray:
    """``values`` less its field ``index`` (nulls kept)."""
    keep = [i for i in range(values.type.num_fields) if i != index]
    return pa.StructArray.from_arrays([values.field(i) for i in keep], fields=[values.type.field(i) for i in keep],
                                      mask=values.is_null())


def new_field_rows(rescued: pa.Array, known: set[str]) -> tuple[dict[str, int], list[str], bool]:
    """({new field name: first row}, the rescued texts of the rows that have new fields, whether any row has a
    rescued value at all) for a rescued-data column; ``known`` holds the schema's top-level names, lower-cased."""
    valid = np.asarray(rescued.is_valid())
    rows = np.flatnonzero(valid)
    first: dict[str, int] = {}
    texts: list[str] = []
    if not len(rows):
        return first, texts, False
    for row, text in zip(rows, rescued.take(pa.array(rows)).to_pylist()):
        try:
            names = json.loads(text)
        except ValueError:
            continue
        fresh = [name for name in names if name.lower() not in known] if isinstance(names, dict) else []
        if fresh:
            texts.append(text)
            for name in fresh:
                first.setdefault(name, int(row))
    return first, texts, True


def _new_fields_json(texts: list[str], names: set[str], typed) -> list[dict]:
    from spark_kwire.formats.json.inference.infer import infer_schema
    from spark_kwire.formats.json.inference.render import spark_json
    from spark_kwire.spark.typed.plain_json.inferred import inference_options

    options = {**inference_options(typed), "mode": "PERMISSIVE"}
    inferred = json.loads(spark_json(infer_schema(texts, options, time_zone=session_time_zone())))
    return [f for f in inferred["fields"] if f["name"] in names]


def _record_wider(resolved, typed, fields: list[dict]) -> tuple[int, list[dict]]:
    """(the version that holds the new fields, the fields it added) in the schemaLocation."""
    from spark_kwire.spark.typed.plain_json.schema_location import latest, record

    location, side = typed.evolution.location, resolved.spec.side
    for _attempt in range(20):  # other tasks may record versions at the same time
        found = latest(location)
        version, schemas = found if found is not None else (None, {})
        base = json.loads(schemas.get(side, resolved.schema))
        have = {f["name"].lower() for f in base["fields"]}
        added = [f for f in fields if f["name"].lower() not in have]
        if not added:
            return version, []
        wider = dict(schemas, **{side: json.dumps({**base, "fields": base["fields"] + added})})
        number = record(location, wider, version)
        if number is not None:
            return number, added
    raise KwireSchemaError(f"Could not record a new schema version in {location!r} (schemaLocation): other writers "
                           f"kept recording versions first.")


def stop_for_new_fields(resolved, typed, rescued_texts: list[str], first: dict[str, int], where) -> None:
    """Raises KwireNewFieldsError for the new fields ``first`` ({name: first row}), after recording the wider
    schema when the mode is addNewColumns."""
    from spark_kwire.formats.json.inference.render import spark_ddl
    from spark_kwire.formats.json.schema_text import parse_schema_text
    from spark_kwire.spark.typed.plain_json.schema_location import versions_dir

    spec, evolution = resolved.spec, typed.evolution
    fields = _new_fields_json(rescued_texts, set(first), typed)
    if not fields:  # only fields inference leaves out (dropFieldIfAllNull): none to add, as spark.read.json
        return
    shown = spark_ddl(parse_schema_text(json.dumps({"type": "struct", "fields": fields})))
    met = f"at {where(min(first[f['name']] for f in fields))}"
    folder = versions_dir(evolution.location)
    if evolution.mode == ADD_NEW_COLUMNS:
        version, _added = _record_wider(resolved, typed, fields)
        raise KwireNewFieldsError(
            f"The {spec.side}s being read have top-level fields their schema does not have ({shown}; first {met}). "
            f"schemaEvolutionMode=addNewColumns recorded the wider schema as version {version} in {folder} and "
            f"stopped the query: start it again from load() with the same checkpointLocation to read with that "
            f"schema. This micro-batch committed nothing; the restarted query reads its records again, with the new "
            f"fields.")
    raise KwireNewFieldsError(
        f"The {spec.side}s being read have top-level fields their schema does not have ({shown}; first {met}). "
        f"schemaEvolutionMode=failOnNewColumns stops the query and keeps the schema (version {evolution.version} "
        f"in {folder}). To go on, restart with schemaEvolutionMode=addNewColumns (records the new fields), rescue "
        f"(keeps them in the rescued-data column) or none (drops them).")


class EvolvingJsonSideDecoder(JsonSideDecoder):
    """A stream's JSON side that detects new fields: decoded with a rescued-data column (``rescuedDataColumn``, or
    one of its own that is dropped again), it stops at a new top-level field; rows whose rescued values are only
    values of another type are decoded again without rescuing, as the read asks."""

    def __init__(self, resolved, typed) -> None:
        super().__init__(resolved, typed)
        self.own = self.options.rescued_column is not None
        if self.own:
            self.rescuing = self.decoder
        else:
            with_rescue = replace(self.options, rescued_column=_UNKNOWN_FIELDS)
            self.rescuing = resolved.spec.payload.decoder(resolved.schema, json_options=with_rescue)
        self.known = {f.name.lower() for f in self.rescuing.arrow_type}

    def _result(self, raw: pa.Array, mode: str, where):
        result = self._decode(self.rescuing, raw, mode, where)
        index = result.values.type.num_fields - 1
        first, texts, any_rescued = new_field_rows(result.values.field(index), self.known)
        if first:
            stop_for_new_fields(self.resolved, self.typed, texts, first, where)
        if self.own:
            return result
        if any_rescued:
            return self._decode(self.decoder, raw, mode, where)
        result.values = without_field(result.values, index)
        return result
