"""Which coverage classes a drawn plan can reach, before it runs (issue 53: a nightly that
chases coverage). Pure: a plan and the run's resolved settings in, class names out.

A prediction says a class is possible, not that it will happen: the plan holds the faults
its moment needs, on pods, and the settings do not rule it out. Timing can still miss it
(a crash that comes between two transactions); the nightly then aims at it again, from
what the finished runs really reached (seed_choice.py).

What each class keys on is read from the classes' own definitions where they say it:

- a run class: the reasons the reports give for missing it (harness/report/coverage_why.py
  `REASONS`: the traits its detector asks for, the settings that rule it out), over the
  plan's steps as if each was applied at its trigger and healed after its time;
- a knob class proven by settings alone (checker/coverage/knobs.py): its own detector,
  run over the settings with no trace at all;
- the rest, whose detectors need a trace: `MOMENTS` below, one entry each.

`PRECONDITIONS` is that table, one entry per class of `checker.coverage.CLASSES`
(tests/nightly/test_predict.py holds the two to each other).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType
from typing import Any

from checker.coverage import CLASSES, ConditionClass
from checker.coverage.facts import Facts
from common.fault_traits import PlanTraits, Trait
from common.guarantees import AT_LEAST_ONCE, EXACTLY_ONCE_V2
from faults.model import Plan, Step
from harness.report.coverage_why import REASONS, Needs, RunShape

POD_PREFIX = "pod-"  # a step on a pod (faults.model.pod_name), not a broker
# Faults after which a task runs elsewhere than before: a restore, a directory left behind.
MOVES_TASKS = (Trait.RESTARTS, Trait.MOVES, Trait.ADDS_POD, Trait.CRASHES, Trait.FREEZES)


@dataclass(frozen=True)
class PlanShape:
    """A drawn plan and the run's resolved settings (RunConfig's fields by name), as the
    predictions read them."""

    config: Mapping[str, Any]
    steps: tuple[Step, ...]
    traits: PlanTraits

    @staticmethod
    def of(plan: Plan, config: Mapping[str, Any]) -> PlanShape:
        from faults.kinds import traits_of

        return PlanShape(MappingProxyType(dict(config)), plan.steps,
                         PlanTraits(traits_of({s.fault for s in plan.steps})))

    def setting(self, name: str, default: Any) -> Any:
        value = self.config.get(name)
        return default if value is None else value

    @property
    def time_limit_s(self) -> float:
        return float(self.setting("time_limit_s", 60.0))

    def pod_steps(self, *traits: Trait) -> list[Step]:
        """The steps on pods, of kinds with any of `traits`, that fire within the run (a
        trigger past the load's end never fires)."""
        kinds = self.traits.kinds_with(*traits)
        return [s for s in self.steps if s.fault in kinds and s.target.startswith(POD_PREFIX)
                and s.trigger.at_s < self.time_limit_s]

    def held_s(self, step: Step) -> float:
        """How long the step's fault stays in force: its heal time, or to the load's end."""
        end = self.time_limit_s
        if step.heal_after_s is not None:
            end = min(end, step.trigger.at_s + step.heal_after_s)
        return max(0.0, end - step.trigger.at_s)

    @cached_property
    def as_run(self) -> RunShape:
        """The plan as a run's stored steps: each on a pod applied at its trigger."""
        steps = [{"fault": s.fault, "target": s.target, "params": dict(s.params),
                  "status": "healed", "applied_at_s": s.trigger.at_s,
                  "healed_at_s": s.trigger.at_s + self.held_s(s)}
                 for s in self.pod_steps(*Trait)]
        return RunShape(self.config, steps, self.traits)


@dataclass(frozen=True)
class Precondition:
    """What a class needs of a plan and its settings (`keys_on`, in words), and whether a
    plan has it (`holds`)."""

    keys_on: str
    holds: Callable[[PlanShape], bool]


def _eos(shape: PlanShape) -> bool:
    return shape.setting("guarantee", EXACTLY_ONCE_V2) == EXACTLY_ONCE_V2


def _after_tasks_moved(shape: PlanShape) -> bool:
    """A crash after an earlier fault that moved tasks (the restore it kills comes then)."""
    first = min((s.trigger.at_s for s in shape.pod_steps(*MOVES_TASKS)), default=None)
    return first is not None and any(s.trigger.at_s > first
                                     for s in shape.pod_steps(Trait.CRASHES))


def _silenced_between_timeouts(shape: PlanShape) -> bool:
    low, high = sorted((float(shape.setting("session_timeout_ms", 10_000)),
                        float(shape.setting("transaction_timeout_ms", 10_000))))
    return _eos(shape) and any(low < 1000 * shape.held_s(s) < high
                               for s in shape.pod_steps(Trait.SILENCES))


def _restore_over_poll(shape: PlanShape) -> bool:
    """The input a task's changelog holds by the last fault that moves tasks (rate x time /
    partitions, an upper bound) exceeds one poll of the restore consumer."""
    last = max((s.trigger.at_s for s in shape.pod_steps(*MOVES_TASKS)), default=0.0)
    per_task = (float(shape.setting("rate", 100.0)) * last
                / max(1, int(shape.setting("partitions", 4))))
    return per_task > int(shape.setting("restore_max_poll_records", 1000))


def _cleaner_within_run(shape: PlanShape) -> bool:
    """A fault that leaves a task directory behind, then the cleaner's delay within the
    load that is left."""
    first = min((s.trigger.at_s for s in shape.pod_steps(*MOVES_TASKS)), default=None)
    delay_s = float(shape.setting("cleaner_delay_ms", 600_000)) / 1000
    return first is not None and first + delay_s < shape.time_limit_s


# The classes whose detectors need a trace and whose needs no report reason states.
MOMENTS: Mapping[str, Precondition] = MappingProxyType({
    "restored-then-killed": Precondition(
        "a fault that crashes a pod, after an earlier fault that moves tasks",
        _after_tasks_moved),
    "pause-between-timeouts": Precondition(
        "exactly-once, a pod paused or cut off between the session and the transaction "
        "timeout", _silenced_between_timeouts),
    "alos-standbys": Precondition(
        "at-least-once, standbys above 0",
        lambda s: not _eos(s) and int(s.setting("standbys", 0)) > 0),
    "poll-below-restore": Precondition(
        "a fault that moves tasks once a task's changelog (rate x time / partitions) "
        "outgrows restore_max_poll_records", _restore_over_poll),
    "cleaner-in-run": Precondition(
        "a fault that moves tasks, cleaner_delay_ms before the load ends", _cleaner_within_run),
    "checkpoint-read-then-cleaned": Precondition(
        "a fault that moves tasks (a checkpoint read at the task's next start), "
        "cleaner_delay_ms before the load ends", _cleaner_within_run),
    "exactly-once": Precondition(f"guarantee {EXACTLY_ONCE_V2}", _eos),
    "at-least-once": Precondition(f"guarantee {AT_LEAST_ONCE}", lambda s: not _eos(s)),
})


def _said(reason: Callable[[RunShape], str | None]) -> str:
    if isinstance(reason, Needs):
        return "a fault on a pod that " + " or ".join(t.phrase for t in reason.traits)
    said = reason.__doc__ or str(getattr(reason, "__name__", "?"))
    return said.strip().splitlines()[0]


def _no_reason(name: str, also: Precondition | None) -> Precondition:
    """No reason of the reports rules the class out (and `also` holds, if given)."""
    reasons = REASONS[name]

    def holds(shape: PlanShape) -> bool:
        run = shape.as_run
        return (all(r(run) is None for r in reasons)
                and (also is None or also.holds(shape)))

    said = [_said(r) for r in reasons] + ([also.keys_on] if also else [])
    return Precondition("; ".join(dict.fromkeys(said)), holds)


def _by_settings(cls: ConditionClass) -> Precondition:
    """The class's own detector over the settings alone (no trace, no fault)."""
    def holds(shape: PlanShape) -> bool:
        config = dict(shape.config)
        facts = Facts(events=[], faults=[], guarantee=str(config.get("guarantee") or ""),
                      session_timeout_ms=config.get("session_timeout_ms"), config=config)
        return bool(cls.detect(facts))

    return Precondition(f"its settings alone ({cls.title})", holds)


def _precondition(cls: ConditionClass) -> Precondition:
    if cls.name in REASONS:
        return _no_reason(cls.name, MOMENTS.get(cls.name))
    return MOMENTS.get(cls.name) or _by_settings(cls)


PRECONDITIONS: Mapping[str, Precondition] = MappingProxyType(
    {c.name: _precondition(c) for c in CLASSES})


def predict(shape: PlanShape) -> frozenset[str]:
    """The classes the plan can reach with these settings."""
    return frozenset(name for name, pre in PRECONDITIONS.items() if pre.holds(shape))


def predict_plan(plan: Plan, config: Mapping[str, Any]) -> frozenset[str]:
    return predict(PlanShape.of(plan, config))
