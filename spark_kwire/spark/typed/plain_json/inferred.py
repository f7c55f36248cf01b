"""The schema of a plain JSON side read with no ``valueSchema`` (``keySchema``), decided on the driver at load():
the latest version recorded in the stream's ``schemaLocation``, else inferred from records sampled from the topic
(``reading/sampling.py``) as ``spark.read.json`` infers it from the same strings, with the read's JSON options
(primitivesAsString, prefersDecimal, dropFieldIfAllNull, allowComments...) and its mode.

Refused, with the way out (give the schema): an inferred schema with no field (nothing to type), and one with
two fields whose names are the same ignoring case, at any depth, as ``spark.read.json`` refuses them for files
(COLUMN_ALREADY_EXISTS).

Session settings: a Python data source cannot read the session's SQL settings when a DataFrame is defined
(Spark gives its planning worker none, PySpark 4.0 to 4.3), so inference uses Spark's defaults for
``spark.sql.caseSensitive`` (false), ``spark.sql.timestampType`` (TIMESTAMP_LTZ) and ``spark.sql.timeType.enabled``
(false); the last two matter only with inferTimestamp. The time zone is the ``timeZone`` option, else the machine's.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pyarrow as pa

from spark_kwire.formats.errors import SchemaError
from spark_kwire.spark.errors import KwireOptionError, KwireSchemaError
from spark_kwire.spark.options.payloads import DEFAULT_CORRUPT_COLUMN, SideSpec, TypedOptions

__all__ = ["inferred_schema", "with_recorded_version", "record_first_version", "duplicate_names",
           "inference_options"]


def inference_options(typed: TypedOptions) -> dict:
    """The read's options as ``infer_schema`` takes them (Spark's names), with its mode and corrupt column."""
    given = dict(typed.json)
    given["mode"] = typed.mode
    given["columnNameOfCorruptRecord"] = typed.corrupt_column or DEFAULT_CORRUPT_COLUMN
    return given


def with_recorded_version(typed: TypedOptions) -> tuple[TypedOptions, dict[str, str]]:
    """``typed`` noting the latest version recorded in its schemaLocation, and that version's schemas by side."""
    from spark_kwire.spark.typed.plain_json.schema_location import latest

    evolution = typed.evolution
    if evolution is None or evolution.location is None:
        return typed, {}
    found = latest(evolution.location)
    if found is None:
        return typed, {}
    version, schemas = found
    return replace(typed, evolution=replace(evolution, version=version)), schemas


def duplicate_names(t: pa.DataType, path: str = "") -> list[str]:
    """Fields of struct ``t`` (at any depth) whose names repeat ignoring case, as 'path.name'."""
    found = []
    if pa.types.is_struct(t):
        seen: dict[str, str] = {}
        for field in t:
            key = field.name.lower()
            if key in seen:
                found.append(f"{path}{seen[key]}' and '{path}{field.name}")
            seen.setdefault(key, field.name)
            found += duplicate_names(field.type, f"{path}{field.name}.")
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        found += duplicate_names(t.value_type, path)
    return found


def inferred_schema(spec: SideSpec, typed: TypedOptions, options, recorded: dict[str, str],
                    sample=None) -> tuple[str, str]:
    """(StructType JSON text, where it came from) of a JSON side with no schema given; ``sample`` (``options``,
    side, ``records_per_partition=``, ``timeout_ms=``) gives the payloads to infer from (the reading layer's
    ``reading.sampling.sample_values``)."""
    from spark_kwire.formats.json.inference.infer import JsonInferenceError, infer_schema
    from spark_kwire.formats.json.inference.render import spark_ddl, spark_json
    from spark_kwire.spark.options.inference import DEFAULT_SAMPLING_RECORDS, DEFAULT_SAMPLING_TIMEOUT_MS
    from spark_kwire.spark.typed.plain_json.sides import session_time_zone

    if spec.side in recorded:
        from spark_kwire.spark.typed.plain_json.schema_location import versions_dir

        where = f"{versions_dir(typed.evolution.location)}/{typed.evolution.version}"
        return recorded[spec.side], f"the schema recorded in {where} (schemaLocation)"
    if options is None or sample is None:
        raise KwireOptionError(f"{spec.option('format')}=json needs the schema of the JSON in "
                               f"'{spec.option('schema')}' here: there is no topic to infer it from.")
    records, timeout_ms = typed.sampling or (DEFAULT_SAMPLING_RECORDS, DEFAULT_SAMPLING_TIMEOUT_MS)
    values = sample(options, spec.side, records_per_partition=records, timeout_ms=timeout_ms)
    what = f"the {spec.side}s of {options.subscription.describe()}"
    give = (f"give the schema in '{spec.option('schema')}' (a Spark DDL string such as 'id BIGINT, name STRING', "
            f"or a StructType's JSON)")
    try:
        schema = infer_schema(values, inference_options(typed), time_zone=session_time_zone())
    except JsonInferenceError as e:
        raise KwireSchemaError(f"Cannot infer the schema of {what} from {len(values)} sampled record(s): sampled "
                               f"{e}. Read with mode=PERMISSIVE (the default), or {give}.") from None
    except SchemaError as e:
        raise KwireOptionError(f"Cannot infer the schema of {what}: {e}") from None
    if len(schema) == 0:
        raise KwireSchemaError(
            f"The schema inferred from {len(values)} sampled record(s) of {what} has no field (the records are "
            f"empty objects, or hold only nulls and empty arrays that dropFieldIfAllNull drops): there is nothing to "
            f"type. Raise 'samplingRecords' to sample more, or {give}.")
    duplicates = duplicate_names(schema)
    if duplicates:
        raise KwireSchemaError(
            f"The records sampled from {what} have fields whose names are the same ignoring case ('"
            f"{', '.join(duplicates)}'), which spark.read.json refuses too (COLUMN_ALREADY_EXISTS): a column "
            f"cannot be told apart from the other. {give[0].upper()}{give[1:]}, choosing one of them "
            f"(inferred: {spark_ddl(schema)}).")
    return spark_json(schema), f"inferred from {len(values)} sampled record(s): {spark_ddl(schema)}"


def record_first_version(typed: TypedOptions) -> TypedOptions:
    """A stream that starts with a schemaLocation records the schemas it reads with as the first version (or a
    new one when a side is inferred that the latest version lacks); ``typed`` then notes that version."""
    from spark_kwire.spark.typed.plain_json.schema_location import latest, record

    evolution = typed.evolution
    if evolution is None or evolution.location is None:
        return typed
    schemas = {r.spec.side: r.schema for r in typed.resolved
               if r.spec.payload.capabilities.infers_schema and r.spec.schema is None}
    found = latest(evolution.location)
    if found is not None and all(side in found[1] and json.loads(found[1][side]) == json.loads(text)
                                 for side, text in schemas.items()):
        return replace(typed, evolution=replace(evolution, version=found[0]))  # what the latest version holds
    if found is not None and found[0] != evolution.version:
        defined = "when it held none" if evolution.version is None else f"with version {evolution.version}"
        raise KwireSchemaError(
            f"The schemaLocation {evolution.location!r} holds schema version {found[0]}, recorded after this "
            f"DataFrame was defined ({defined}) (a micro-batch met new fields, or another query "
            f"records schemas there): define the DataFrame again (load()) to read with the latest version. Give "
            f"each stream its own schemaLocation.")
    number = record(evolution.location, schemas, evolution.version)
    if number is None:
        raise KwireSchemaError(f"Another query recorded a schema in {evolution.location!r} (schemaLocation) while "
                               f"this one started: give each stream its own schemaLocation.")
    return replace(typed, evolution=replace(evolution, version=number))
