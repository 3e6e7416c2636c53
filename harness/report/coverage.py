"""Fault coverage in the reports: one run's classes beside its timeline, and across runs
the class x profile table (runs that reached each class) of `results/index.html`, the
nightly summary and the README. Reads only the `coverage` section of results.json
(written by checker/coverage) and the profile in run.json; never raises for a run
folder that lacks them (such a run is just not counted)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

EVIDENCE_SHOWN = 4  # lines of evidence per class on the run's page


@dataclass(frozen=True)
class CoverageRow:
    name: str
    title: str
    reached: bool
    count: int
    first_s: str  # on the timeline's time axis
    evidence: list[str]
    error: str = ""


def _evidence_line(line: Mapping[str, Any]) -> str:
    if line.get("event") == "run-config":  # settings (checker/coverage/knobs.py)
        return "run.json config: " + ", ".join(f"{k}={v}" for k, v in line.items()
                                               if k != "event")
    if "event" in line:  # a trace line
        extra = {k: v for k, v in line.items() if k not in ("ts_ns", "pod", "pid", "event")}
        return f"{line.get('pod')} pid {line.get('pid')} {line['event']} {json.dumps(extra)}"
    value = line.get("value") or {}  # a history op
    return f"nemesis {line.get('f')} {value.get('target', '')} {value.get('phase', '')}"


def coverage_rows(results: Mapping[str, Any] | None, origin_ns: int | None) -> list[CoverageRow]:
    """The run's classes, reached first, with times relative to `origin_ns` (the
    timeline's origin; the coverage section's own origin when None)."""
    section = (results or {}).get("coverage") or {}
    classes = section.get("classes") or {}
    origin = origin_ns if origin_ns is not None else section.get("origin_ns")
    rows = []
    for name, entry in classes.items():
        if not isinstance(entry, Mapping):
            continue
        first = entry.get("first_ts_ns")
        first_s = f"{(first - origin) / 1e9:.1f}" if isinstance(first, int) and origin else "-"
        rows.append(CoverageRow(
            name=str(name), title=str(entry.get("title", "")), reached=bool(entry.get("reached")),
            count=int(entry.get("count") or 0), first_s=first_s,
            evidence=[_evidence_line(x) for x in (entry.get("evidence") or [])[:EVIDENCE_SHOWN]
                      if isinstance(x, Mapping)],
            error=str(entry.get("error") or ""),
        ))
    return sorted(rows, key=lambda r: not r.reached)


@dataclass
class CoverageTable:
    """Runs that reached each class, per profile."""

    classes: dict[str, str] = field(default_factory=dict)  # name -> title, in class order
    runs: dict[str, int] = field(default_factory=dict)  # profile -> runs with coverage
    reached: dict[tuple[str, str], int] = field(default_factory=dict)  # (class, profile)

    @property
    def profiles(self) -> list[str]:
        return sorted(self.runs, key=lambda p: (p != "all", p))

    def cell(self, name: str, profile: str) -> str:
        return f"{self.reached.get((name, profile), 0)}/{self.runs[profile]}"

    def total(self, name: str) -> int:
        return sum(n for (c, _), n in self.reached.items() if c == name)

    def to_json(self) -> dict[str, Any]:
        return {"runs": self.runs, "reached": {
            c: {p: self.reached.get((c, p), 0) for p in self.profiles} for c in self.classes}}

    def to_rich(self) -> Table:
        table = Table(title="fault coverage (runs that reached each class / runs)")
        table.add_column("class")
        for p in self.profiles:
            table.add_column(p, justify="right")
        for name in self.classes:
            style = "" if self.total(name) else "[red]"
            table.add_row(f"{style}{name}", *(self.cell(name, p) for p in self.profiles))
        return table

    def to_markdown(self) -> str:
        head = "| class | " + " | ".join(self.profiles) + " |"
        rule = "|---|" + "---:|" * len(self.profiles)
        body = [f"| `{n}` | " + " | ".join(self.cell(n, p) for p in self.profiles) + " |"
                for n in self.classes]
        return "\n".join([head, rule, *body])


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def coverage_table(run_dirs: Iterable[Path]) -> CoverageTable:
    table = CoverageTable()
    for run_dir in run_dirs:
        section = _read(Path(run_dir) / "results.json").get("coverage") or {}
        classes = section.get("classes")
        if not isinstance(classes, Mapping) or not classes:
            continue  # judged before coverage existed, or not judged at all
        run = _read(Path(run_dir) / "run.json")
        profile = str(run.get("profile") or (run.get("config") or {}).get("profile") or "?")
        table.runs[profile] = table.runs.get(profile, 0) + 1
        for name, entry in classes.items():
            if not isinstance(entry, Mapping):
                continue
            table.classes.setdefault(str(name), str(entry.get("title", "")))
            if entry.get("reached"):
                key = (str(name), profile)
                table.reached[key] = table.reached.get(key, 0) + 1
    return table


NIGHTLY_COVERAGE = "coverage.md"


def nightly_coverage(run_dirs: Iterable[Path], log_dir: Path, console: Console) -> Path | None:
    """The nightly's coverage table: printed, and written as Markdown (the README's
    table) and JSON into the nightly's folder. Returns the Markdown file; None (and one
    line saying why) if it could not be written: the nightly's verdict matters more."""
    table = coverage_table(run_dirs)
    # CI logs are not terminals: rich would assume 80 columns and fold every cell.
    shown = console if console.is_terminal else Console(width=160)
    shown.print(table.to_rich())
    path = log_dir / NIGHTLY_COVERAGE
    try:
        (log_dir / "coverage.json").write_text(json.dumps(table.to_json(), indent=2) + "\n")
        path.write_text(table.to_markdown() + "\n")
    except OSError as exc:
        shown.print(f"coverage table not written to {log_dir}: {exc.strerror or exc}")
        return None
    return path
