"""The schemas of a typed read or write, decided once on the driver: at load() for a read (the reader schema,
hence the DataFrame's typed columns, before any data is read), when the writer is made for a write (the schema
and id it encodes with, and the DataFrame's fit to it, before anything is written).

Reads: the reader schema is the inline ``valueSchema``, else the subject's latest version (or
``valueSchemaVersion``). The subject comes from the strategy: TopicNameStrategy (``<topic>-value``, the default)
and TopicRecordNameStrategy give one subject per topic; a read of several topics needs them all to hold the same
schema (one DataFrame has one type), else it is refused naming each subject's schema id. RecordNameStrategy
needs ``valueRecordName`` (one subject for every topic).

Writes: ``valueSchemaVersion`` names a registered version; with ``auto.register.schemas=true`` the inline schema
(or the one the format derives from the column: spark-avro's ``toAvroType`` for Avro) is registered; otherwise an
inline schema (or, with ``use.latest.version=false``, the derived one) must be registered under the subject
already, and by default the subject's latest version is used.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import Callable

import pyarrow as pa
from pyspark.sql import types as T

from spark_kwire.client.registry import RegistryClient, RegistryConfig, RegistryError, Schema
from spark_kwire.client.registry.subject_names import subject_name_strategy
from spark_kwire.formats.errors import MissingReferenceError, SchemaError, TypeMismatchError
from spark_kwire.spark.capabilities import TIME_TYPE
from spark_kwire.spark.errors import KwireOptionError, KwireSchemaError
from spark_kwire.spark.options.payloads import SideSpec, TypedOptions
from spark_kwire.spark.typed.spark_types import arrow_type_for_write, spark_type

__all__ = ["ResolvedSide", "resolve_read", "resolve_write", "registry_client", "view_write_types"]

References = tuple[tuple[str, str], ...]
# (options, side, *, records_per_partition, timeout_ms) -> the side's non-null payloads sampled from the topics read
Sampler = Callable[..., pa.Array]


@dataclass(frozen=True)
class ResolvedSide:
    """One typed side with its schema decided: ``schema`` (text) and ``references``; ``schema_id`` its registry id
    (None for an inline reader schema); ``source`` says where it came from (for messages); reads also carry the
    column's Arrow type (as the format decodes it) and Spark type."""

    spec: SideSpec
    schema: str
    references: References = ()
    schema_id: int | None = None
    source: str = ""
    arrow_type: pa.DataType | None = None
    spark_type: T.DataType | None = None


_clients: dict[RegistryConfig, RegistryClient] = {}
_clients_lock = threading.Lock()


def registry_client(config: RegistryConfig) -> RegistryClient:
    """One client per registry configuration per process (the schemas it fetched are cached per process)."""
    with _clients_lock:
        client = _clients.get(config)
        if client is None:
            client = _clients[config] = RegistryClient(config)
        return client


def _subject(spec: SideSpec, topic: str | None, record_name: str | None) -> str:
    strategy = subject_name_strategy(spec.strategy)
    return strategy(topic, spec.side == "key", record_name)


def _fetch(client: RegistryClient, spec: SideSpec, subject: str, why: str):
    version = spec.version if spec.version is not None else "latest"
    try:
        registered = client.version(subject, version)
        references = tuple((name, r.text) for name, r in client.references(registered.schema))
    except RegistryError as e:
        raise KwireSchemaError(f"Cannot get the schema of {spec.option('format')}={spec.format} from the schema "
                               f"registry: {e}. (Subject {subject!r}: {why}.)") from None
    if registered.schema_type != spec.payload.schema_type:
        raise KwireSchemaError(f"Subject {subject!r} version {registered.version} (schema id {registered.schema_id})"
                               f" is a {registered.schema_type} schema, but {spec.option('format')} is "
                               f"'{spec.format}' ({spec.payload.schema_type}).")
    return registered, references


def _reader_subjects(spec: SideSpec, topics: list[str]) -> dict[str, str]:
    """{subject: why} of the reader schema."""
    if spec.strategy == "TopicNameStrategy":
        return {_subject(spec, t, None): f"{spec.strategy} for topic {t!r}" for t in topics}
    if not spec.record_name:
        raise KwireOptionError(
            f"{spec.option('strategy')}={spec.strategy} names subjects after the record, so a read needs the "
            f"record's fully-qualified name in '{spec.option('record')}' (e.g. com.acme.Order), or the reader "
            f"schema inline in '{spec.option('schema')}'.")
    if spec.strategy == "RecordNameStrategy":
        return {_subject(spec, None, spec.record_name): f"{spec.strategy} for record {spec.record_name!r}"}
    return {_subject(spec, t, spec.record_name): f"{spec.strategy} for topic {t!r}" for t in topics}


def registry_decoder(spec: SideSpec, text: str, references: References):
    """The format's decoder of a registry side's reader schema ``text``: the side's message name and Spark's TIME
    type offered to the formats that take them (Protobuf's ``valueMessageName``; Avro's time-micros as TIME)."""
    payload = spec.payload
    offered = {"message_name": spec.message_name, "time_type": bool(TIME_TYPE)}
    return payload.decoder(text, references, **{k: v for k, v in offered.items() if k in payload.decoder_options})


def registry_encoder(spec: SideSpec, text: str, schema_id: int, references: References):
    """The format's encoder of a registry side's schema ``text`` framed with ``schema_id`` (the side's message name
    given to the formats that take one)."""
    payload = spec.payload
    named = {"message_name": spec.message_name} if "message_name" in payload.encoder_options else {}
    return payload.encoder(text, schema_id, references, **named)


def _typed_columns(spec: SideSpec, text: str, references: References, schema_id, source: str) -> ResolvedSide:
    try:
        decoder = registry_decoder(spec, text, references)
    except MissingReferenceError as e:
        hint = (f" A schema given in '{spec.option('schema')}' has no references (Protobuf's google/protobuf/*.proto "
                f"imports need none): read with the subject's registered schema, whose references the registry "
                f"gives." if schema_id is None else "")
        raise KwireSchemaError(f"The {spec.side} schema ({source}) cannot be read as {spec.format}: {e}.{hint}") \
            from None
    except SchemaError as e:
        raise KwireSchemaError(f"The {spec.side} schema ({source}) cannot be read as {spec.format}: {e}") from None
    try:
        column_type = spark_type(decoder.arrow_type)
    except TypeError as e:
        raise KwireSchemaError(f"The {spec.side} schema ({source}) has a type Spark cannot show: {e}") from None
    return ResolvedSide(spec, text, references, schema_id, source, decoder.arrow_type, column_type)


def json_reader_schema(spec: SideSpec, typed: TypedOptions, options=None, recorded=None,
                       sample: "Sampler | None" = None) -> tuple[str, str]:
    """(schema text, where it came from) of a plain JSON side: ``valueSchema`` (``keySchema``) as given, else the
    latest version in the stream's schemaLocation, else inferred from records ``sample`` takes from the topics
    ``options`` (the read's ``ReadOptions``) read at load(), as ``spark.read.json`` infers it
    (plain_json/inferred.py)."""
    if spec.schema is not None:
        return spec.schema, f"option '{spec.option('schema')}'"
    from spark_kwire.spark.typed.plain_json.inferred import inferred_schema

    return inferred_schema(spec, typed, options, recorded or {}, sample)


def _json_columns(spec: SideSpec, typed: TypedOptions, text: str, source: str) -> ResolvedSide:
    from spark_kwire.spark.typed.plain_json.sides import json_options

    try:
        decoder = spec.payload.decoder(text, json_options=json_options(typed, for_write=False))
        column_type = spark_type(decoder.arrow_type)
    except SchemaError as e:
        raise KwireSchemaError(f"The {spec.side} schema ({source}) cannot be read as JSON: {e}") from None
    return ResolvedSide(spec, text, (), None, source, decoder.arrow_type, column_type)


def _resolve_read_side(spec: SideSpec, typed: TypedOptions, topics: list[str], options=None,
                       recorded=None, sample: "Sampler | None" = None) -> ResolvedSide:
    if spec.payload.capabilities.spark_schema:
        return _json_columns(spec, typed, *json_reader_schema(spec, typed, options, recorded, sample))
    registry = typed.registry
    if spec.schema is not None:
        return _typed_columns(spec, spec.schema, (), None, f"option '{spec.option('schema')}'")
    subjects = _reader_subjects(spec, topics)
    if not subjects:
        raise KwireSchemaError(f"No topic matches the subscription now, so there is no subject to take the "
                               f"{spec.side} schema from; give it in '{spec.option('schema')}'.")
    client = registry_client(registry)
    found = {subject: _fetch(client, spec, subject, why) for subject, why in subjects.items()}
    ids = {registered.schema_id for registered, _refs in found.values()}
    if len(ids) > 1:
        listed = "; ".join(f"{s!r} has schema id {r.schema_id} (version {r.version})" for s, (r, _) in found.items())
        raise KwireSchemaError(
            f"The topics read have different {spec.side} schemas ({listed}), and one DataFrame has one type. Read "
            f"them separately, or give a reader schema that fits them all in '{spec.option('schema')}' (each "
            f"record is still decoded with its own writer schema from the registry).")
    subject, (registered, references) = next(iter(found.items()))
    source = f"subject {subject!r} version {registered.version}, schema id {registered.schema_id}"
    return _typed_columns(spec, registered.text, references, registered.schema_id, source)


def resolve_read(typed: TypedOptions, topics: list[str], options=None,
                 sample: "Sampler | None" = None) -> TypedOptions:
    """``typed`` with every side's reader schema and column types decided (registry calls on the driver; a side
    whose format infers its schema, given none, is inferred from what ``sample`` takes from the topics ``options``
    read)."""
    recorded = {}
    if any(spec.payload.capabilities.infers_schema and spec.schema is None for spec in typed.sides):
        from spark_kwire.spark.typed.plain_json.inferred import with_recorded_version

        typed, recorded = with_recorded_version(typed)
    return replace(typed, resolved=tuple(_resolve_read_side(spec, typed, topics, options, recorded, sample)
                                         for spec in typed.sides))


def subscribed_topics(options) -> list[str]:
    """The topics a read's subscription names now (a pattern is matched against the cluster's topics)."""
    subscription = options.subscription
    if subscription.kind != "subscribePattern":
        return list(subscription.topics)
    from spark_kwire.spark.shared_client import shared_client

    selected = subscription.topic_filter
    return [t for t in shared_client(options.kafka).list_topics() if selected.matches(t)]


def resolve_typed_read(options, sample: "Sampler") -> TypedOptions:
    """The typed part of a read's options (``ReadOptions``) with its reader schemas decided; ``sample`` takes the
    records a schema is inferred from (``reading.sampling.sample_values``: the reading layer's, passed in so that
    this layer does not import it)."""
    typed = options.typed
    needs_topics = any(s.schema is None and s.strategy != "RecordNameStrategy" and s.payload.uses_registry
                       for s in typed.sides)
    return resolve_read(typed, subscribed_topics(options) if needs_topics else [], options, sample)


def read_schema_types(typed: TypedOptions) -> dict[str, T.DataType]:
    """{column: Spark type} of the typed columns of a resolved read."""
    return {r.spec.side: r.spark_type for r in typed.resolved}


# -- writes -----------------------------------------------------------------------------------------------

def _column_type(spec: SideSpec, schema: T.StructType) -> T.DataType:
    # Spark's sink finds columns by their exact name (write_schema.sink_columns): so does the typed check
    matches = [f for f in schema.fields if f.name == spec.side]
    if not matches:
        raise KwireOptionError(f"{spec.option('format')}={spec.format} but the DataFrame has no '{spec.side}' "
                               f"column to encode. Columns given: {', '.join(schema.fieldNames()) or 'none'}.")
    return matches[0].dataType


def _write_subject(spec: SideSpec, topic: str | None, record_name: str | None) -> str:
    if spec.strategy != "RecordNameStrategy" and topic is None:
        raise KwireOptionError(
            f"A typed write with {spec.option('strategy')}={spec.strategy} needs the 'topic' option: the subject "
            f"is named after the topic, and rows with a 'topic' column could go to topics with different "
            f"subjects. Set 'topic', or use RecordNameStrategy.")
    if spec.strategy != "TopicNameStrategy" and not record_name:
        raise KwireOptionError(
            f"{spec.option('strategy')}={spec.strategy} names the subject after the record: set "
            f"'{spec.option('record')}' to its fully-qualified name.")
    return _subject(spec, topic, record_name)


def _resolve_write_side(spec: SideSpec, typed: TypedOptions, schema: T.StructType, topic: str | None) -> ResolvedSide:
    arrow_type = arrow_type_for_write(_column_type(spec, schema))
    if spec.payload.capabilities.writes_column_type:
        from spark_kwire.spark.typed.plain_json.sides import json_options

        try:
            spec.payload.encoder("", 0, json_options=json_options(typed, for_write=True)).check(arrow_type)
        except (TypeMismatchError, SchemaError) as e:
            raise KwireSchemaError(f"Column '{spec.side}' cannot be written as JSON: {e}. Nothing was written.") \
                from None
        return ResolvedSide(spec, "", (), None, "to_json of the column")
    client = registry_client(typed.registry)
    payload = spec.payload
    chosen, subject = spec.schema, None
    if chosen is None and (typed.auto_register or not typed.use_latest) and spec.version is None:
        try:
            chosen = payload.derive_named(arrow_type, spec.record_name)
        except SchemaError as e:
            raise KwireSchemaError(f"No {spec.format} schema can be derived from column '{spec.side}': {e}") from None
    try:
        if chosen is None:  # a registered version: the latest, or valueSchemaVersion
            subject = _write_subject(spec, topic, spec.record_name)
            registered, references = _fetch(client, spec, subject, f"{spec.strategy}")
            text, schema_id = registered.text, registered.schema_id
            source = f"subject {subject!r} version {registered.version}, schema id {schema_id}"
        else:
            record = spec.record_name or payload.record_name(chosen, (), spec.message_name)
            subject = _write_subject(spec, topic, record)
            text, references = chosen, ()
            schema_id = _registered_id(client, typed.registry, subject, Schema(text, payload.schema_type),
                                       typed.auto_register)
            source = f"{'registered' if typed.auto_register else 'found'} under subject {subject!r} as schema id " \
                     f"{schema_id}"
    except SchemaError as e:
        raise KwireSchemaError(f"The {spec.side} schema cannot be read as {spec.format}: {e}") from None
    except RegistryError as e:
        if chosen is None:
            message = f"Getting the {spec.side} schema from the schema registry failed: {e}"
        elif typed.auto_register:
            message = f"Registering the {spec.side} schema under subject {subject!r} failed: {e}"
        else:
            given = f"'{spec.option('schema')}'" if spec.schema is not None else "derived from the DataFrame"
            message = (f"The {spec.side} schema ({given}) is not registered under subject {subject!r}: {e}. Register "
                       f"it (auto.register.schemas=true), or write with the subject's schema (use.latest.version=true,"
                       f" the default, or {spec.option('version')})")
        raise KwireSchemaError(message + ".") from None
    try:
        registry_encoder(spec, text, schema_id, references).check(arrow_type)
    except (TypeMismatchError, SchemaError) as e:
        raise KwireSchemaError(
            f"Column '{spec.side}' does not fit the {spec.format} schema it is to be written with ({source}): "
            f"{e}. Nothing was written.") from None
    return ResolvedSide(spec, text, references, schema_id, source)


def view_write_types(typed: TypedOptions, topic: str | None) -> dict[str, T.DataType]:
    """{column: Spark type} of the typed key or value of a view that is only written: the schema given inline, or
    the subject's registered version (the latest unless valueSchemaVersion names one). A view's columns are fixed
    when it is defined, so a schema derived from the rows written cannot type them."""
    types = {}
    for spec in typed.sides:
        if spec.schema is not None:
            resolved = _typed_columns(spec, spec.schema, (), None, f"option '{spec.option('schema')}'")
        elif spec.version is None and (typed.auto_register or not typed.use_latest):
            raise KwireOptionError(
                f"A view's columns are fixed when it is defined, so its {spec.side} cannot take a schema derived from "
                f"the rows written (auto.register.schemas=true or use.latest.version=false without "
                f"'{spec.option('schema')}'). Give the schema in '{spec.option('schema')}' (auto.register.schemas="
                f"true registers it on the first write), or register it first and write with its latest version.")
        else:
            subject = _write_subject(spec, topic, spec.record_name)
            registered, references = _fetch(registry_client(typed.registry), spec, subject, spec.strategy)
            source = f"subject {subject!r} version {registered.version}, schema id {registered.schema_id}"
            resolved = _typed_columns(spec, registered.text, references, registered.schema_id, source)
        types[spec.side] = resolved.spark_type
    return types

_registered: dict[tuple, int] = {}


def _registered_id(client: RegistryClient, registry: RegistryConfig, subject: str, schema: Schema,
                   register: bool) -> int:
    """The id of ``schema`` under ``subject``, registering it when ``register``; remembered per process (Spark plans
    a stream's writer for every micro-batch: the registry is asked once, as Confluent's serializers cache it)."""
    key = (registry, subject, schema, register)
    with _clients_lock:
        known = _registered.get(key)
    if known is None:
        known = client.register(subject, schema) if register else client.lookup(subject, schema).schema_id
        with _clients_lock:
            _registered[key] = known
    return known


def resolve_write(typed: TypedOptions, schema: T.StructType, topic: str | None) -> TypedOptions:
    """``typed`` with the schema and id of every side decided and the DataFrame's columns checked against them."""
    return replace(typed, resolved=tuple(_resolve_write_side(spec, typed, schema, topic) for spec in typed.sides))
