"""Executes a plan: waits for each step's trigger, applies it, heals it when due, and
records every action as a history op (type `info`, like Jepsen's nemesis).

The schedule is `tick()`, one round over the clock it was given; a run's thread calls it
every POLL_S on the real clock, a test calls it on a clock it moves by hand."""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from faults.context import FaultContext
from faults.kinds import FAULT_KINDS
from faults.model import Plan, Step, Trigger
from faults.observe import TraceWatcher

# record(process, type, f, value): appends one op to the run's history (its result unused).
Record = Callable[[str, str, str, dict[str, Any]], object]
POLL_S = 0.1


@dataclass
class StepOutcome:
    """What happened to one step: the part of plan.json that only a run can fill in."""

    step: Step
    status: str = "pending"  # pending, applied, healed, skipped, failed
    condition_met: bool | None = None
    applied_at_s: float | None = None
    healed_at_s: float | None = None
    details: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    heal_condition_met: bool | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            **self.step.to_json(),
            "status": self.status,
            "condition_met": self.condition_met,
            "applied_at_s": self.applied_at_s,
            "healed_at_s": self.healed_at_s,
            "details": self.details,
            "error": self.error,
            **({"heal_condition_met": self.heal_condition_met}
               if self.step.heal_when is not None else {}),
        }


class Nemesis:
    def __init__(
        self, plan: Plan, ctx: FaultContext, watcher: TraceWatcher, record: Record,
        monotonic: Callable[[], float] = time.monotonic,
        wall_ns: Callable[[], int] = time.time_ns,
    ) -> None:
        self.plan = plan
        self.ctx = ctx
        self.watcher = watcher
        self.record = record
        self.outcomes = [StepOutcome(step) for step in sorted(plan.steps, key=_order)]
        self._monotonic = monotonic
        self._wall_ns = wall_ns  # trace events carry wall-clock ns: conditions count from it
        self._pending: list[StepOutcome] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._start_monotonic = 0.0
        self._start_ns = 0

    # -- control from the run -------------------------------------------------------------

    def start(self) -> None:
        self.begin()
        self._thread = threading.Thread(target=self._run, name="nemesis", daemon=True)
        self._thread.start()

    def begin(self) -> None:
        """Time zero of the plan; `start` runs `tick` on a thread after it."""
        self._start_monotonic = self._monotonic()
        self._start_ns = self._wall_ns()
        self._pending = list(self.outcomes)

    def stop_and_heal(self) -> None:
        """End of the load phase: no new faults; heal every fault still in force."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=300)
        for outcome in self.outcomes:
            if outcome.status == "applied":
                self._heal(outcome)
            elif outcome.status == "pending":
                outcome.status = "skipped"

    def stop_without_heal(self) -> None:
        """The run is aborted: no new faults, and none healed (a heal would restart killed
        pods and resume paused ones only for the teardown to stop them)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        for outcome in self.outcomes:
            if outcome.status == "pending":
                outcome.status = "skipped"

    def elapsed(self) -> float:
        return self._monotonic() - self._start_monotonic

    @property
    def applied(self) -> int:
        return sum(1 for o in self.outcomes if o.applied_at_s is not None)

    @property
    def failed(self) -> int:
        return sum(1 for o in self.outcomes if o.status == "failed")

    # -- the loop ------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set() and self.tick():
            self._stop.wait(POLL_S)

    def tick(self) -> bool:
        """Heal what is due, apply the steps whose triggers fire (in an ordered plan, a
        step waits for the one before it). False when nothing is left to do."""
        self._heal_what_is_due()
        if self.plan.ordered:
            while self._pending and not self._stop.is_set() and self._triggered(self._pending[0]):
                self._apply(self._pending.pop(0))
                self._heal_what_is_due()
        else:
            for outcome in list(self._pending):
                if self._stop.is_set():
                    break
                if self._triggered(outcome):
                    self._pending.remove(outcome)
                    self._apply(outcome)
                    self._heal_what_is_due()
        return bool(self._pending or self._due_heals(any_time=True))

    def _heal_what_is_due(self) -> None:
        """Heals come before the next step's start: an apply that took long (a broker's
        clean stop on a loaded machine) leaves later steps due at once, and applying them
        in a burst would stack faults the plan kept apart (three brokers down at once, a
        quorum lost, a broker that cannot start again)."""
        for outcome in self._due_heals(any_time=False):
            self._heal(outcome)

    def _triggered(self, outcome: StepOutcome) -> bool:
        trigger = outcome.step.trigger
        met = self._fires(trigger, outcome.step.target, 0.0, self._start_ns)
        if met is None:
            return False
        if trigger.condition is not None:
            outcome.condition_met = met
        return True

    def _fires(self, trigger: Trigger, target: str, zero_s: float, zero_ns: int
               ) -> bool | None:
        """None: not yet; else whether the condition held (False: fired by its timeout).
        `zero_s` (elapsed) and `zero_ns` (wall clock) are the moment `at_s` counts from."""
        now = self.elapsed() - zero_s
        if now < trigger.at_s:
            return None
        if trigger.condition is None:
            return True
        since_ns = zero_ns + int(trigger.at_s * 1e9)
        try:
            met = self.watcher.holds(
                trigger.condition, trigger.pod or target, since_ns, trigger.count
            )
        except Exception:  # a pod not created yet, an unreadable trace: not met yet
            met = False
        if met or now >= trigger.at_s + trigger.timeout_s:
            return met
        return None

    def _due_heals(self, any_time: bool) -> list[StepOutcome]:
        return [
            o
            for o in self.outcomes
            if o.status == "applied"
            and o.applied_at_s is not None
            and (o.step.heal_after_s is not None or o.step.heal_when is not None)
            and (any_time or self._heal_due(o))
        ]

    def _heal_due(self, outcome: StepOutcome) -> bool:
        step, applied_at = outcome.step, outcome.applied_at_s or 0.0
        if step.heal_when is None:
            return self.elapsed() >= applied_at + (step.heal_after_s or 0.0)
        # A heal_when counts from the application, on the wall clock the traces carry.
        applied_ns = self._start_ns + int(applied_at * 1e9)
        met = self._fires(step.heal_when, step.target, applied_at, applied_ns)
        if met is None:
            return False
        if step.heal_when.condition is not None:
            outcome.heal_condition_met = met
        return True

    def _apply(self, outcome: StepOutcome) -> None:
        step = outcome.step
        kind = FAULT_KINDS[step.fault]
        outcome.applied_at_s = round(self.elapsed(), 3)
        try:
            outcome.details = kind.apply(self.ctx, step)
            outcome.status = "applied"
        except Exception as exc:
            outcome.status, outcome.error = "failed", _one_line(exc)
        self.record(
            "nemesis", "info", step.fault,
            {"target": step.target, "params": step.params, "phase": "start", "step": step.id,
             "details": outcome.details, "error": outcome.error},
        )
        if kind.instant and outcome.status == "applied":
            self._heal(outcome)

    def _heal(self, outcome: StepOutcome) -> None:
        step = outcome.step
        kind = FAULT_KINDS[step.fault]
        try:
            details = kind.heal(self.ctx, step)
            outcome.status = "healed"
        except Exception as exc:
            details, outcome.status, outcome.error = {}, "failed", _one_line(exc)
        outcome.healed_at_s = round(self.elapsed(), 3)
        self.record(
            "nemesis", "info", step.fault,
            {"target": step.target, "params": step.params, "phase": "end", "step": step.id,
             "details": details, "error": outcome.error},
        )


def _order(step: Step) -> tuple[float, int]:
    return (step.trigger.at_s, step.id)


def _one_line(exc: BaseException) -> str:
    where = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    place = f" at {where[0].filename.rsplit('/', 1)[-1]}:{where[0].lineno}" if where else ""
    return f"{type(exc).__name__}: {exc}{place}"
