"""The shrink's search: ddmin over the steps, then each knob drawn from the seed back at
its default (faults/knobs.py), then the timing descent, each candidate rerun up to K
times and kept when the same anomaly class came back in at least M.

Pure given its two edges: `runner` (one run of a variant; the real one starts Kafka and
pods, tests give a fake) and `clock`. Every candidate, kept or not, is logged as plain
data. The budget is checked before each rerun; when it is spent, the smallest variant
that reproduced so far is the answer.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from harness.shrink.ddmin import ddmin
from harness.shrink.timing import Proposal, Variant, shrink_timing


@dataclass(frozen=True)
class RunResult:
    """What one rerun of a candidate showed."""

    run_dir: str
    anomalies: tuple[str, ...]  # anomaly classes with a count > 0
    exit_code: int
    seconds: float
    error: str | None = None  # the run itself failed (harness error): no hit
    # How a replay's plan fell short of the run it replays (harness/bisect/faithful.py):
    # a miss that never reached the moments says nothing of the release.
    shortfalls: tuple[str, ...] = ()


@dataclass
class Candidate:
    number: int
    phase: str  # baseline, steps, knobs, timing
    label: str
    variant: Variant
    runs: list[RunResult] = field(default_factory=list)
    hits: int = 0
    reproduced: bool | None = None  # None: the budget ran out before it was decided

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "phase": self.phase,
            "label": self.label,
            "step_ids": [s.id for s in self.variant.steps],
            "steps": [s.to_json() for s in self.variant.steps],
            "time_limit_s": self.variant.time_limit_s,
            "knobs": dict(self.variant.knobs),
            "hits": self.hits,
            "reruns": len(self.runs),
            "reproduced": self.reproduced,
            "runs": [r.__dict__ for r in self.runs],
        }


class OutOfBudget(Exception):
    """The time budget is spent: stop searching, keep the best so far."""


Runner = Callable[[Variant], RunResult]
Listener = Callable[["Candidate"], None]


def is_hit(result: RunResult, classes: Sequence[str]) -> bool:
    return result.error is None and bool(set(result.anomalies) & set(classes))


@dataclass
class Search:
    runner: Runner
    classes: tuple[str, ...]  # the anomaly classes a rerun must show one of
    times: int  # K
    min_hits: int  # M
    budget_s: float
    clock: Callable[[], float] = time.monotonic
    on_candidate: Listener = lambda c: None  # before its reruns (progress display)
    on_result: Listener = lambda c: None  # after them
    # Each drawn knob's value when nothing is drawn: the knob phase tries it instead.
    defaults: Mapping[str, Any] = field(default_factory=dict)
    # Whether a variant's config is one a run accepts (a knob at its default can contradict
    # another still drawn: Kafka Streams refuses a transaction timeout below the commit
    # interval); one that is not is never run.
    admissible: Callable[[Variant], bool] = lambda v: True
    candidates: list[Candidate] = field(default_factory=list)
    best: Variant | None = None
    stopped_by_budget: bool = False
    _verdicts: dict[str, bool] = field(default_factory=dict)
    _run_seconds: list[float] = field(default_factory=list)  # reruns made here
    _started: float | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.min_hits <= self.times:
            raise ValueError(f"need 1 <= M <= K, got M={self.min_hits} K={self.times}")

    @property
    def reruns(self) -> int:
        """Runs this search made (the original run, counted in the baseline, is not one)."""
        return len(self._run_seconds)

    def elapsed_s(self) -> float:
        return 0.0 if self._started is None else self.clock() - self._started

    def _mean_run_s(self) -> float:
        seconds = self._run_seconds
        return sum(seconds) / len(seconds) if seconds else 0.0

    def _check_budget(self) -> None:
        """A rerun starts only if one more (as long as the average so far) fits."""
        if self.elapsed_s() + self._mean_run_s() > self.budget_s:
            self.stopped_by_budget = True
            raise OutOfBudget

    def evaluate(self, phase: str, label: str, variant: Variant,
                 seen: tuple[RunResult, ...] = ()) -> bool:
        """Rerun `variant` until M hits (reproduces) or M is out of reach (does not);
        `seen`: runs of it already made (the original run, for the baseline)."""
        known = self._verdicts.get(variant.key())
        if known is not None:
            return known
        candidate = Candidate(len(self.candidates), phase, label, variant)
        self.candidates.append(candidate)
        self.on_candidate(candidate)
        pending = list(seen)
        while candidate.reproduced is None:
            if pending:
                result = pending.pop(0)
            else:
                self._check_budget()
                result = self.runner(variant)
                self._run_seconds.append(result.seconds)
            candidate.runs.append(result)
            candidate.hits += is_hit(result, self.classes)
            misses = len(candidate.runs) - candidate.hits
            if candidate.hits >= self.min_hits:
                candidate.reproduced = True
            elif misses > self.times - self.min_hits:
                candidate.reproduced = False
        self._verdicts[variant.key()] = candidate.reproduced
        if candidate.reproduced and (self.best is None or self._smaller(variant, self.best)):
            self.best = variant
        self.on_result(candidate)
        return candidate.reproduced

    def shrink(self, original: Variant, original_run: RunResult | None = None) -> Variant | None:
        """The smallest variant that reproduced, or None if the original did not (M of K)
        or the budget ran out before it was decided. `original_run`, the failing run
        itself, counts as the baseline's first run."""
        self._started = self.clock()
        seen = () if original_run is None else (original_run,)
        try:
            if not self.evaluate("baseline", "the original plan", original, seen):
                return None
            by_id = {s.id: s for s in original.steps}

            def steps_reproduce(ids: list[int]) -> bool:
                variant = replace(original, steps=tuple(by_id[i] for i in ids))
                return self.evaluate("steps", f"{len(ids)} of {len(by_id)} steps: "
                                     f"{ids}", variant)

            kept = ddmin([s.id for s in original.steps], steps_reproduce)
            fewer = self.shrink_knobs(replace(original, steps=tuple(by_id[i] for i in kept)))

            def timing_reproduces(p: Proposal) -> bool:
                return self.evaluate("timing", p.label, p.variant)

            shrink_timing(fewer, timing_reproduces)
        except OutOfBudget:
            pass
        return self.best

    def shrink_knobs(self, start: Variant) -> Variant:
        """The knob phase: each knob drawn from the seed, in turn, at its default instead;
        kept there when the failure still comes back (the shrunk run needs fewer unusual
        settings to fail). A knob drawn at its default is one already."""
        current = start
        for name, value in start.knobs:
            default = self.defaults.get(name, value)
            if default == value:
                continue
            candidate = replace(current, knobs=tuple(k for k in current.knobs if k[0] != name))
            if not self.admissible(candidate):
                continue
            if self.evaluate("knobs", f"{name} {value} -> {default} (its default)", candidate):
                current = candidate
        return current

    def _unusual(self, v: Variant) -> int:
        """The knobs of `v` away from their defaults."""
        return sum(1 for name, value in v.knobs if self.defaults.get(name, value) != value)

    def _smaller(self, a: Variant, b: Variant) -> bool:
        """Fewer steps first; then fewer knobs away from their defaults; then a shorter
        load phase; then earlier, shorter steps."""
        def size(v: Variant) -> tuple[int, int, float, float]:
            return (len(v.steps), self._unusual(v), v.time_limit_s,
                    sum(s.trigger.at_s + (s.heal_after_s or 0.0) for s in v.steps))

        return size(a) < size(b)
