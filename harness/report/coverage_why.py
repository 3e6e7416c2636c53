"""Why a run did not reach a coverage class, read from its settings and its plan: no fault
of the kind that makes the moment was planned, or one was planned and never applied, or
a setting rules the moment out (no standbys, no transactions, a session longer than any
pause, one task). When none of these holds, the moment simply did not come in the time the
run had: the faults were there and the timing missed it.

The nightly names each class that fewer than half of a broad profile's runs reached, with
these reasons tallied over the runs that missed it: what to change (a plan that orders its
kinds, a longer window, a draw bounded) follows from which reason dominates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from common.fault_traits import BEFORE_PLANS_CARRIED_TRAITS, PlanTraits, Trait
from common.guarantees import AT_LEAST_ONCE, EXACTLY_ONCE_V2

TIMING = "its moment did not come in the run (the faults were there)"
APPLIED = ("applied", "healed")


@dataclass(frozen=True)
class RunShape:
    """What the reasons read: the run's settings, its plan's steps as stored and what their
    kinds do (plan.json's traits: a step is asked for by what it does, not its kind)."""

    config: Mapping[str, Any]
    steps: Sequence[Mapping[str, Any]]
    traits: PlanTraits = BEFORE_PLANS_CARRIED_TRAITS

    def planned(self, *traits: Trait) -> list[Mapping[str, Any]]:
        """The steps of the kinds with any of `traits`."""
        kinds = self.traits.kinds_with(*traits)
        return [s for s in self.steps if s.get("fault") in kinds]

    def applied(self, *traits: Trait) -> list[Mapping[str, Any]]:
        return [s for s in self.planned(*traits) if s.get("status") in APPLIED]

    def setting(self, name: str, default: Any) -> Any:
        value = self.config.get(name)
        return default if value is None else value

    @property
    def at_least_once(self) -> bool:
        return self.setting("guarantee", EXACTLY_ONCE_V2) == AT_LEAST_ONCE


@dataclass(frozen=True)
class Needs:
    """A reason when no step of a kind with any of `traits` was planned, or none was
    applied. Its traits are read too: the nightly's seed choice predicts from a drawn plan
    which classes its faults can reach (harness/nightly/predict.py)."""

    traits: tuple[Trait, ...]

    def __call__(self, run: RunShape) -> str | None:
        does = " or ".join(t.phrase for t in self.traits)
        if not run.planned(*self.traits):
            return f"no fault that {does} in the plan"
        if not run.applied(*self.traits):
            return f"a fault that {does} was planned but never applied (the run ended " \
                   "first, or its condition never held)"
        return None


def _needs(*traits: Trait) -> Needs:
    return Needs(traits)


def _pause_past_session(run: RunShape) -> str | None:
    """a pause longer than the session timeout"""
    session_s = float(run.setting("session_timeout_ms", 10_000)) / 1000
    pauses = [float(s.get("healed_at_s") or 0) - float(s.get("applied_at_s") or 0)
              for s in run.applied(Trait.FREEZES)]
    longest = max(pauses, default=0.0)
    if longest <= session_s:
        return f"session {session_s:g} s: no pause outlasted it (the longest {longest:.0f} s)"
    return None


def _transactions(run: RunShape) -> str | None:
    """exactly-once (a transaction to be inside)"""
    return "at-least-once: no transactions" if run.at_least_once else None


def _standbys(run: RunShape) -> str | None:
    """standbys above 0"""
    return "no standbys (standbys 0)" if int(run.setting("standbys", 0)) == 0 else None


def _tasks_to_move(run: RunShape) -> str | None:
    """at least as many partitions as pods (each pod holds a task to give up)"""
    partitions, pods = int(run.setting("partitions", 4)), int(run.setting("pods", 2))
    if partitions < pods:
        return f"{partitions} partition(s) for {pods} pods: a pod holds no task to give up"
    return None


def _moves(keep_volume: bool) -> Callable[[RunShape], str | None]:
    which = "with its volume" if keep_volume else "without its volume"

    def reason(run: RunShape) -> str | None:
        moves = [s for s in run.applied(Trait.MOVES)
                 if bool((s.get("params") or {}).get("keep_volume", True)) == keep_volume]
        if not moves:
            return f"no move {which} applied"
        return None

    reason.__doc__ = f"a move {which}"  # what the class keys on (harness/nightly/predict.py)
    return reason


# Checked in order; the first reason that holds is the run's. The traits are those the
# class's detector asks for (checker/coverage/classes.py, crashes.py). A reason's
# docstring says what it asks for (the seed choice's table, harness/nightly/predict.py).
REASONS: dict[str, tuple[Callable[[RunShape], str | None], ...]] = {
    "zombie": (_needs(Trait.FREEZES), _pause_past_session),
    "task-returns": (_tasks_to_move, _needs(Trait.ADDS_POD)),
    "restored-then-killed": (_needs(Trait.CRASHES),),
    "crash-in-txn": (_transactions, _needs(Trait.CRASHES)),
    "crash-after-commit": (_needs(Trait.CRASH_AT_OP),),
    "flush-then-abort": (_transactions, _needs(Trait.CRASHES)),
    "standby-promoted": (_standbys, _needs(Trait.CRASHES, Trait.MOVES)),
    "move-full-restore": (_needs(Trait.MOVES), _moves(keep_volume=False)),
    "move-checkpoint-reuse": (_needs(Trait.MOVES), _moves(keep_volume=True)),
    "restart-after-global-update": (_needs(Trait.RESTARTS),),
    "rebalance-during-checkpoint": (_needs(Trait.DELAYS_CHECKPOINT),),
    "power-loss-unsynced": (_needs(Trait.DROPS_UNSYNCED),),
    "cut-off-in-commit-or-rebalance": (_needs(Trait.CUTS_OFF),),
    "clock-jump-in-txn-or-session": (_needs(Trait.STEPS_CLOCK),),
}


def why_missed(name: str, run: RunShape) -> str:
    """Why `run` did not reach class `name`: the first structural reason, else timing."""
    for reason in REASONS.get(name, ()):
        said = reason(run)
        if said is not None:
            return said
    return TIMING
