"""Option values every part of the Spark layer parses alike (kept apart from options.py so that the typed options,
which options.py imports, can use them too)."""

from __future__ import annotations

from typing import Any, Mapping

from spark_kwire.spark.errors import KwireOptionError

__all__ = ["parse_positive_int"]


def parse_positive_int(options: Mapping[str, Any], name: str, default: int | None = None) -> int | None:
    """Option ``name`` (keys lower-cased) as a whole number above zero; ``default`` when it is not given."""
    raw = options.get(name.lower())
    if raw is None:
        return default
    try:
        value = int(str(raw).strip())
    except ValueError:
        value = 0
    if value <= 0:
        raise KwireOptionError(f"Option '{name}' must be a positive integer, got {raw!r}.")
    return value
