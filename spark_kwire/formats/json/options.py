"""The options of plain JSON, one class for reading, writing and inferring a schema, named and valued as Spark's
JSON options (``JSONOptions``: ``from_json``, ``to_json``, ``spark.read.json``), names in any case:

reading   allowComments, allowUnquotedFieldNames, allowSingleQuotes (default true), allowNumericLeadingZeros,
          allowNonNumericNumbers (default true), timestampFormat, dateFormat, timeZone, columnNameOfCorruptRecord
          (default _corrupt_record), rescuedDataColumn (Databricks' name; off by default)
inferring primitivesAsString, prefersDecimal, dropFieldIfAllNull, inferTimestamp (they shape an inferred schema;
          with a schema given they change nothing, in from_json either); inference also reads mode,
          allowBackslashEscapingAnyCharacter, allowUnquotedControlChars, maxNestingDepth, maxNumLen, maxStringLen
writing   timestampFormat, dateFormat, timeZone, ignoreNullFields (default true)

:meth:`JsonOptions.parse` reads the options a read or write gives (``accepted`` names them, any other is refused);
:meth:`JsonOptions.for_inference` reads an option map as ``spark.read.json``'s inference does (what it does not
know is left to others), with facts of the Spark session.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..errors import SchemaError
from .kernels.lexer import (
    LX_ANY_ESCAPE, LX_BARE_NAMES, LX_COMMENTS, LX_CONTROL_CHARS, LX_LEADING_ZEROS, LX_NON_NUMERIC, LX_SINGLE_QUOTES
)

__all__ = ["JsonOptions", "READ_OPTIONS", "FROM_JSON_OPTIONS", "INFERENCE_OPTIONS", "WRITE_OPTIONS",
           "DEFAULT_CORRUPT_COLUMN", "MODES"]

DEFAULT_CORRUPT_COLUMN = "_corrupt_record"
MODES = ("PERMISSIVE", "DROPMALFORMED", "FAILFAST")  # inference's; a read's mode is given to decode()
# Jackson's leniency: (the lexer's bit, Spark's default); the last two only inference offers
_FLAGS = {"allowComments": (LX_COMMENTS, False), "allowUnquotedFieldNames": (LX_BARE_NAMES, False),
          "allowSingleQuotes": (LX_SINGLE_QUOTES, True), "allowNumericLeadingZeros": (LX_LEADING_ZEROS, False),
          "allowNonNumericNumbers": (LX_NON_NUMERIC, True), "allowBackslashEscapingAnyCharacter": (LX_ANY_ESCAPE, False),
          "allowUnquotedControlChars": (LX_CONTROL_CHARS, False)}
_READ_FLAGS = tuple(_FLAGS)[:5]
INFERENCE_OPTIONS = ("primitivesAsString", "prefersDecimal", "dropFieldIfAllNull", "inferTimestamp")
READ_OPTIONS = (*_READ_FLAGS, "timestampFormat", "dateFormat", "timeZone", "columnNameOfCorruptRecord",
                "rescuedDataColumn", *INFERENCE_OPTIONS)
# what from_json reads text with (the corrupt-record column and the inference options aside)
FROM_JSON_OPTIONS = (*_READ_FLAGS, "timestampFormat", "dateFormat", "timeZone", "rescuedDataColumn")
WRITE_OPTIONS = ("timestampFormat", "dateFormat", "timeZone", "ignoreNullFields")
_TEXTS = ("timestampFormat", "dateFormat", "timeZone", "columnNameOfCorruptRecord", "rescuedDataColumn")
_LIMITS = {"maxNestingDepth": 1000, "maxNumLen": 1000, "maxStringLen": 20_000_000}  # Jackson's, as Spark leaves them
_DATETIME_FORMATS = ("timestampFormat", "timestampNTZFormat", "timeFormat")


def _flag(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise SchemaError(f"Option '{name}' must be 'true' or 'false', got {value!r}.")
    return text == "true"


def _limit(name: str, value: Any) -> int:
    try:
        result = int(str(value).strip())
    except ValueError:
        raise SchemaError(f"Option '{name}' must be a whole number, got {value!r}.") from None
    if result < 1:
        raise SchemaError(f"Option '{name}' must be at least 1, got {value!r}.")
    return result


@dataclass(frozen=True)
class JsonOptions:
    """Plain JSON's options, parsed. The last four are facts of the Spark session, which only inference follows
    (the Spark layer passes them; a Python data source cannot read the session's SQL settings at load()):

    * ``timestamp_ntz_default``: ``spark.sql.timestampType`` is TIMESTAMP_NTZ (then inferTimestamp infers
      TIMESTAMP_NTZ for strings without a zone);
    * ``time_type``: ``spark.sql.timeType.enabled`` (Spark 4.1+; then inferTimestamp infers TIME for a time of
      day);
    * ``case_sensitive``: ``spark.sql.caseSensitive``;
    * ``lenient_surrogates``: the parser is Jackson 2.18 (Spark 4.0), which accepts an escaped surrogate
      without its pair in a field name and a surrogate encoded in UTF-8; Jackson 2.21 (Spark 4.1+) refuses
      both (the default).
    """

    flags: int = LX_SINGLE_QUOTES | LX_NON_NUMERIC  # Jackson's leniency, as the lexer's bits
    timestamp_format: str | None = None
    date_format: str | None = None
    time_zone: str = "UTC"
    corrupt_column: str = DEFAULT_CORRUPT_COLUMN
    rescued_column: str | None = None
    ignore_null_fields: bool = True
    # inference
    primitives_as_string: bool = False
    prefers_decimal: bool = False
    drop_field_if_all_null: bool = False
    infer_timestamp: bool = False
    mode: str = "PERMISSIVE"
    max_nesting_depth: int = 1000
    max_num_len: int = 1000
    max_string_len: int = 20_000_000
    # the session's
    timestamp_ntz_default: bool = False
    time_type: bool = False
    case_sensitive: bool = False
    lenient_surrogates: bool = False

    @classmethod
    def parse(cls, options: Mapping[str, Any] | None = None, accepted: tuple[str, ...] | None = READ_OPTIONS,
              **session) -> "JsonOptions":
        """``options`` as a read (``accepted`` = :data:`READ_OPTIONS`) or write (:data:`WRITE_OPTIONS`) gives them:
        a name ``accepted`` does not hold is refused, a text option must not be empty. ``accepted`` None reads
        them as :meth:`for_inference` does. ``session``: keywords of the fields above (``time_zone``: the zone
        when ``timeZone`` is not given)."""
        if accepted is None:
            return cls.for_inference(options, **session)
        by_key = {name.lower(): name for name in accepted}
        given = {}
        for key, value in (options or {}).items():
            name = by_key.get(str(key).lower())
            if name is None:
                raise SchemaError(f"{key!r} is not a JSON option here (accepted: {', '.join(accepted)})")
            given[name] = value
        for name in _TEXTS:
            if name in given and not str(given[name]).strip():
                raise SchemaError(f"option {name!r} must not be empty")
        return cls._made(given, session)

    @classmethod
    def for_inference(cls, options: Mapping[str, Any] | None = None, **session) -> "JsonOptions":
        """Spark-named ``options`` (strings or Python values, names in any case) as ``spark.read.json``'s inference
        reads them: those it does not know are left alone (the decoder reads dateFormat, Spark's own options
        pass by). ``session``: keywords of the session's fields, ``time_zone`` (the session's time zone) and
        ``corrupt_column`` (``spark.sql.columnNameOfCorruptRecord``). Refused, with the way out: an unknown mode,
        a time zone Spark does not know, inferTimestamp with a date-time format and prefersDecimal with a
        locale other than en-US."""
        by_key = {name.lower(): name for name in (*_FLAGS, *INFERENCE_OPTIONS, *_TEXTS, *_LIMITS, "mode")}
        raw = {str(k).lower(): v for k, v in (options or {}).items()}
        given = {by_key[k]: v for k, v in raw.items() if k in by_key}
        mode = str(given.pop("mode", "PERMISSIVE")).strip().upper()
        if mode not in MODES:
            # Spark logs a warning and reads PERMISSIVE; an option is never accepted and ignored here.
            raise SchemaError(f"Option 'mode' must be one of {', '.join(MODES)} (any case), got {raw.get('mode')!r}.")
        result = cls._made(given, {**session, "mode": mode})
        result._check_inference(raw)
        return result

    @classmethod
    def _made(cls, given: dict, session: dict) -> "JsonOptions":
        defaults = cls(**session)
        flags = 0
        for name, (bit, default) in _FLAGS.items():
            if _flag(name, given[name]) if name in given else default:
                flags |= bit
        texts = {name: str(given[name]) for name in _TEXTS if name in given}
        flag = {name: _flag(name, given[name]) for name in (*INFERENCE_OPTIONS, "ignoreNullFields") if name in given}
        limits = {name: _limit(name, given[name]) if name in given else default for name, default in _LIMITS.items()}
        return cls(
            flags=flags, timestamp_format=texts.get("timestampFormat"), date_format=texts.get("dateFormat"),
            time_zone=texts.get("timeZone", defaults.time_zone),
            corrupt_column=texts.get("columnNameOfCorruptRecord", defaults.corrupt_column),
            rescued_column=texts.get("rescuedDataColumn"), ignore_null_fields=flag.get("ignoreNullFields", True),
            primitives_as_string=flag.get("primitivesAsString", False),
            prefers_decimal=flag.get("prefersDecimal", False),
            drop_field_if_all_null=flag.get("dropFieldIfAllNull", False),
            infer_timestamp=flag.get("inferTimestamp", False), mode=defaults.mode,
            max_nesting_depth=limits["maxNestingDepth"], max_num_len=limits["maxNumLen"],
            max_string_len=limits["maxStringLen"], timestamp_ntz_default=defaults.timestamp_ntz_default,
            time_type=defaults.time_type, case_sensitive=defaults.case_sensitive,
            lenient_surrogates=defaults.lenient_surrogates)

    def _check_inference(self, raw: dict) -> None:
        from .inference.timestamps import valid_zone

        if not valid_zone(self.time_zone):
            raise SchemaError(f"Time zone {self.time_zone!r} (option 'timeZone' or the session's) is not a zone id "
                              "Spark accepts: a region such as 'Europe/Paris', 'UTC', or an offset such as '+01:00'.")
        if self.infer_timestamp:
            custom = [name for name in _DATETIME_FORMATS if raw.get(name.lower()) is not None]
            if custom:
                raise SchemaError(
                    f"inferTimestamp with {' / '.join(custom)} is not supported: schema inference recognises "
                    "timestamps in Spark's default forms only (ISO 8601 dates and times such as "
                    "'2024-05-01T12:30:00Z'). Leave out the format option(s), or give the schema (valueSchema).")
        locale = raw.get("locale")
        if self.prefers_decimal and locale is not None and str(locale).replace("_", "-").lower() != "en-us":
            raise SchemaError(f"prefersDecimal with locale {locale!r} is not supported: schema inference reads "
                              "decimal strings as Spark does for en-US. Leave out 'locale', or give the schema.")

    # Jackson's leniency, as inference's scanner asks it
    @property
    def allow_comments(self) -> bool:
        return bool(self.flags & LX_COMMENTS)

    @property
    def allow_unquoted_field_names(self) -> bool:
        return bool(self.flags & LX_BARE_NAMES)

    @property
    def allow_single_quotes(self) -> bool:
        return bool(self.flags & LX_SINGLE_QUOTES)

    @property
    def allow_numeric_leading_zeros(self) -> bool:
        return bool(self.flags & LX_LEADING_ZEROS)

    @property
    def allow_non_numeric_numbers(self) -> bool:
        return bool(self.flags & LX_NON_NUMERIC)

    @property
    def allow_backslash_escaping_any_character(self) -> bool:
        return bool(self.flags & LX_ANY_ESCAPE)

    @property
    def allow_unquoted_control_chars(self) -> bool:
        return bool(self.flags & LX_CONTROL_CHARS)
