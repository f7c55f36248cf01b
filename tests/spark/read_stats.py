"""The per-task statistics kwire's read tasks write under $KWIRE_STATS_DIR (see spark_kwire.spark.reading.reader._Stats)."""

from __future__ import annotations

import glob
import json
import os


def read_stats_for(read_stats_dir, topic: str) -> list[dict]:
    """Every statistics line written so far for `topic`, one per range a task read."""
    rows = []
    for path in glob.glob(os.path.join(read_stats_dir, "*.jsonl")):
        with open(path) as f:
            rows += [r for r in map(json.loads, f) if r["topic"] == topic]
    return rows
