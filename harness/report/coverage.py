"""Fault coverage in the reports: one run's classes beside its timeline, and across runs
the class x profile table (runs that reached each class) of `results/index.html`, the
nightly summary and the README. Reads only the `coverage` section of results.json
(written by checker/coverage) and the profile in run.json; never raises for a run
folder that lacks them (such a run is just not counted).

Over time (`over_time`): for a soak (faults/soak.py) or any run of two windows or more,
the classes reached and the anomaly examples in each window, from the run's stored files.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from common.fault_traits import PLAN_FILE, plan_traits
from faults.mixes import ALL
from harness.report.coverage_why import RunShape, why_missed

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


@dataclass(frozen=True)
class Shortfall:
    """A class fewer than half of a broad profile's runs reached, and why the others missed
    it (harness/report/coverage_why.py), most common reason first."""

    name: str
    profile: str
    reached: int
    runs: int
    reasons: list[tuple[str, int]]

    def text(self) -> str:
        why = "; ".join(f"{reason} ({n})" for reason, n in self.reasons)
        return f"{self.name} in {self.profile}: {self.reached}/{self.runs} runs; missed: {why}"


@dataclass
class CoverageTable:
    """Runs that reached each class, per profile (a SUT other than the worker's runs are a
    column of their own, `all (kstreams)`), and why runs missed each class."""

    classes: dict[str, str] = field(default_factory=dict)  # name -> title, in class order
    runs: dict[str, int] = field(default_factory=dict)  # profile -> runs with coverage
    reached: dict[tuple[str, str], int] = field(default_factory=dict)  # (class, profile)
    # (class, profile) -> why each run that missed it did, counted
    missed_why: dict[tuple[str, str], Counter[str]] = field(default_factory=dict)
    scopes: dict[str, str] = field(default_factory=dict)  # class -> run | nightly | knobs

    def shortfalls(self, broad: Collection[str] = (ALL.name,)) -> list[Shortfall]:
        """The run-scope classes that fewer than half of a broad profile's runs reached
        (`all`, whose draw is meant to reach every one, by default)."""
        out = []
        for profile in self.profiles:
            if profile.split(" ")[0] not in broad:
                continue
            runs = self.runs[profile]
            for name in self.classes:
                got = self.reached.get((name, profile), 0)
                if self.scopes.get(name, "run") == "run" and 2 * got < runs:
                    why = self.missed_why.get((name, profile), Counter())
                    out.append(Shortfall(name, profile, got, runs, why.most_common()))
        return out

    @property
    def profiles(self) -> list[str]:
        return sorted(self.runs, key=lambda p: (p != ALL.name, p))

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
        short = [f"- {s.text()}" for s in self.shortfalls()]
        below = ["", "Reached by fewer than half of the broad profiles' runs:", "", *short]
        return "\n".join([head, rule, *body, *(below if short else [])])


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
        raw_config = run.get("config")
        config: dict[str, Any] = raw_config if isinstance(raw_config, dict) else {}
        ran_with = run.get("ran_with")
        if isinstance(ran_with, dict) and ran_with.get("guarantee"):  # an app's, as it ran
            config = {**config, "guarantee": ran_with["guarantee"]}
        profile = str(run.get("profile") or config.get("profile") or "?")
        sut = str(config.get("sut") or "python")
        if sut != "python":
            profile = f"{profile} ({sut})"
        plan = _read(Path(run_dir) / PLAN_FILE)
        steps = plan.get("steps")
        shape = RunShape(config, steps if isinstance(steps, list) else [], plan_traits(plan))
        table.runs[profile] = table.runs.get(profile, 0) + 1
        for name, entry in classes.items():
            if not isinstance(entry, Mapping):
                continue
            table.classes.setdefault(str(name), str(entry.get("title", "")))
            table.scopes.setdefault(str(name), str(entry.get("scope", "run")))
            key = (str(name), profile)
            if entry.get("reached"):
                table.reached[key] = table.reached.get(key, 0) + 1
            else:
                table.missed_why.setdefault(key, Counter())[why_missed(str(name), shape)] += 1
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
    for shortfall in table.shortfalls():
        shown.print(f"[yellow]under half:[/] {shortfall.text()}", highlight=False)
    path = log_dir / NIGHTLY_COVERAGE
    try:
        (log_dir / "coverage.json").write_text(json.dumps(table.to_json(), indent=2) + "\n")
        path.write_text(table.to_markdown() + "\n")
    except OSError as exc:
        shown.print(f"coverage table not written to {log_dir}: {exc.strerror or exc}")
        return None
    return path


# -- over time: coverage and anomalies per window of a long run (a soak) ---------------------


@dataclass(frozen=True)
class TimeWindow:
    """One window of a long run: [start_s, end_s) on the timeline (end None: after the
    load phase, i.e. heal and drain)."""

    start_s: float
    end_s: float | None
    faults: int  # nemesis faults applied in it
    classes: dict[str, int]  # coverage class -> its hits in the window (reached ones only)
    anomalies: dict[str, int]  # check -> its examples (with a time) in the window

    @property
    def label(self) -> str:
        if self.end_s is None:
            return f"after {self.start_s:g} s (heal, drain)"
        return f"{self.start_s:g}-{self.end_s:g} s"


@dataclass(frozen=True)
class OverTime:
    window_s: float
    windows: list[TimeWindow]
    classes: list[str]  # the run-scope classes, in class order
    counts: dict[str, int]  # results.json's anomaly counts (all of them)
    examples: dict[str, int]  # the examples results.json keeps, per check

    def reached(self, name: str) -> int:
        """Windows (of the load phase) in which the class was reached."""
        return sum(1 for w in self.windows if w.end_s is not None and w.classes.get(name))

    @property
    def load_windows(self) -> int:
        return sum(1 for w in self.windows if w.end_s is not None)


# Where an anomaly example says when it happened: a trace line's ts_ns, the send time of
# the event, the record's timestamp (ms), or those of its input (duplicate-output).
_EXAMPLE_TIMES = (("ts_ns", 1), ("sent_ms", 1_000_000), ("timestamp_ms", 1_000_000))


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def example_time_ns(example: Any) -> int | None:
    if not isinstance(example, Mapping):
        return None
    for key, scale in _EXAMPLE_TIMES:
        value = _whole(example.get(key))
        if value is not None:
            return value * scale
    rows = example.get("input")
    if isinstance(rows, list) and rows and isinstance(rows[0], Mapping):
        return example_time_ns(rows[0])
    return None


def _history_origin(run_dir: Path) -> int | None:
    """The time of the first op of history.jsonl (appended in order): the load's start."""
    try:
        with (run_dir / "history.jsonl").open(errors="replace") as f:
            for line in f:
                try:
                    op = json.loads(line)
                except ValueError:
                    continue
                t = _whole(op.get("time_ns")) if isinstance(op, dict) else None
                if t is not None:
                    return t
    except OSError:
        return None
    return None


def _limit_and_profile(run: Mapping[str, Any]) -> tuple[float | None, str]:
    config = run.get("config")
    config = config if isinstance(config, Mapping) else {}
    profile = str(run.get("profile") or config.get("profile"))
    limit = config.get("time_limit_s")
    if isinstance(limit, bool) or not isinstance(limit, int | float) or not limit > 0:
        return None, profile
    return float(limit), profile


def over_time(run_dir: Path, results: Mapping[str, Any] | None, run: Mapping[str, Any],
              origin_ns: int | None = None) -> OverTime | None:
    """Coverage and anomalies per window: the soak's windows (faults/soak.py) for a soak,
    and the same 5-minute windows for any run of at least two; None for a shorter run.
    Coverage hits come from the run's stored files (every hit, not only the first: the
    checker's classes run again on them); anomalies from the examples results.json keeps
    (at most 10 per check), placed by their time."""
    from checker.coverage import CLASSES
    from checker.coverage.facts import load_facts
    from faults.soak import SOAK, WINDOW_S, windows

    limit, profile = _limit_and_profile(run)
    if limit is None or (profile != SOAK and limit < 2 * WINDOW_S):
        return None
    origin = origin_ns or _history_origin(run_dir)
    if origin is None:
        return None
    bounds = windows(limit)
    slots = len(bounds) + 1  # the last: after the load phase

    def slot(time_ns: int) -> int:
        at = (time_ns - origin) / 1e9
        return next((k for k, (_, end) in enumerate(bounds) if at < end), len(bounds))

    facts = load_facts(run_dir)
    faults = [0] * slots
    for op in facts.faults:
        if op.phase == "start":
            faults[slot(op.time_ns)] += 1
    classes = [c for c in CLASSES if c.scope == "run"]
    hits: list[dict[str, int]] = [{} for _ in range(slots)]
    for cls in classes:
        for hit in cls.detect(facts):
            counts = hits[slot(hit.time_ns)]
            counts[cls.name] = counts.get(cls.name, 0) + 1
    checks = (results or {}).get("checks")
    checks = checks if isinstance(checks, Mapping) else {}
    placed: list[dict[str, int]] = [{} for _ in range(slots)]
    examples: dict[str, int] = {}
    for name, check in checks.items():
        found = check.get("examples") if isinstance(check, Mapping) else None
        for example in found if isinstance(found, list) else []:
            examples[str(name)] = examples.get(str(name), 0) + 1
            t = example_time_ns(example)
            if t is not None:
                counts = placed[slot(t)]
                counts[str(name)] = counts.get(str(name), 0) + 1
    counts_raw = (results or {}).get("anomaly_counts")
    counts = {str(k): int(v) for k, v in counts_raw.items() if _whole(v)} if isinstance(
        counts_raw, Mapping) else {}
    spans: list[tuple[float, float | None]] = [*bounds, (limit, None)]
    found_windows = [TimeWindow(s, e, faults[k], hits[k], placed[k])
                     for k, (s, e) in enumerate(spans)]
    if not (faults[-1] or hits[-1] or placed[-1]):
        found_windows.pop()  # nothing after the load phase: no row for it
    return OverTime(WINDOW_S, found_windows, [c.name for c in classes], counts, examples)


def over_time_of(run_dir: Path) -> OverTime | None:
    """over_time from the run folder's own results.json and run.json."""
    run_dir = Path(run_dir)
    return over_time(run_dir, _read(run_dir / "results.json"), _read(run_dir / "run.json"))
