"""Option values every part of the Spark layer parses alike (kept apart from options.py so that the typed options,
which options.py imports, can use them too)."""

from __future__ import annotations

from typing import Any, Mapping

from spark_kwire.spark.errors import KwireOptionError

__all__ = ["parse_non_negative_int", "parse_positive_int"]


def parse_positive_int(options: Mapping[str, Any], name: str, default: int | None = None) -> int | None:
    """Option ``name`` (keys lower-cased) as a whole number above zero; ``default`` when it is not given."""
    return _whole_number(options, name, default, 1, "a positive integer")


def parse_non_negative_int(options: Mapping[str, Any], name: str) -> int | None:
    """Option ``name`` (keys lower-cased) as a whole number >= 0; None when it is not given."""
    return _whole_number(options, name, None, 0, "a whole number >= 0")


def _whole_number(options: Mapping[str, Any], name: str, default: int | None, lowest: int,
                  accepted: str) -> int | None:
    raw = options.get(name.lower())
    if raw is None:
        return default
    try:
        value = int(str(raw).strip())
    except ValueError:
        value = lowest - 1
    if value < lowest:
        raise KwireOptionError(f"Option '{name}' must be {accepted}, got {raw!r}.")
    return value
