"""A nightly read back from its folder (`results/nightly-*/nightly.json` and the run
folders it names): its summary page (`nightly.html`), its README table (`nightly.md`), and
across nightlies the detection rate per bug switch that `results/index.html` shows. Its
project checks (`project_checks` in nightly.json, harness/nightly/project_checks.py) are
part of its verdict: one that failed fails the nightly.

Reads stored files only, so a nightly's page can be rendered again at any time
(`kchaos report results/nightly-...`), and a damaged nightly.json costs its own row only.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.config.options import given_settings, settings_argv
from harness.config.suts import DEFAULT_SUT, sut_kind
from harness.errors import UsageError
from harness.report.expect import Detection, Judgement, LostRun, is_broad, judge
from harness.report.run_files import RUN_MARKERS
from harness.report.summary import RunSummary, format_duration, parse_time, summarize_dir

NIGHTLY_JSON = "nightly.json"
NIGHTLY_PAGE = "nightly.html"
NIGHTLY_TABLE = "nightly.md"


@dataclass(frozen=True)
class NightlyRun:
    """One cell the nightly ran: what it asked for and, if a run folder exists, its summary
    with the exit code the nightly saw (-1: stopped by the nightly)."""

    profile: str
    seed: str
    bugs: tuple[str, ...]
    args: tuple[str, ...]
    exit_code: int | None
    duration_s: float
    note: str
    summary: RunSummary | None
    settings: tuple[tuple[str, str], ...] = ()
    # `--choose-seeds coverage`: the classes its seed was picked to aim at (None: the
    # matrix's seed); `aims` says it in words.
    aimed_at: tuple[str, ...] | None = None

    @property
    def aims(self) -> str:
        if self.aimed_at is None:
            return "-"
        return "aims at " + ", ".join(self.aimed_at) if self.aimed_at else "nothing lacking"

    @property
    def options(self) -> str:
        """What the cell gave its run besides profile, seed and bugs: settings, options."""
        return " ".join([f"{k}={v}" for k, v in self.settings] + list(self.args))

    @property
    def name(self) -> str:  # as the nightly's Cell.name
        extra = f" {self.options}" if self.options else ""
        return f"{self.profile} seed {self.seed} bugs {','.join(self.bugs) or '-'}{extra}"

    @property
    def sut(self) -> str:
        """As the run recorded it; for a run that left no folder, as its cell asked."""
        if self.summary:
            return self.summary.sut
        try:
            asked = given_settings([*settings_argv(self.settings), *self.args]).get("sut")
        except UsageError:  # options this kchaos no longer takes: it asked for no other
            asked = None
        return str(asked or DEFAULT_SUT)


PASSED, FAILED, TIMED_OUT, INTERRUPTED, NOT_STARTED = (
    "passed", "failed", "timed out", "interrupted", "not started")
CHECK_STATUSES = (PASSED, FAILED, TIMED_OUT, INTERRUPTED, NOT_STARTED)


@dataclass(frozen=True)
class CheckRecord:
    """A project check of a nightly, as nightly.json records it. `log` is relative to the
    nightly's folder; `exit_code` None when it was stopped or never started."""

    name: str
    command: tuple[str, ...]
    status: str  # CHECK_STATUSES
    exit_code: int | None = None
    duration_s: float = 0.0
    log: str = ""
    note: str = ""

    @property
    def failed(self) -> bool:
        """It ran and did not pass (an interruption or a check not started is no verdict)."""
        return self.status in (FAILED, TIMED_OUT)

    @property
    def outcome(self) -> str:
        code = "" if self.exit_code is None else f" (exit {self.exit_code})"
        return f"{self.status}{code}{': ' + self.note if self.note else ''}"

    def to_json(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "command": list(self.command)}

    @staticmethod
    def from_json(raw: Any) -> CheckRecord:
        """ValueError if `raw` is not one."""
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
            raise ValueError(f"not a project check: {str(raw)[:80]}")
        command, code, took = raw.get("command"), raw.get("exit_code"), raw.get("duration_s")
        if (raw.get("status") not in CHECK_STATUSES or not isinstance(command, list)
                or not all(isinstance(a, str) for a in command)
                or not (code is None or (isinstance(code, int) and not isinstance(code, bool)))
                or isinstance(took, bool) or not isinstance(took, int | float)):
            raise ValueError(f"not a project check: {str(raw)[:80]}")
        return CheckRecord(raw["name"], tuple(command), raw["status"], code, float(took),
                           str(raw.get("log") or ""), str(raw.get("note") or ""))


@dataclass(frozen=True)
class NightlyJudgement(Judgement):
    """`judge`'s verdict over the runs, and the project checks that failed."""

    failed_checks: list[CheckRecord] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return super().ok and not self.failed_checks

    def reasons(self) -> list[str]:
        return [*super().reasons(),
                *(f"project check {c.name} {c.outcome}" for c in self.failed_checks)]


def with_checks(verdict: Judgement, checks: Iterable[CheckRecord]) -> NightlyJudgement:
    return NightlyJudgement(verdict.bad_fixed, verdict.lost_fixed, verdict.detections,
                            [c for c in checks if c.failed])


def read_checks(doc: Mapping[str, Any]) -> list[CheckRecord]:
    """The project checks of a nightly.json (none before they existed); ValueError for a
    damaged entry."""
    raw = doc.get("project_checks") or []
    if not isinstance(raw, list):
        raise ValueError("project_checks is not a list")
    return [CheckRecord.from_json(c) for c in raw]


@dataclass(frozen=True)
class Nightly:
    log_dir: Path
    started_at: datetime | None
    budget_s: float | None
    runs: list[NightlyRun]
    not_started: list[str]
    interrupted: bool
    judgement: Judgement = field(default_factory=Judgement)
    stopped: list[NightlyRun] = field(default_factory=list)  # by the interruption, unjudged
    finished_at: datetime | None = None
    checks: list[CheckRecord] = field(default_factory=list)  # the project checks

    @property
    def wall_s(self) -> float:
        """Start to finish (runs overlap when the nightly ran several at once); a nightly.json
        from before `finished_at` was recorded ran one at a time: the sum of its runs."""
        if self.started_at and self.finished_at and self.started_at.tzinfo:
            return max(0.0, (self.finished_at - self.started_at).total_seconds())
        return sum(r.duration_s for r in self.runs)

    @property
    def runs_per_hour(self) -> float | None:
        return 3600 * len(self.runs) / self.wall_s if self.wall_s else None

    @property
    def false_positives(self) -> int:
        return len(self.judgement.bad_fixed) + len(self.judgement.lost_fixed)

    @property
    def fixed_runs(self) -> int:
        return sum(1 for r in self.runs if not r.bugs and sut_kind(r.sut).bug_switches)

    def seeds_caught(self, detection: Detection, broad: bool = False) -> list[str]:
        """Seeds of the runs that caught the switch (with `broad`: under `all` or `soak`)."""
        return sorted({r.seed for r in self.runs if r.bugs and tuple(sorted(set(r.bugs)))
                       == detection.bugs and r.summary and r.summary.detected
                       and (not broad or is_broad(r.profile))})

    @property
    def seeds_chosen(self) -> bool:
        """Whether the runs' seeds were chosen by coverage (`--choose-seeds coverage`)."""
        return any(r.aimed_at is not None for r in self.runs)

    @property
    def broad_detections(self) -> list[Detection]:
        """The switches this nightly ran under a broad profile."""
        return [d for d in self.judgement.detections if d.broad_runs]


def _is_run_dir(path: Path) -> bool:
    return path.is_dir() and any((path / m).exists() for m in RUN_MARKERS)


def _run(entry: Mapping[str, Any], log_dir: Path) -> NightlyRun:
    cell = entry.get("cell") or {}
    exit_code = entry.get("exit_code")
    exit_code = exit_code if isinstance(exit_code, int) else None
    summary = None
    raw_dir = str(entry.get("run_dir") or "")
    if raw_dir:
        run_dir = Path(raw_dir)
        # Paths were recorded relative to where the nightly ran: fall back to a sibling of
        # the nightly's folder, so a results folder that was moved still reads.
        if not _is_run_dir(run_dir):
            run_dir = log_dir.parent / run_dir.name
        if _is_run_dir(run_dir):
            summary = summarize_dir(run_dir)
            code = -1 if exit_code is None else exit_code
            if summary.exit_code != code:  # the nightly's view of how the run ended wins
                summary = dataclasses.replace(summary, exit_code=code)
    pick = entry.get("pick")
    aimed = pick.get("aimed_at") if isinstance(pick, dict) else None
    return NightlyRun(
        aimed_at=tuple(str(a) for a in aimed) if isinstance(aimed, list) else None,
        profile=str(cell.get("profile", "?")), seed=str(cell.get("seed", "?")),
        bugs=tuple(str(b) for b in cell.get("bugs") or ()),
        args=tuple(str(a) for a in cell.get("args") or ()),
        settings=tuple((str(k), str(v)) for k, v in cell.get("settings") or ()),
        exit_code=exit_code, duration_s=float(entry.get("duration_s") or 0.0),
        note=str(entry.get("note") or ""), summary=summary,
    )


def _lost(run: NightlyRun) -> LostRun:
    code = "stopped" if run.exit_code is None else f"exit {run.exit_code}"
    return LostRun(run.name, run.profile, run.seed, run.bugs, f"{code}: {run.note}")


def _started(log_dir: Path, doc: Mapping[str, Any]) -> datetime | None:
    given = parse_time(doc.get("started_at"))
    if given:
        return given
    try:  # nightly-YYYYmmddTHHMMSS, local time of the machine that ran it
        return datetime.strptime(log_dir.name.removeprefix("nightly-"), "%Y%m%dT%H%M%S")
    except ValueError:
        return None


def read_nightly(log_dir: Path) -> Nightly:
    """Raises OSError or ValueError when nightly.json is missing or not a nightly's."""
    doc = json.loads((log_dir / NIGHTLY_JSON).read_text())
    if not isinstance(doc, dict) or not isinstance(doc.get("runs"), list):
        raise ValueError(f"{log_dir / NIGHTLY_JSON} has no list of runs")
    runs = [_run(e, log_dir) for e in doc["runs"] if isinstance(e, dict)]
    # The runs an interruption (Ctrl-C, SIGTERM) stopped say nothing about the system.
    stopped = [r for r in runs if doc.get("interrupted") and "interrupted" in r.note
               and r.exit_code in (None, -1, 130, 143)]
    runs = [r for r in runs if r not in stopped]
    judged = [r.summary for r in runs if r.summary is not None]
    lost = [_lost(r) for r in runs if r.summary is None]
    not_started = [
        f"{c.get('profile')} seed {c.get('seed')} bugs {','.join(c.get('bugs') or []) or '-'}"
        for c in doc.get("not_started") or [] if isinstance(c, dict)
    ]
    budget = doc.get("budget_s")
    checks = read_checks(doc)
    return Nightly(
        log_dir=log_dir, started_at=_started(log_dir, doc),
        budget_s=float(budget) if isinstance(budget, int | float) else None,
        runs=runs, not_started=not_started, interrupted=bool(doc.get("interrupted")),
        judgement=with_checks(judge(judged, lost), checks), stopped=stopped,
        finished_at=parse_time(doc.get("finished_at")), checks=checks,
    )


def nightly_dirs(results_dir: Path) -> list[Path]:
    try:
        found = [p for p in results_dir.iterdir() if (p / NIGHTLY_JSON).is_file()]
    except OSError:
        return []
    return sorted(found, key=lambda p: p.name, reverse=True)


@dataclass(frozen=True)
class DetectionRate:
    """A bug switch across nightlies: runs that had it on, runs that caught it, nightlies."""

    name: str
    runs: int
    caught: int
    nightlies: int
    broad_runs: int = 0  # of the runs, those under `all` or `soak`, and their catches
    broad_caught: int = 0

    @property
    def rate(self) -> str:
        return _percent(self.caught, self.runs)

    @property
    def broad_rate(self) -> str:
        return _percent(self.broad_caught, self.broad_runs)


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def detection_rates(nightlies: Iterable[Nightly]) -> list[DetectionRate]:
    totals: dict[str, list[int]] = {}
    for n in nightlies:
        for d in n.judgement.detections:
            runs, caught, count, broad_runs, broad_caught = totals.get(d.name, [0] * 5)
            totals[d.name] = [runs + d.runs, caught + d.caught, count + 1,
                              broad_runs + d.broad_runs, broad_caught + d.broad_caught]
    return [DetectionRate(name, *t) for name, t in sorted(totals.items())]


def markdown_table(n: Nightly) -> str:
    """The README's table: per cell the verdict, per switch the runs that caught it, the
    fixed worker's false positives."""
    lines = [
        f"Nightly `{n.log_dir.name}`: {len(n.runs)} run(s) in {format_duration(n.wall_s)}"
        + (f" ({n.runs_per_hour:.1f} runs/hour)" if n.runs_per_hour else "")
        + (f"; interrupted, stopping {', '.join(f'`{r.name}`' for r in n.stopped)}"
           if n.stopped else "")
        + (f"; {len(n.not_started)} cell(s) not started"
           f" ({'interrupted' if n.interrupted else 'budget'})" if n.not_started else "")
        + f"; fixed-worker false positives: {n.false_positives} of {n.fixed_runs}.",
        "",
        "| switch | runs | caught | seeds caught | by `all` alone |",
        "|---|---:|---:|---|---|",
    ]
    lines += [f"| `{d.name}` | {d.runs} | {d.caught} | {', '.join(n.seeds_caught(d)) or '-'} "
              f"| {_broad_cell(n, d)} |" for d in n.judgement.detections]
    if n.broad_detections:
        caught = [d for d in n.broad_detections if d.broad_caught]
        lines += ["", f"Caught by the broad profile alone (`all`, `soak`): {len(caught)} of "
                  f"{len(n.broad_detections)} switches it ran with."]
    chosen = n.seeds_chosen
    if chosen:
        lines += ["", "Seeds chosen by coverage (`--choose-seeds coverage`): each run's seed "
                  "was picked at its launch to aim at the classes tonight's runs lacked."]
    lines += ["", "| profile | seed | bugs | options | verdict | anomalies | time |"
              + (" seed chosen |" if chosen else ""),
              "|---|---:|---|---|---|---|---:|" + ("---|" if chosen else "")]
    for r in n.runs:
        s = r.summary
        verdict = s.outcome if s else f"no run folder ({r.note or r.exit_code})"
        lines.append(
            f"| {r.profile} | {r.seed} | {','.join(r.bugs) or '-'} | {r.options or '-'}"
            f" | {verdict} | {s.anomalies_text if s else '-'} | {format_duration(r.duration_s)} |"
            + (f" {r.aims} |" if chosen else ""))
    if n.checks:
        lines += ["", "| project check | result | time | log |", "|---|---|---:|---|"]
        lines += [f"| {c.name} | {c.outcome} | {format_duration(c.duration_s)} | "
                  f"{c.log or '-'} |" for c in n.checks]
    return "\n".join(lines) + "\n"


def _broad_cell(n: Nightly, d: Detection) -> str:
    if not d.broad_runs:
        return "-"
    seeds = ", ".join(n.seeds_caught(d, broad=True))
    return f"{d.broad_caught} of {d.broad_runs}" + (f" (seeds {seeds})" if seeds else "")


def rendered_at() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
