"""Plain JSON keys and values (``valueFormat=json``), the Spark side: ``from_json`` / ``to_json``'s options as the
format layer takes them, with the time zone Spark would use, and the executor's decoder of a JSON side.

The time zone of dates and timestamps is the ``timeZone`` option, else the session's (Spark hands SQL settings to
tasks as local properties; a session that never set ``spark.sql.session.timeZone`` uses the JVM's zone, which is
the machine's, as Python sees it from ``TZ`` or ``/etc/localtime``).
"""

from __future__ import annotations

import os
import threading

import numpy as np
import pyarrow as pa

from spark_kwire.formats.errors import DecodeError
from spark_kwire.spark.errors import KwireRecordDecodeError
from spark_kwire.spark.options.payloads import DEFAULT_CORRUPT_COLUMN, TypedOptions
from spark_kwire.spark.typed.spark_types import conform, expected_arrow_type

__all__ = ["json_options", "session_time_zone", "JsonSideDecoder"]


def session_time_zone() -> str:
    """The session's time zone as a task sees it, else the machine's, else UTC."""
    try:
        from pyspark import TaskContext

        context = TaskContext.get()
        zone = context.getLocalProperty("spark.sql.session.timeZone") if context is not None else None
        if zone:
            return zone
    except Exception:  # no Spark here (driver-side checks, tests of the format layer)
        pass
    zone = os.environ.get("TZ", "").lstrip(":")
    if zone:
        return zone
    try:
        target = os.path.realpath("/etc/localtime")
        if "zoneinfo/" in target:
            return target.split("zoneinfo/", 1)[1]
    except OSError:
        pass
    return "UTC"


def json_options(typed: TypedOptions, *, for_write: bool):
    """The format layer's ``JsonOptions`` of a read (``for_write`` False) or write."""
    from spark_kwire.formats.json import READ_OPTIONS, WRITE_OPTIONS, JsonOptions

    given = dict(typed.json)
    if not for_write:
        given["columnNameOfCorruptRecord"] = typed.corrupt_column or DEFAULT_CORRUPT_COLUMN
    return JsonOptions.parse(given, WRITE_OPTIONS if for_write else READ_OPTIONS, time_zone=session_time_zone())


class JsonSideDecoder:
    """Decodes one JSON side (key or value) of batches, as ``from_json`` with the read's schema and options (a
    stream that detects new fields uses json_evolving's subclass)."""

    def __init__(self, resolved, typed: TypedOptions) -> None:
        """``resolved``: the side's ``schemas.ResolvedSide``."""
        self.resolved = resolved
        self.typed = typed
        self.options = json_options(typed, for_write=False)
        self.decoder = resolved.spec.payload.decoder(resolved.schema, json_options=self.options)
        self.target = expected_arrow_type(resolved.spark_type)
        self.lock = threading.Lock()

    def _decode(self, decoder, raw: pa.Array, mode: str, where):
        spec = self.resolved.spec
        try:
            return decoder.decode(raw, mode)
        except DecodeError as e:
            where_field = f" in field {e.path}" if e.path else ""
            raise KwireRecordDecodeError(
                f"The {spec.side} of the record at {where(e.row)} is not JSON that {spec.option('schema')} reads: "
                f"{e.reason}{where_field}. With mode=PERMISSIVE (from_json's default) such records keep what "
                f"does fit, their text in the corrupt-record column (columnNameOfCorruptRecord); with "
                f"rescuedDataColumn, values of another type and unknown fields are kept there instead.") from None

    def _result(self, raw: pa.Array, mode: str, where):
        return self._decode(self.decoder, raw, mode, where)

    def decode(self, raw: pa.Array, mode: str, where) -> tuple[pa.Array, np.ndarray | None, dict[int, str]]:
        """(typed column, mask of the bad rows or None, {row: why}); FAILFAST raises for the first bad row, naming
        its topic, partition and offset."""
        with self.lock:
            result = self._result(raw, mode, where)
        values = conform(result.values, self.target)
        if not result.error_count:
            return values, None, {}
        return values, result.errors, {int(r): result.describe(int(r)) for r in np.flatnonzero(result.errors)}
