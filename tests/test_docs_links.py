"""The user's guide stays short and its links stay whole.

For README.md and every docs/*.md: each relative markdown link or image, `[text](path)` or
`[text](path#anchor)`, names a file of the repo (resolved against the linking file), and
each `#anchor` is a heading of the target page, slugged as GitHub does. http(s) and mailto
links are not followed. Pure file checks: no broker, Spark or network.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
README_MAX_LINES = 220
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
# A code span may wrap onto the next line, never past a paragraph's end.
CODE_SPAN = re.compile(r"(`+)(?:(?!\1)(?!\n[ \t]*\n)[\s\S])+?\1")
# [text](target) and ![alt](target); the target may carry a "title".
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
EXTERNAL = ("http://", "https://", "mailto:")


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code blocks."""
    lines, fenced = [], False
    for number, line in enumerate(text.splitlines(), start=1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append((number, line))
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation other than '-' and '_'
    dropped, each space a '-'."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every heading anchor of a page; a repeated heading gets -1, -2, ... as on GitHub."""
    seen: dict[str, int] = {}
    found = set()
    for _, line in prose_lines(page.read_text()):
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found


def links(page: Path) -> list[tuple[int, str]]:
    """(line number, target) of every markdown link and image outside code; a link's text
    may wrap onto the next line."""
    text = page.read_text()
    prose = dict(prose_lines(text))
    kept = "\n".join(prose.get(n, "") for n in range(1, len(text.splitlines()) + 1))
    # Blank code spans out, keeping their newlines, so that offsets still give lines.
    kept = CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), kept)
    return [(kept.count("\n", 0, m.start()) + 1, m.group(1)) for m in LINK.finditer(kept)]


def broken_links(page: Path) -> list[str]:
    problems = []
    for number, target in links(page):
        if not target or target.startswith(EXTERNAL):
            continue
        path_part, _, anchor = target.partition("#")
        linked = (page.parent / path_part).resolve() if path_part else page
        where = f"{page.relative_to(ROOT)}:{number}: {target}"
        if not linked.exists():
            shown = linked.relative_to(ROOT) if linked.is_relative_to(ROOT) else linked
            problems.append(f"{where}: no such file {shown}")
            continue
        if anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            problems.append(f"{where}: no heading #{anchor} in {linked.relative_to(ROOT)}")
    return problems


def test_the_slug_follows_github() -> None:
    assert slug("Shrinking a failing plan (`kchaos shrink`)") == (
        "shrinking-a-failing-plan-kchaos-shrink")
    assert slug("Storage faults: power loss, I/O delay and errors (fault filesystem)") == (
        "storage-faults-power-loss-io-delay-and-errors-fault-filesystem")
    assert slug("Found by the power loss: the worker's directories") == (
        "found-by-the-power-loss-the-workers-directories")
    assert slug("snake_case and kebab-case") == "snake_case-and-kebab-case"


def test_links_are_found_outside_code_only(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("See [a](a.md#x) and ![img](img/p.png \"title\").\n"
                    "`[not](a link)`\n```\n[nor](this)\n```\n"
                    "A [wrapped\nlink](b.md) and `a wrapped\n[code](span)`.\n")
    assert links(page) == [(1, "a.md#x"), (1, "img/p.png"), (6, "b.md")]


def test_the_pages_exist() -> None:
    assert README.is_file()
    assert len(PAGES) > 1, "no docs/*.md found"


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    assert broken_links(page) == []


def test_the_readme_is_short() -> None:
    lines = len(README.read_text().splitlines())
    assert lines <= README_MAX_LINES, (
        f"README.md has {lines} lines (at most {README_MAX_LINES}): move details to docs/")
