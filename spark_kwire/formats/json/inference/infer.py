"""JSON schema inference as Spark's ``spark.read.json`` infers it, on the driver, from sampled records.

``infer_schema(values, options)`` reads each value as one JSON document and returns the Arrow struct type whose
Spark type (Spark's Arrow conversion, ``spark_kwire.spark.typed.spark_types.spark_type``) is the StructType
``spark.read.json`` infers from the same strings with the same options: the same types (bigint, double,
decimal(p,s) for integers beyond a long and with prefersDecimal, string, boolean, array, struct, timestamp
with inferTimestamp), the same widening (bigint+double -> double, conflicts -> string), fields sorted by name,
everything nullable, and the corrupt-record column (PERMISSIVE) when a record is malformed or not an object.

Where this differs from ``spark.read.json``, by decision:

* a null value (a Kafka tombstone) is no document and is skipped; Spark counts a null string as a malformed
  record (PERMISSIVE adds ``_corrupt_record``, FAILFAST fails);
* an unknown ``mode`` is an error; Spark warns and reads PERMISSIVE;
* ``inferTimestamp`` with ``timestampFormat`` / ``timestampNTZFormat`` / ``timeFormat``, and ``prefersDecimal``
  with a ``locale`` other than en-US, are refused (Spark's default formats only);
* documents nested so deeply that Spark overflows its stack (a few hundred levels) are read up to
  ``maxNestingDepth``, as Jackson's limit says.

Spark 4.0's parser (Jackson 2.18) accepts a lone escaped surrogate in a field name and a surrogate encoded in
UTF-8, which Spark 4.1+ (Jackson 2.21) refuse: ``lenient_surrogates=True`` reads as 4.0 does.

A top-level array of objects counts as several records, as in ``spark.read.json`` (its objects' fields
are merged); a top-level array of anything else, or a scalar, is not an object: the corrupt-record column.
"""

from __future__ import annotations

import re
from typing import Any, Iterator, Mapping

import pyarrow as pa

from ...errors import FormatError
from .fast import FastPath
from ..options import JsonOptions
from .scan import Malformed, Scanner, Unreadable
from .text import decimal_text, decode
from .timestamps import is_time, is_timestamp, is_timestamp_ntz
from .types import EMPTY_STRUCT, NULL, STRING, TIME, TIMESTAMP, TIMESTAMP_NTZ, Merger, canonical, describe

__all__ = ["infer_schema", "JsonInferenceError", "arrow_type"]

_TIMESTAMP_UTC = pa.timestamp("us", tz="UTC")
# What every string Spark's default timestamp and time parsers accept starts with (see timestamps.py)
_MAYBE_DATETIME = re.compile(r"T[0-9]|[\x00-\x20\x7f]*(?:[+-]?[0-9]{4}|[0-9]{1,2}:)")
_TOO_DEEP = ("the records nest objects and arrays too deeply to merge their types (Spark's own inference overflows "
             "its stack on a few hundred levels); give the schema (valueSchema)")


class JsonInferenceError(FormatError, ValueError):
    """Inference cannot give a schema: a malformed record in FAILFAST mode, or a record Spark's inference
    fails on too. ``row`` is the record's index in the values given."""

    def __init__(self, row: int | None, reason: str) -> None:
        self.row = row
        self.reason = reason
        super().__init__(reason if row is None else f"record {row}: {reason}")


def infer_schema(values, options: Mapping[str, Any] | JsonOptions | None = None, **session) -> pa.StructType:
    """The Arrow struct type of JSON documents ``values`` (a pyarrow binary or string array, chunked or not, or
    a sequence of bytes / str; nulls are skipped), inferred as ``spark.read.json`` infers them.

    ``options``: Spark's JSON option names and values (read by :meth:`JsonOptions.for_inference`; others are
    ignored), or a ``JsonOptions``. ``session`` keywords pass facts of the Spark session (``time_zone``,
    ``timestamp_ntz_default``, ``time_type``, ``case_sensitive``, ``corrupt_column``).
    Raises :class:`JsonInferenceError` (FAILFAST, or a record Spark cannot infer either) and
    :class:`~spark_kwire.formats.errors.SchemaError` for bad options."""
    opts = options if isinstance(options, JsonOptions) else JsonOptions.for_inference(options, **session)
    try:
        return arrow_type(infer_type(values, opts))
    except RecursionError:
        raise JsonInferenceError(None, _TOO_DEEP) from None


def infer_type(values, opts: JsonOptions) -> tuple:
    """The inferred root type (see ``inference_types``) before it becomes Arrow."""
    reader = _DocumentReader(opts)
    merger = reader.merger
    first_row: dict[tuple, int] = {}
    for row, raw in enumerate(_raw_values(values)):
        if raw is None:
            continue
        try:
            t = reader.read(raw)
        except Malformed as e:
            if opts.mode == "FAILFAST":
                raise JsonInferenceError(row, f"malformed JSON ({e}); mode FAILFAST") from None
            if opts.mode == "DROPMALFORMED":
                continue
            t = ("R", ((opts.corrupt_column, STRING),))
        except Unreadable as e:
            raise JsonInferenceError(row, str(e)) from None
        if t not in first_row:
            first_row[t] = row
    # Merging is idempotent, so each distinct document type is merged once, in the order first seen.
    root = EMPTY_STRUCT
    for t, row in first_row.items():
        merged = merger.merge_root(root, t, opts.mode, opts.corrupt_column)
        if merged is None:
            raise JsonInferenceError(row, f"the record is a JSON {describe(t)}, not an object (a STRUCT); mode "
                                          "FAILFAST")
        root = merged
    return canonical(root, opts.drop_field_if_all_null) or EMPTY_STRUCT


class _DocumentReader:
    """One document's type: the fast path when it can decide, the Scanner otherwise."""

    def __init__(self, opts: JsonOptions) -> None:
        self.opts = opts
        self.merger = Merger(opts.case_sensitive)
        string_type = _string_typer(opts)
        self.fast = FastPath(opts, string_type, self.merger)
        self.scanner = Scanner(opts, string_type, self.merger)

    def read(self, raw) -> tuple:
        if isinstance(raw, str):
            text, bad = raw, None
        else:
            text, bad = decode(raw, self.opts.lenient_surrogates)
        if bad is None and self.fast.usable:
            t = self.fast.document(text)
            if t is not None:
                return t
        return self.scanner.document(text, bad)


def _string_typer(opts: JsonOptions):
    """The type of a JSON string value, as inferField decides it."""
    if not opts.prefers_decimal and not opts.infer_timestamp:
        return lambda text: STRING if text else NULL
    zone = opts.time_zone
    known: dict[str, tuple] = {}  # values repeat (statuses, cities...): each is parsed once

    def string_type(text: str) -> tuple:
        found = known.get(text)
        if found is None:
            if len(known) > 100_000:
                known.clear()
            found = known[text] = _string_type(text)
        return found

    def _string_type(text: str) -> tuple:
        if not text:
            return NULL
        if opts.prefers_decimal:
            found = decimal_text(text)
            if found is not None and 0 <= found[1] <= found[0] <= 38:  # what DecimalType(p, s) accepts
                return ("M", found[0], found[1])
        if opts.infer_timestamp and _MAYBE_DATETIME.match(text):
            if opts.time_type and is_time(text):
                return TIME
            if opts.timestamp_ntz_default and is_timestamp_ntz(text):
                return TIMESTAMP_NTZ
            if is_timestamp(text, zone):
                return TIMESTAMP
        return STRING

    return string_type


def _raw_values(values) -> Iterator:
    """Each value as bytes or str (None for null)."""
    if isinstance(values, pa.ChunkedArray):
        for chunk in values.chunks:
            yield from _raw_values(chunk)
        return
    if isinstance(values, pa.Array):
        kind = values.type
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            values = values.view(pa.large_binary() if pa.types.is_large_string(kind) else pa.binary())
        elif not (pa.types.is_binary(kind) or pa.types.is_large_binary(kind)):
            raise TypeError(f"JSON documents must be a binary or string array, got {kind}")
        yield from values.to_pylist()
        return
    for value in values:
        if value is not None and not isinstance(value, (bytes, bytearray, memoryview, str)):
            raise TypeError(f"JSON documents must be bytes or str, got {type(value).__name__}")
        yield bytes(value) if isinstance(value, (bytearray, memoryview)) else value


def arrow_type(t: tuple) -> pa.DataType:
    """The Arrow type Spark's Arrow conversion turns into the Spark type of inferred type ``t``."""
    kind = t[0]
    simple = {"B": pa.bool_(), "L": pa.int64(), "D": pa.float64(), "S": pa.string(), "T": _TIMESTAMP_UTC,
              "Z": pa.timestamp("us"), "H": pa.time64("us"), "N": pa.string()}
    if kind in simple:
        return simple[kind]
    if kind == "M":
        return pa.decimal128(t[1], t[2])
    if kind == "A":
        return pa.list_(pa.field("element", arrow_type(t[1]), nullable=True))
    return pa.struct([pa.field(_arrow_name(name), arrow_type(field), nullable=True) for name, field in t[1]])


def _arrow_name(name: str) -> str:
    """A name as Java writes it in UTF-8 (Arrow's schema): a lone surrogate (Jackson 2.18) becomes '?'."""
    return name if name.isascii() else name.encode("utf-8", "replace").decode("utf-8")

