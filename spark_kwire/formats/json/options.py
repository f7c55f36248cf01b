"""The options of plain JSON, named and valued as ``from_json`` / ``to_json`` take them (names in any case):

reading   allowComments, allowUnquotedFieldNames, allowSingleQuotes (default true), allowNumericLeadingZeros,
          allowNonNumericNumbers (default true), timestampFormat, dateFormat, timeZone, columnNameOfCorruptRecord
          (default _corrupt_record), rescuedDataColumn (Databricks' name; off by default)
inferring primitivesAsString, prefersDecimal, dropFieldIfAllNull (they shape an inferred schema; with a schema
          given they change nothing, in from_json either)
writing   timestampFormat, dateFormat, timeZone, ignoreNullFields (default true)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ..errors import SchemaError
from .kernels.lexer import LX_BARE_NAMES, LX_COMMENTS, LX_LEADING_ZEROS, LX_NON_NUMERIC, LX_SINGLE_QUOTES

__all__ = ["JsonOptions", "READ_OPTIONS", "INFERENCE_OPTIONS", "WRITE_OPTIONS", "DEFAULT_CORRUPT_COLUMN"]

DEFAULT_CORRUPT_COLUMN = "_corrupt_record"
_FLAGS = {"allowComments": (LX_COMMENTS, False), "allowUnquotedFieldNames": (LX_BARE_NAMES, False),
          "allowSingleQuotes": (LX_SINGLE_QUOTES, True), "allowNumericLeadingZeros": (LX_LEADING_ZEROS, False),
          "allowNonNumericNumbers": (LX_NON_NUMERIC, True)}
INFERENCE_OPTIONS = ("primitivesAsString", "prefersDecimal", "dropFieldIfAllNull")
READ_OPTIONS = (*_FLAGS, "timestampFormat", "dateFormat", "timeZone", "columnNameOfCorruptRecord",
                "rescuedDataColumn", *INFERENCE_OPTIONS)
WRITE_OPTIONS = ("timestampFormat", "dateFormat", "timeZone", "ignoreNullFields")


def _bool(name: str, raw) -> bool:
    value = str(raw).strip().lower()
    if value not in ("true", "false"):
        raise SchemaError(f"option {name!r} must be true or false, got {raw!r}")
    return value == "true"


@dataclass(frozen=True)
class JsonOptions:
    """Plain JSON's options, parsed; :meth:`parse` reads them from an option map (``from_json``'s names)."""

    flags: int = LX_SINGLE_QUOTES | LX_NON_NUMERIC
    timestamp_format: str | None = None
    date_format: str | None = None
    time_zone: str = "UTC"
    corrupt_column: str = DEFAULT_CORRUPT_COLUMN
    rescued_column: str | None = None
    ignore_null_fields: bool = True
    inference: tuple = ()  # (name, value) of the inference options given

    @classmethod
    def parse(cls, options: Mapping[str, object], accepted=READ_OPTIONS, time_zone: str = "UTC") -> "JsonOptions":
        by_key = {name.lower(): name for name in accepted}
        given = {}
        for key, value in options.items():
            name = by_key.get(str(key).lower())
            if name is None:
                raise SchemaError(f"{key!r} is not a JSON option here (accepted: {', '.join(accepted)})")
            given[name] = value
        flags = 0
        for name, (bit, default) in _FLAGS.items():
            if (_bool(name, given[name]) if name in given else default):
                flags |= bit
        texts = {}
        for name in ("timestampFormat", "dateFormat", "timeZone", "columnNameOfCorruptRecord", "rescuedDataColumn"):
            if name in given:
                text = str(given[name])
                if not text.strip():
                    raise SchemaError(f"option {name!r} must not be empty")
                texts[name] = text
        inference = tuple((n, _bool(n, given[n])) for n in INFERENCE_OPTIONS if n in given)
        return cls(flags=flags, timestamp_format=texts.get("timestampFormat"), date_format=texts.get("dateFormat"),
                   time_zone=texts.get("timeZone", time_zone),
                   corrupt_column=texts.get("columnNameOfCorruptRecord", DEFAULT_CORRUPT_COLUMN),
                   rescued_column=texts.get("rescuedDataColumn"),
                   ignore_null_fields=_bool("ignoreNullFields", given["ignoreNullFields"])
                   if "ignoreNullFields" in given else True, inference=inference)
