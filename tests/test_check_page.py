"""docs/checking-a-connection.md and the check's code say the same: the page's table of steps is rows.STEPS (in the
order a run reports them) and its table of outcomes and fixes is fixes.FIXES, kind by kind, with the same steps and
the same fix sentence."""

from __future__ import annotations

import re
from pathlib import Path

from spark_kwire.client.check.fixes import FIXES
from spark_kwire.client.check.rows import STEPS

PAGE = Path(__file__).resolve().parent.parent / "docs" / "checking-a-connection.md"
_STEP_ROW = re.compile(r"^\| `([a-z_]+)` \| ([^|]+) \|$")
_FIX_ROW = re.compile(r"^\| `([a-z_]+)` \| ([^|]+) \| (.+) \|$")


def _section(title: str) -> list[str]:
    text = PAGE.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else None].splitlines()


def test_the_page_lists_every_step_in_order():
    rows = [m.groups() for line in _section("What it checks") if (m := _STEP_ROW.match(line))]
    assert [name for name, _ in rows] == list(STEPS)
    assert [what.strip() for _, what in rows] == list(STEPS.values())


def test_the_page_shows_every_kind_with_its_steps_and_fix():
    rows = {}
    for line in _section("Outcomes and fixes"):
        match = _FIX_ROW.match(line)
        if match:
            kind, steps, fix = match.groups()
            assert kind not in rows, f"{kind} has two rows"
            rows[kind] = (steps.strip(), fix.strip())
    assert set(rows) == set(FIXES), (f"kinds the page lacks: {sorted(set(FIXES) - set(rows))}; rows the code does "
                                     f"not know: {sorted(set(rows) - set(FIXES))}")
    wrong = []
    for kind, (steps, fix) in rows.items():
        expected = FIXES[kind]
        shown = "any" if len(expected.steps) >= 6 else ", ".join(f"`{s}`" for s in expected.steps)
        if steps != shown:
            wrong.append(f"{kind}: the page names the steps {steps}, the code {shown}")
        if fix != expected.sentence:
            wrong.append(f"{kind}: the page's fix differs from fixes.py:\n  {fix}\n  {expected.sentence}")
    assert not wrong, "\n".join(wrong)


def test_every_fix_is_one_sentence_and_every_step_known():
    for kind, fix in FIXES.items():
        assert set(fix.steps) <= set(STEPS), kind
        assert fix.sentence.endswith(".") and fix.sentence.count(". ") == 0, f"{kind}: one sentence: {fix.sentence}"
