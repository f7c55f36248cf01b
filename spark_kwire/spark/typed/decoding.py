"""The executor side of a typed read: the fetched key and value columns of each Arrow batch decoded into their
typed columns, in compiled code over the whole batch (no Python per record).

Decoders are kept per process (a Python worker runs task after task), one per (reader schema, registry): each
writer schema id is fetched from the registry once per process (the registry client's cache) and resolved to
the reader schema once per decoder, so a topic written under several schema versions reads as one DataFrame.
Without a registry (an inline reader schema and no ``schema.registry.url``), every record is read as written
with the inline schema, as ``from_avro`` reads with the schema it is given.

FAILFAST stops at the first record that does not decode, naming its topic, partition, offset, schema id and
field. PERMISSIVE gives that record a null key or value and fills the corrupt-record column
(``columnNameOfCorruptRecord``, default ``_corrupt_record``): ``struct<key: binary, value: binary, error:
string>`` with the record's raw key and value and why it failed, null for records that decode.
"""

from __future__ import annotations

import threading
import time
from typing import Iterable, Iterator

import numpy as np
import pyarrow as pa
from spark_kwire.client.registry import RegistryConfig, RegistryError
from spark_kwire.client.registry.errors import SchemaNotFoundError
from spark_kwire.formats.errors import DecodeError, SchemaError
from spark_kwire.spark.errors import KwireRecordDecodeError, KwireSchemaError
from spark_kwire.spark.options.payloads import TypedOptions
from spark_kwire.spark.schema import CORRUPT_RECORD_TYPE
from spark_kwire.spark.typed.schemas import ResolvedSide, registry_client, registry_decoder
from spark_kwire.spark.typed.spark_types import conform, expected_arrow_type

__all__ = ["decode_batches", "SideDecoder", "side_decoder"]


NOT_FOUND_RETRY_S = 30.0


class SideDecoder:
    """Decodes one side (key or value) of batches with one reader schema; writer schemas are added by id as
    batches name them."""

    def __init__(self, resolved: ResolvedSide, registry: RegistryConfig | None) -> None:
        spec = resolved.spec
        self.resolved = resolved
        self.payload = spec.payload
        self.registry = registry
        self.decoder = registry_decoder(spec, resolved.schema, resolved.references)
        self.target = expected_arrow_type(resolved.spark_type)
        self.unusable: dict[int, str] = {}  # schema id -> why records framed with it cannot be read
        self.not_found_at: dict[int, float] = {}  # ids the registry did not know, asked again after a while
        self.lock = threading.Lock()

    def _add_writer(self, schema_id: int) -> None:
        spec = self.resolved.spec
        if self.registry is None:  # no registry: every record was written with the inline schema
            self.decoder.add_writer_schema(schema_id, self.resolved.schema,
                                           references=self.payload.references(self.resolved.references))
            return
        client = registry_client(self.registry)
        try:
            registered = client.schema_by_id(schema_id)
            if registered.schema_type != self.payload.schema_type:
                self.unusable[schema_id] = (f"schema id {schema_id} is a {registered.schema_type} schema, not "
                                            f"{self.payload.schema_type} ({spec.option('format')}={spec.format})")
                return
            references = [(name, r.text) for name, r in client.references(registered.schema)]
        except SchemaNotFoundError as e:
            self.unusable[schema_id] = str(e)  # names the id, the registry and its answer (40403)
            self.not_found_at[schema_id] = time.monotonic()
            return
        except RegistryError as e:
            raise KwireSchemaError(f"Cannot get writer schema id {schema_id} of the {spec.side}s being read "
                                   f"({spec.option('format')}={spec.format}) from the schema registry: {e}") from None
        try:
            self.decoder.add_writer_schema(schema_id, registered.text, references=self.payload.references(references))
        except SchemaError as e:
            self.unusable[schema_id] = (f"writer schema id {schema_id} cannot be read as the reader schema "
                                        f"({self.resolved.source}): {e}")

    def decode(self, raw: pa.Array, mode: str, where) -> tuple[pa.Array, np.ndarray | None, dict[int, str]]:
        """(typed column, mask of the rows that failed or None, {row: why}) for the raw binary column ``raw``;
        ``where(row)`` describes a row's record (topic, partition, offset) for FAILFAST errors."""
        with self.lock:
            frames = self.payload.frames(raw)
            for schema_id in self.decoder.missing_schema_ids(frames):
                if schema_id not in self.unusable or self._ask_again(schema_id):
                    self._add_writer(schema_id)
            try:  # FAILFAST: the first record that fails, in offset order, whatever the reason
                result = self.decoder.decode(frames, mode)
            except DecodeError as e:
                detail = self.unusable.get(e.schema_id) or e.reason + (f" in field {e.path}" if e.path else "")
                raise self._failure(e.row, e.schema_id, detail, where) from None
        values = conform(result.values, self.target)
        if not result.error_count:
            return values, None, {}
        reasons = {}
        for row in np.flatnonzero(result.errors):
            schema_id = int(result.schema_ids[row])
            reasons[int(row)] = self.unusable.get(schema_id) or result.describe(int(row))
        return values, result.errors, reasons

    def _ask_again(self, schema_id: int) -> bool:
        """An id the registry did not know is asked for again after NOT_FOUND_RETRY_S (a registry's replicas can
        lag behind the one a producer registered with); ids that cannot be read as the reader schema are not."""
        asked = self.not_found_at.get(schema_id)
        if asked is None or time.monotonic() - asked < NOT_FOUND_RETRY_S:
            return False
        del self.unusable[schema_id], self.not_found_at[schema_id]
        return True

    def _failure(self, row: int, schema_id: int, reason: str, where) -> KwireRecordDecodeError:
        spec = self.resolved.spec
        sid = f"schema id {schema_id}" if schema_id >= 0 else "no schema id: its framing is wrong"
        message = getattr(self.decoder, "message", None)  # Protobuf: the message read, of the schema's file
        read_as = f", message {message.full_name} ({spec.option('message')} chooses another)" \
            if spec.payload.takes_message_name and message is not None else ""
        return KwireRecordDecodeError(
            f"The {spec.side} of the record at {where(row)} ({sid}) does not decode as {spec.format} with the "
            f"reader schema ({self.resolved.source}{read_as}): {reason}. With mode=PERMISSIVE such records read as "
            f"a null {spec.side}, their raw bytes kept in the corrupt-record column (columnNameOfCorruptRecord).")


_decoders: dict[tuple, SideDecoder] = {}
_decoders_lock = threading.Lock()


def side_decoder(resolved: ResolvedSide, typed: TypedOptions) -> SideDecoder:
    """The process's decoder of one side (made once per reader schema and registry; one whose format reads with a
    Spark schema, plain JSON's, per schema and options)."""
    json = resolved.spec.payload.capabilities.spark_schema
    key = (resolved.spec, resolved.schema, resolved.references, typed.json if json else typed.registry,
           typed.corrupt_column if json else None, typed.evolution if json else None)
    with _decoders_lock:
        decoder = _decoders.get(key)
        if decoder is None:
            if json:
                evolution = typed.evolution
                if (evolution is not None and evolution.detects_new_fields and resolved.spec.schema is None
                        and resolved.spec.payload.capabilities.evolves_schema):
                    from spark_kwire.spark.typed.plain_json.evolving import EvolvingJsonSideDecoder as JsonSideDecoder
                else:
                    from spark_kwire.spark.typed.plain_json.sides import JsonSideDecoder
                decoder = _decoders[key] = JsonSideDecoder(resolved, typed)
            else:
                decoder = _decoders[key] = SideDecoder(resolved, typed.registry)
        return decoder


def _locator(batch: pa.RecordBatch):
    def where(row: int) -> str:
        topic, partition, offset = (batch.column(name)[row].as_py() for name in ("topic", "partition", "offset"))
        return f"topic {topic!r} partition {partition} offset {offset}"
    return where


def _corrupt_column(batch: pa.RecordBatch, bad: np.ndarray, reasons: dict[int, str]) -> pa.Array:
    """The corrupt-record column: raw key and value and the reason at the rows in ``bad``, null elsewhere."""
    target = expected_arrow_type(CORRUPT_RECORD_TYPE)
    n = batch.num_rows
    if not bad.any():
        return pa.nulls(n, target)
    rows = np.flatnonzero(bad)
    positions = np.full(n, -1, dtype=np.int64)
    positions[rows] = np.arange(len(rows))
    take = pa.array(np.where(bad, positions, 0), pa.int64(), mask=~bad)  # null where fine: no bytes copied
    mask = pa.array(~bad)
    key = batch.column("key").take(pa.array(rows)).cast(pa.binary()).take(take)
    value = batch.column("value").take(pa.array(rows)).cast(pa.binary()).take(take)
    errors = pa.array([reasons[int(r)] for r in rows], pa.string()).take(take)
    fields = list(target)
    return pa.StructArray.from_arrays([key, value, errors], fields=fields, mask=mask)


def decode_batch(typed: TypedOptions, batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch`` (the columns of Spark's kafka source) with its typed sides decoded, plus the corrupt-record
    column in PERMISSIVE mode."""
    where = _locator(batch)
    names = batch.schema.names
    columns = list(batch.columns)
    fields = list(batch.schema)
    failed = np.zeros(batch.num_rows, dtype=bool)
    reasons: dict[int, list[str]] = {}
    for resolved in typed.resolved:
        side = resolved.spec.side
        index = names.index(side)
        values, bad, why = side_decoder(resolved, typed).decode(columns[index], typed.mode, where)
        columns[index] = values
        fields[index] = pa.field(side, values.type)
        if bad is not None:
            failed |= bad
            for row, text in why.items():
                reasons.setdefault(row, []).append(f"{side}: {text}")
    if typed.corrupt_column is not None:
        columns.append(_corrupt_column(batch, failed, {r: "; ".join(t) for r, t in reasons.items()}))
        fields.append(pa.field(typed.corrupt_column, columns[-1].type))
    return pa.RecordBatch.from_arrays(columns, schema=pa.schema(fields))


def decode_batches(typed: TypedOptions, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        yield decode_batch(typed, batch)
