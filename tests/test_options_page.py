"""docs/options.md and the table of kwire's options say the same: the page's side-by-side table is the rows of
spark_kwire/spark/options/page.py, in their order, and every option of the table (spark_kwire/spark/options/names.py)
is named in the row it points at. ``python -m tests.test_options_page`` writes the rows into the page."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

from spark_kwire.spark.options import page
from spark_kwire.spark.options.names import OPTIONS

PAGE = Path(__file__).resolve().parent.parent / "docs" / "options.md"
HEADER = ("| option | Spark `kafka` | kwire |", "|---|---|---|")


def split_page(text: str) -> tuple[list[str], list[str], list[str]]:
    """(the lines before the table's rows, the rows, the lines after them)."""
    lines = text.splitlines()
    start = next(i for i in range(len(lines) - 1) if tuple(lines[i:i + 2]) == HEADER) + 2
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return lines[:start], lines[start:end], lines[end:]


def rows() -> list[str]:
    return [row.markdown() for row in page.ROWS]


def test_the_page_shows_the_rows_of_the_table():
    _before, shown, _after = split_page(PAGE.read_text())
    assert len(shown) > 30, "the page's table was not found"
    diff = "\n".join(difflib.unified_diff(shown, rows(), "docs/options.md", "spark_kwire/spark/options/page.py",
                                          lineterm=""))
    assert shown == rows(), f"docs/options.md differs from the table (python -m tests.test_options_page writes it):\n{diff}"


def test_every_option_is_named_in_its_row_of_the_page():
    wrong = []
    for option in OPTIONS:
        if option.doc is None:  # only the keys Spark adds to a catalog table's options, which no user gives
            if option.added_by_spark != "catalog table":
                wrong.append(f"{option.name} has no row on the page")
            continue
        if option.doc not in page.ROWS:
            wrong.append(f"{option.name}: its row is not one of the page's")
        elif not re.search(rf"`{re.escape(option.shown)}[`=]", option.doc.label + " " + option.doc.kwire):
            wrong.append(f"{option.name}: its row ({option.doc.label[:60]}...) does not name it")
    assert not wrong, "\n".join(wrong)


def test_the_check_sees_a_row_that_differs():
    text = PAGE.read_text()
    changed = text.replace("| `includeHeaders` | same |", "| `includeHeaders` | different |")
    assert changed != text and split_page(changed)[1] != rows()


if __name__ == "__main__":
    before, _shown, after = split_page(PAGE.read_text())
    PAGE.write_text("\n".join(before + rows() + after) + "\n")
    print(f"wrote {len(page.ROWS)} rows into {PAGE}")
