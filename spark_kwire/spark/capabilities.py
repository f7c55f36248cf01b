"""What the running PySpark's Python data source API offers, found by import, never by version string.

One wheel serves PySpark 4.0, 4.1, 4.2 and 4.3. Each capability below names the Spark release that
brings it (for messages and the README), and says whether this PySpark has it. The rest of the spark
layer asks these names instead of importing optional APIs itself, so that importing any `spark_kwire`
module works on every supported release.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass

__all__ = ["Capability", "ARROW_STREAM_WRITER", "FILTER_PUSHDOWN", "READ_LIMIT_API", "SIMPLE_READER_SKIPS_IDLE_POLLS",
           "TIME_TYPE", "PIPELINES", "ALL", "summary"]


@dataclass(frozen=True)
class Capability:
    """A piece of the Python data source API: `available` in this PySpark, brought by Spark `since`."""

    name: str
    since: str
    available: bool
    what_kwire_does_without: str

    def __bool__(self) -> bool:
        return self.available


def _has(module: str, *names: str) -> bool:
    try:
        found = importlib.import_module(module)
    except ImportError:
        return False
    return all(hasattr(found, name) for name in names)


#: `DataSourceStreamArrowWriter`: stream writers that receive Arrow record batches.
ARROW_STREAM_WRITER = Capability(
    name="Arrow stream writer (DataSourceStreamArrowWriter)",
    since="Spark 4.1",
    available=_has("pyspark.sql.datasource", "DataSourceStreamArrowWriter"),
    what_kwire_does_without="stream writes take rows and build Arrow batches from them, with the same producer "
                            "and guarantees (slower: one Python object per row)",
)

#: `DataSourceReader.pushFilters` and the filter classes (`EqualTo`, `GreaterThan`, ...).
FILTER_PUSHDOWN = Capability(
    name="filter pushdown (DataSourceReader.pushFilters)",
    since="Spark 4.1",
    available=_has("pyspark.sql.datasource", "Filter", "EqualTo", "GreaterThan", "GreaterThanOrEqual",
                   "LessThan", "LessThanOrEqual", "In"),
    what_kwire_does_without="reads work without pushdown; Spark applies the filters to the rows read",
)

#: `pyspark.sql.streaming.datasource`: ReadLimit, `latestOffset(start, limit)`, SupportsTriggerAvailableNow.
READ_LIMIT_API = Capability(
    name="admission control and Trigger.AvailableNow for Python sources (ReadLimit API)",
    since="Spark 4.2",
    available=_has("pyspark.sql.streaming.datasource", "ReadLimit", "ReadAllAvailable", "ReadMaxRows",
                   "ReadMinRows", "SupportsTriggerAvailableNow"),
    what_kwire_does_without="the source enforces maxOffsetsPerTrigger, minOffsetsPerTrigger and maxTriggerDelay "
                            "itself by remembering where the previous batch ended; Spark runs Trigger.AvailableNow "
                            "as a single batch",
)

#: Spark's wrapper of a `SimpleDataSourceStreamReader` (the driver's read mode) keeps no entry for a poll that found
#: nothing (`_SimpleStreamReaderWrapper.add_result_to_cache`, which also raises
#: SIMPLE_STREAM_READER_OFFSET_DID_NOT_ADVANCE). Earlier patch releases kept one per idle poll until the next
#: micro-batch's commit: a stream idle for an hour grew the driver's source process by hundreds of MB.
SIMPLE_READER_SKIPS_IDLE_POLLS = Capability(
    name="a simple stream reader that keeps no idle poll (SIMPLE_STREAM_READER_OFFSET_DID_NOT_ADVANCE check)",
    since="PySpark 4.0.5, 4.1.4 and 4.2",
    available=_has("pyspark.sql.datasource_internal", "_SimpleStreamReaderWrapper")
    and hasattr(importlib.import_module("pyspark.sql.datasource_internal")._SimpleStreamReaderWrapper,
                "add_result_to_cache"),
    what_kwire_does_without="streamReadMode=auto reads streams with tasks; streamReadMode=driver works, and the "
                            "driver's memory grows while the topics are idle",
)

#: Spark's TIME type in general use (Spark 4.2: its functions, e.g. time_to_micros, are there; Spark 4.1 has the
#: type as a preview that to_json and most functions refuse). Avro's time-micros then reads as TIME, as spark-avro's
#: from_avro reads it from Spark 4.2 on (SPARK-54473).
TIME_TYPE = Capability(
    name="TIME type (pyspark.sql.types.TimeType with its functions)",
    since="Spark 4.2",
    available=_has("pyspark.sql.types", "TimeType") and _has("pyspark.sql.functions", "time_to_micros"),
    what_kwire_does_without="typed reads show Avro time-micros as bigint (microseconds after midnight), as "
                            "spark-avro's from_avro does before Spark 4.2",
)

#: `pyspark.pipelines`: Spark Declarative Pipelines (the `spark-pipelines` CLI, `@dp.table`, `dp.create_sink`). Found
#: without importing it (it loads Spark Connect's client, which kwire's Python workers do not need).
PIPELINES = Capability(
    name="Spark Declarative Pipelines (pyspark.pipelines)",
    since="Spark 4.1",
    available=importlib.util.find_spec("pyspark.pipelines") is not None,
    what_kwire_does_without="nothing to fall back on: kwire's streams (readStream, writeStream) and temporary "
                            "views work on every release; pipelines need Spark 4.1 or later",
)

ALL = (ARROW_STREAM_WRITER, FILTER_PUSHDOWN, READ_LIMIT_API, SIMPLE_READER_SKIPS_IDLE_POLLS, TIME_TYPE, PIPELINES)


def summary() -> dict[str, bool]:
    """{capability name: available}, e.g. for a support report."""
    return {c.name: c.available for c in ALL}


class UnsupportedOnThisSparkError(Exception):
    """What a query asks for needs a capability this PySpark lacks; the message names it and the release
    that brings it."""

    def __init__(self, what: str, capability: Capability, advice: str) -> None:
        super().__init__(
            f"{what} needs {capability.name}, which this PySpark does not have ({capability.since} brings it). "
            f"{advice}"
        )
        self.capability = capability
