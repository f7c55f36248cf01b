"""The guide as data, for tests/test_docs.py: its pages in reading order, their fenced blocks with any
``<!-- not run: reason -->`` marker, their relative links, and the anchors GitHub makes from their headings."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"

_FENCE = re.compile(r"^```\s*([\w+-]*)\s*$")
_MARKER = re.compile(r"^<!--\s*not run\b(.*?)-->\s*$")
_LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)\)")
_INLINE_CODE = re.compile(r"`+[^`]*`+")


@dataclass
class Block:
    page: str          # path relative to the repository, e.g. docs/reading.md
    line: int          # the line of the opening fence (1-based)
    language: str
    code: str
    not_run: str | None  # the marker's reason; "" for a marker without one; None: no marker

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def pages() -> list[Path]:
    """README.md, then docs/README.md and the pages in the order that index links them, then any page it misses."""
    index = DOCS / "README.md"
    ordered = [REPO / "README.md", index]
    for target in links(index):
        path = (index.parent / target.partition("#")[0]).resolve()
        if path.parent == DOCS and path.suffix == ".md" and path not in ordered:
            ordered.append(path)
    return ordered + sorted(set(DOCS.glob("*.md")) - set(ordered))


def blocks(path: Path) -> tuple[list[Block], list[str]]:
    """The fenced blocks of a page, and the problems of its markers (one without a reason, one not followed by a
    Python block)."""
    rel = path.relative_to(REPO).as_posix() if path.is_relative_to(REPO) else path.name
    found: list[Block] = []
    problems: list[str] = []
    lines = path.read_text().splitlines()
    marker: tuple[int, str] | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        match = _MARKER.match(line.strip())
        fence = _FENCE.match(line)
        if match:
            reason = match.group(1).strip()
            if not reason.startswith(":") or not reason[1:].strip():
                problems.append(f"{rel}:{i + 1}: a not-run marker must give its reason: <!-- not run: why -->")
            marker = (i + 1, reason[1:].strip() if reason.startswith(":") else "")
        elif fence:
            start, language, body = i + 1, fence.group(1).lower(), []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            reason = marker[1] if marker else None
            if marker and language != "python":
                problems.append(f"{rel}:{marker[0]}: a not-run marker stands before a {language or 'plain'} block")
            found.append(Block(rel, start, language, "\n".join(body) + "\n", reason))
            marker = None
        elif line.strip() and marker:
            problems.append(f"{rel}:{marker[0]}: a not-run marker must be right before the block it is about")
            marker = None
        i += 1
    if marker:
        problems.append(f"{rel}:{marker[0]}: a not-run marker with no block after it")
    return found, problems


def prose(path: Path) -> str:
    """The page without its fenced blocks and inline code (where brackets are not links)."""
    out, in_fence = [], False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
            continue
        if not in_fence:
            out.append(_INLINE_CODE.sub("", line))
    return "\n".join(out)


def links(path: Path) -> list[str]:
    """Every link target of a page that is not an absolute URL."""
    return [t for t in _LINK.findall(prose(path)) if not re.match(r"^[a-z][a-z0-9+.-]*:", t)]


def anchors(path: Path) -> set[str]:
    """The anchors GitHub gives the headings of a page: lower case, punctuation dropped, spaces as hyphens, and
    -1, -2... for repeats."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    for line in _headings(path):
        base = slug(line)
        n = seen.get(base, 0)
        out.add(base if n == 0 else f"{base}-{n}")
        seen[base] = n + 1
    return out


def _headings(path: Path) -> list[str]:
    found, in_fence = [], False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
        elif not in_fence and re.match(r"^#{1,6} ", line):
            found.append(line.lstrip("#").strip())
    return found


def slug(heading: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading keeps its text
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")
