"""What a write task reports to the commit, in a module light enough for the processes that only commit."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pyspark.sql.datasource import WriterCommitMessage

if TYPE_CHECKING:
    from spark_kwire.spark.writing.exactly_once import TaskTransaction


@dataclass
class WriteReport(WriterCommitMessage):
    """What one task wrote: records acknowledged per (topic, partition); with exactly-once, the transaction
    the driver is to commit (None when the task had nothing to commit); with KWIRE_PROFILE, where its time went."""
    written: dict = field(default_factory=dict)
    transaction: TaskTransaction | None = None
    profile: dict | None = None
