"""docs/kafka-client-settings.md and the code's lists of Kafka client settings say the same: every setting of the
client's lists (spark_kwire/client/settings/names.py) and of Spark's refusals (the table of kwire's options,
spark_kwire/spark/options/names.py) has a row with its status and its reason, and every row names a setting of those
lists."""

from __future__ import annotations

import html
import re
from pathlib import Path

from spark_kwire.client.settings.names import HONOURED, NO_EFFECT, REFUSED
from spark_kwire.spark.options.names import Use
from spark_kwire.spark.options.rules import kafka_refused

PAGE = Path(__file__).resolve().parent.parent / "docs" / "kafka-client-settings.md"
_UNSUPPORTED_KAFKA_READ, _UNSUPPORTED_KAFKA_WRITE = kafka_refused(Use.BATCH_READ), kafka_refused(Use.BATCH_WRITE)
_ROW = re.compile(r"^\| `([^`]+)` \| ([^|]+) \| (.*) \|$")


def _rows() -> dict[str, tuple[str, str]]:
    rows: dict[str, tuple[str, str]] = {}
    for line in PAGE.read_text().splitlines():
        match = _ROW.match(line)
        if match:
            name, status, text = match.groups()
            assert name not in rows, f"{name} has two rows"
            rows[name] = (status.strip(), html.unescape(text))
    return rows


def _direction(name: str, spark_refuses: dict) -> tuple[str, str | None]:
    if name in spark_refuses:
        return "refused", spark_refuses[name]
    if name in REFUSED:
        return "refused", REFUSED[name]
    if name in NO_EFFECT:
        return "no effect", NO_EFFECT[name]
    return "honoured", None


def test_the_settings_page_shows_every_setting_with_its_status_and_reason():
    rows = _rows()
    names = set(HONOURED) | set(NO_EFFECT) | set(REFUSED) | set(_UNSUPPORTED_KAFKA_READ) | set(_UNSUPPORTED_KAFKA_WRITE)
    assert len(rows) > 100 and not set(rows) - names, f"rows for settings the code does not know: {set(rows) - names}"
    assert not names - set(rows), f"settings the page does not show: {sorted(names - set(rows))}"
    wrong = []
    for name in sorted(names):
        (read, read_why), (write, write_why) = _direction(name, _UNSUPPORTED_KAFKA_READ), \
            _direction(name, _UNSUPPORTED_KAFKA_WRITE)
        status = read if read == write else f"{read} on reads, {write} on writes"
        shown, text = rows[name]
        if shown != status:
            wrong.append(f"{name}: the page says {shown!r}, the code {status!r}")
        for why in {read_why, write_why} - {None}:
            if why not in text:
                wrong.append(f"{name}: the page does not give the code's reason {why!r}")
    assert not wrong, "\n".join(wrong)
