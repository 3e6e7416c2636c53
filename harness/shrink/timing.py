"""The timing half of a shrink: pull triggers earlier, shorten heals and the load phase.

Pure: a `Variant` (the plan's steps and the run's time limit) in, smaller variants out,
biggest cut first (as ddmin tries big chunks first). Every proposal lowers a number to
its floor or by at least `MIN_CUT_S`, so a greedy descent over them ends.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from faults.model import Step

MIN_TIME_LIMIT_S = 10.0  # what `kchaos run` accepts (harness/config/run.py)
MIN_HEAL_S = 0.5
MIN_CUT_S = 0.5  # smaller changes are noise next to a run's own jitter


@dataclass(frozen=True)
class Variant:
    """What a candidate changes of the original run: which steps, when, how long the load
    phase lasts, and which of the knobs drawn from the seed (faults/knobs.py) still have
    their drawn value (`knobs`, name and value; a drawn knob left out runs at its default).
    Everything else is the original run's config, unchanged."""

    steps: tuple[Step, ...]
    time_limit_s: float
    knobs: tuple[tuple[str, Any], ...] = ()

    def key(self) -> str:
        """Identity for memoising verdicts: the steps as they would be written, the limit,
        the knobs still drawn."""
        return repr((tuple(s.to_json().items() for s in self.steps), self.time_limit_s,
                     self.knobs))


@dataclass(frozen=True)
class Proposal:
    label: str  # what changed, for the log and the report
    variant: Variant


def _lower(current: float, floor: float) -> list[float]:
    """Candidate values below `current`: the floor first (any cut to it), then halfway to
    it if that cuts at least MIN_CUT_S."""
    values = [floor] if floor < current else []
    halfway = round((current + floor) / 2, 1)
    if halfway <= current - MIN_CUT_S and halfway != floor:
        values.append(halfway)
    return values


def _with_step(variant: Variant, index: int, step: Step) -> Variant:
    steps = list(variant.steps)
    steps[index] = step
    return replace(variant, steps=tuple(steps))


def _time_limit(v: Variant) -> list[Proposal]:
    return [Proposal(f"time limit {v.time_limit_s:g}s -> {t:g}s", replace(v, time_limit_s=t))
            for t in _lower(v.time_limit_s, MIN_TIME_LIMIT_S)]


def _all_earlier(v: Variant) -> list[Proposal]:
    """Every trigger at half its time: keeps the steps' order, moves the whole story."""
    if not any(s.trigger.at_s >= 2 * MIN_CUT_S for s in v.steps):
        return []
    steps = tuple(replace(s, trigger=replace(s.trigger, at_s=round(s.trigger.at_s / 2, 1)))
                  for s in v.steps)
    return [Proposal("every trigger at half its time", replace(v, steps=steps))]


def _step_earlier(v: Variant) -> list[Proposal]:
    out = []
    for i, s in enumerate(v.steps):
        for at in _lower(s.trigger.at_s, 0.0):
            step = replace(s, trigger=replace(s.trigger, at_s=at))
            out.append(Proposal(f"step {s.id} ({s.fault} {s.target}) at {s.trigger.at_s:g}s"
                                f" -> {at:g}s", _with_step(v, i, step)))
    return out


def _step_shorter(v: Variant) -> list[Proposal]:
    out = []
    for i, s in enumerate(v.steps):
        if s.heal_after_s is None:
            continue
        for heal in _lower(s.heal_after_s, MIN_HEAL_S):
            out.append(Proposal(f"step {s.id} ({s.fault} {s.target}) heals after "
                                f"{s.heal_after_s:g}s -> {heal:g}s",
                                _with_step(v, i, replace(s, heal_after_s=heal))))
    return out


# The order proposals are tried in: a shorter load phase first (it makes every later
# rerun cheaper), then the whole plan earlier, then step by step.
PASSES: tuple[Callable[[Variant], list[Proposal]], ...] = (
    _time_limit, _all_earlier, _step_earlier, _step_shorter,
)


def proposals(variant: Variant) -> list[Proposal]:
    return [p for make in PASSES for p in make(variant)]


def shrink_timing(start: Variant, reproduces: Callable[[Proposal], bool]) -> Variant:
    """Greedy descent: adopt the first proposal that still reproduces and start over from
    it; stop when none does. `start` is assumed to reproduce."""
    current = start
    while True:
        for proposal in proposals(current):
            if reproduces(proposal):
                current = proposal.variant
                break
        else:
            return current
