"""The options JSON schema inference reads, with Spark's names and defaults (``JSONOptions``), checked.

Only what changes the inferred schema is read here; options of decoding alone (dateFormat,
enableDateTimeParsingFallback, ...) are left to the decoder. Keys match case-insensitively, as Spark's do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ...errors import SchemaError

__all__ = ["InferenceOptions", "MODES"]

MODES = ("PERMISSIVE", "DROPMALFORMED", "FAILFAST")
_DATETIME_FORMATS = ("timestampFormat", "timestampNTZFormat", "timeFormat")


@dataclass(frozen=True)
class InferenceOptions:
    """What ``infer_schema`` follows. The first group are Spark's JSON options (same names, same defaults);
    the last three are facts of the Spark session, which the spark layer passes:

    * ``timestamp_ntz_default``: ``spark.sql.timestampType`` is TIMESTAMP_NTZ (then inferTimestamp infers
      TIMESTAMP_NTZ for strings without a zone);
    * ``time_type``: ``spark.sql.timeType.enabled`` (Spark 4.1+; then inferTimestamp infers TIME for a time of
      day);
    * ``case_sensitive``: ``spark.sql.caseSensitive``;
    * ``lenient_surrogates``: the parser is Jackson 2.18 (Spark 4.0), which accepts an escaped surrogate
      without its pair in a field name and a surrogate encoded in UTF-8; Jackson 2.21 (Spark 4.1+) refuses
      both (the default).
    """

    primitives_as_string: bool = False
    prefers_decimal: bool = False
    allow_comments: bool = False
    allow_unquoted_field_names: bool = False
    allow_single_quotes: bool = True
    allow_numeric_leading_zeros: bool = False
    allow_non_numeric_numbers: bool = True
    allow_backslash_escaping_any_character: bool = False
    allow_unquoted_control_chars: bool = False
    mode: str = "PERMISSIVE"
    column_name_of_corrupt_record: str = "_corrupt_record"
    drop_field_if_all_null: bool = False
    infer_timestamp: bool = False
    time_zone: str = "UTC"
    max_nesting_depth: int = 1000
    max_num_len: int = 1000
    max_string_len: int = 20_000_000
    timestamp_ntz_default: bool = False
    time_type: bool = False
    case_sensitive: bool = False
    lenient_surrogates: bool = False

    @classmethod
    def parse(cls, options: Mapping[str, Any] | None = None, **session) -> "InferenceOptions":
        """Spark-named ``options`` (strings or Python values) plus the session facts as keywords
        (``timestamp_ntz_default``, ``time_type``, ``case_sensitive``, ``lenient_surrogates``, ``time_zone`` for
        the session time zone, ``column_name_of_corrupt_record`` for ``spark.sql.columnNameOfCorruptRecord``)."""
        given = {str(k).lower(): v for k, v in (options or {}).items()}
        defaults = cls(**session)

        def flag(name: str, default: bool) -> bool:
            value = given.get(name.lower())
            if value is None:
                return default
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text not in ("true", "false"):
                raise SchemaError(f"Option '{name}' must be 'true' or 'false', got {value!r}.")
            return text == "true"

        def number(name: str, default: int) -> int:
            value = given.get(name.lower())
            if value is None:
                return default
            try:
                result = int(str(value).strip())
            except ValueError:
                raise SchemaError(f"Option '{name}' must be a whole number, got {value!r}.") from None
            if result < 1:
                raise SchemaError(f"Option '{name}' must be at least 1, got {value!r}.")
            return result

        mode = str(given.get("mode", defaults.mode)).strip().upper()
        if mode not in MODES:
            # Spark logs a warning and reads PERMISSIVE; an option is never accepted and ignored here.
            raise SchemaError(f"Option 'mode' must be one of {', '.join(MODES)} (any case), got "
                              f"{given.get('mode')!r}.")
        result = cls(
            primitives_as_string=flag("primitivesAsString", defaults.primitives_as_string),
            prefers_decimal=flag("prefersDecimal", defaults.prefers_decimal),
            allow_comments=flag("allowComments", defaults.allow_comments),
            allow_unquoted_field_names=flag("allowUnquotedFieldNames", defaults.allow_unquoted_field_names),
            allow_single_quotes=flag("allowSingleQuotes", defaults.allow_single_quotes),
            allow_numeric_leading_zeros=flag("allowNumericLeadingZeros", defaults.allow_numeric_leading_zeros),
            allow_non_numeric_numbers=flag("allowNonNumericNumbers", defaults.allow_non_numeric_numbers),
            allow_backslash_escaping_any_character=flag("allowBackslashEscapingAnyCharacter",
                                                        defaults.allow_backslash_escaping_any_character),
            allow_unquoted_control_chars=flag("allowUnquotedControlChars", defaults.allow_unquoted_control_chars),
            mode=mode,
            column_name_of_corrupt_record=str(given.get("columnnameofcorruptrecord",
                                                        defaults.column_name_of_corrupt_record)),
            drop_field_if_all_null=flag("dropFieldIfAllNull", defaults.drop_field_if_all_null),
            infer_timestamp=flag("inferTimestamp", defaults.infer_timestamp),
            time_zone=str(given.get("timezone", defaults.time_zone)),
            max_nesting_depth=number("maxNestingDepth", defaults.max_nesting_depth),
            max_num_len=number("maxNumLen", defaults.max_num_len),
            max_string_len=number("maxStringLen", defaults.max_string_len),
            timestamp_ntz_default=defaults.timestamp_ntz_default,
            time_type=defaults.time_type,
            case_sensitive=defaults.case_sensitive,
            lenient_surrogates=defaults.lenient_surrogates,
        )
        result._check(given)
        return result

    def _check(self, given: dict) -> None:
        from .timestamps import zone_offset_seconds

        if zone_offset_seconds(self.time_zone, [1970, 1, 1, 0, 0, 0]) is None:
            raise SchemaError(f"Time zone {self.time_zone!r} (option 'timeZone' or the session's) is not a zone id "
                              "Spark accepts: a region such as 'Europe/Paris', 'UTC', or an offset such as '+01:00'.")
        if self.infer_timestamp:
            custom = [name for name in _DATETIME_FORMATS if given.get(name.lower()) is not None]
            if custom:
                raise SchemaError(
                    f"inferTimestamp with {' / '.join(custom)} is not supported: schema inference recognises "
                    "timestamps in Spark's default forms only (ISO 8601 dates and times such as "
                    "'2024-05-01T12:30:00Z'). Leave out the format option(s), or give the schema (valueSchema).")
        locale = given.get("locale")
        if self.prefers_decimal and locale is not None and str(locale).replace("_", "-").lower() != "en-us":
            raise SchemaError(f"prefersDecimal with locale {locale!r} is not supported: schema inference reads "
                              "decimal strings as Spark does for en-US. Leave out 'locale', or give the schema.")
