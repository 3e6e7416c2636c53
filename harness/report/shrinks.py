"""The index's list of shrinks: each `kchaos shrink` folder (its shrink.json), with the
steps before and after, the reruns it took and a link to its report."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from harness.report.pages import href, short_error

# A shrink folder's files (harness/shrink/files.py writes them there).
LOG_FILE = "shrink.json"
REPORT_FILE = "report.html"


@dataclass(frozen=True)
class ShrinkRow:
    name: str
    link: str
    original_run: str = ""
    steps_before: int = 0
    steps_after: int | None = None  # None: nothing reproduced, no shrunk plan
    reruns: int = 0
    wall_s: float = 0.0
    classes: tuple[str, ...] = ()
    error: str = ""


def _row(folder: Path) -> ShrinkRow:
    report = folder / REPORT_FILE
    link = href(f"{folder.name}/{REPORT_FILE}" if report.exists() else f"{folder.name}/")
    try:
        log = json.loads((folder / LOG_FILE).read_text())
        shrunk = log.get("shrunk")
        return ShrinkRow(
            name=folder.name,
            link=link,
            original_run=Path(str(log["original_run"])).name,
            steps_before=len(log["original"]["step_ids"]),
            steps_after=None if shrunk is None else len(shrunk["step_ids"]),
            reruns=int(log.get("reruns", 0)),
            wall_s=float(log.get("wall_s", 0.0)),
            classes=tuple(str(c) for c in log.get("target_classes", ())),
        )
    except Exception as exc:  # a damaged shrink.json costs its own row only
        return ShrinkRow(folder.name, link, error=short_error(exc))


def shrink_rows(results_dir: Path) -> list[ShrinkRow]:
    """Every shrink folder directly under `results_dir`, newest name first."""
    try:
        found = [p for p in results_dir.iterdir() if (p / LOG_FILE).is_file()]
    except OSError:
        return []
    return [_row(p) for p in sorted(found, key=lambda p: p.name, reverse=True)]
