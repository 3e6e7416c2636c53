"""Did a set of runs (a nightly) meet the project's expectations?

- every fixed-worker run (no bug switch) is valid: anything else (anomalies, unknown, a
  harness failure, a run that never produced a folder) is a false alarm or a broken harness;
- every bug switch set is detected (verdict invalid) by at least one of its runs, unless
  every one of its runs was under a broad profile (`all`, `soak`): aimed at no switch,
  such runs measure how far the broad mix reaches, and a miss there is a figure, not a
  failure (`Detection.gated`).

The nightly's exit code, its JUnit file and its terminal summary all come from `judge`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from faults.plan import ALL_KINDS_PROFILES
from harness.report.summary import RunSummary


@dataclass(frozen=True)
class LostRun:
    """A run that was started but left no run folder (crashed early, or killed)."""

    name: str
    profile: str
    seed: str
    bugs: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class Detection:
    bugs: tuple[str, ...]
    runs: int
    caught: int
    # Of those, the runs under a broad profile (`all`, `soak`): a switch caught there is
    # caught by faults nobody aimed at it, the measure of what the broad mix can find.
    broad_runs: int = 0
    broad_caught: int = 0

    @property
    def name(self) -> str:
        return ",".join(self.bugs)

    @property
    def detected(self) -> bool:
        return self.caught > 0

    @property
    def gated(self) -> bool:
        """Some run aimed at it (not only the broad profiles): the nightly must catch it."""
        return self.broad_runs < self.runs


def bug_key(bugs: Sequence[str]) -> tuple[str, ...]:
    return tuple(sorted(set(bugs)))


@dataclass(frozen=True)
class Judgement:
    bad_fixed: list[RunSummary] = field(default_factory=list)
    lost_fixed: list[LostRun] = field(default_factory=list)
    detections: list[Detection] = field(default_factory=list)

    @property
    def undetected(self) -> list[Detection]:
        return [d for d in self.detections if d.gated and not d.detected]

    @property
    def ok(self) -> bool:
        return not (self.bad_fixed or self.lost_fixed or self.undetected)

    def reasons(self) -> list[str]:
        """One line per broken expectation, for the terminal and the logs."""
        lines = [
            f"fixed worker {s.outcome}: {s.run_id} ({s.profile}, seed {s.seed})"
            f"{': ' + s.anomalies_text if s.anomaly_counts else ''}"
            for s in self.bad_fixed
        ]
        lines += [f"fixed worker run left no folder: {r.name}: {r.reason}" for r in self.lost_fixed]
        lines += [
            f"bug {d.name} went undetected in all {d.runs} run(s)" for d in self.undetected
        ]
        return lines


def judge(runs: Sequence[RunSummary], lost: Sequence[LostRun] = ()) -> Judgement:
    bad_fixed = [s for s in runs if s.fixed_worker and not s.expectation_met]
    lost_fixed = [r for r in lost if not r.bugs]
    groups: dict[tuple[str, ...], list[tuple[bool, bool]]] = {}  # (caught, broad) per run
    for s in runs:
        if s.bugs:
            groups.setdefault(bug_key(s.bugs), []).append((s.detected, is_broad(s.profile)))
    for r in lost:
        if r.bugs:
            groups.setdefault(bug_key(r.bugs), []).append((False, is_broad(r.profile)))
    detections = [
        Detection(k, len(v), sum(c for c, _ in v), sum(b for _, b in v),
                  sum(c and b for c, b in v))
        for k, v in sorted(groups.items())
    ]
    return Judgement(bad_fixed, lost_fixed, detections)


def is_broad(profile: str) -> bool:
    return profile in ALL_KINDS_PROFILES
