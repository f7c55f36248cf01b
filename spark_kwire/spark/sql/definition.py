"""What a set of kwire options defines, judged before Spark says how they will be used.

Spark asks a source for its schema with the options of `load()` and of `CREATE TEMPORARY VIEW ... USING kwire`,
before it is known whether a read (a batch or a stream) or a write (`INSERT INTO` the view) follows. There kwire
refuses what is wrong whatever the use (an unknown option, a bad value), and judges the read's or the write's
own options when that use happens (``Use.VIEW`` in the table of options, :mod:`spark_kwire.spark.options.names`).
Options name a read with 'subscribe', 'subscribePattern' or 'assign' and a write with 'topic' (the table's
``target``); options naming both define a view used both ways, whose reads leave the write's options aside and
whose writes leave the read's (the table says which those are: :data:`~spark_kwire.spark.options.rules.READ_ONLY`,
``WRITE_ONLY``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from spark_kwire.spark.options.names import Use
from spark_kwire.spark.options.parsing import ReadOptions, WriteOptions
from spark_kwire.spark.options.rules import READ_ONLY, WRITE_ONLY, check_names, names_read, names_write


def names_both(options: Mapping[str, str]) -> bool:
    """The options name topics to read and the topic to write: a view that is read and written."""
    return names_read(options) and names_write(options)


def _without(options: Mapping[str, str], names: set[str]) -> dict[str, str]:
    return {k: v for k, v in options.items() if k.lower() not in names}


def for_read(options: Mapping[str, str]) -> Mapping[str, str]:
    """The options a read judges: all of them, less the write's when they define both."""
    return _without(options, WRITE_ONLY) if names_both(options) else options


def for_write(options: Mapping[str, str]) -> Mapping[str, str]:
    """The options a write judges: all of them, less the read's when they define both."""
    return _without(options, READ_ONLY) if names_both(options) else options


@dataclass(frozen=True)
class Definition:
    """The read and the write a set of options can serve, each judged as far as it can be before its use."""

    read: ReadOptions | None  # when a subscription is named: judged as load() judges a read of either kind
    write: WriteOptions | None  # when no subscription, or a subscription and a topic, are named


def judge_definition(options: Mapping[str, str]) -> Definition:
    """Refuse what is wrong whatever the use: unknown options, and bad values of those the options name (the
    read's when they name a subscription, the write's when they name a topic to write or no subscription)."""
    check_names({k.lower(): v for k, v in options.items()}, {Use.VIEW})
    reads = names_read(options)
    read = ReadOptions.parse(_without(options, WRITE_ONLY), streaming=None) if reads else None
    # Options naming topics to read and none to write define a read: a write-only option there is misplaced, which
    # the read says when it happens ("does not apply to a read"), not a write to judge now.
    writes = not reads or names_both(options)
    # judged, not used: the settings with no effect are named when the write happens (writer()), once
    write = WriteOptions.parse(_without(options, READ_ONLY), streaming=False, warn=False) if writes else None
    return Definition(read, write)
