"""The nemesis schedule as a state machine on a clock moved by hand: Hypothesis draws a
plan, then advances time and flips trigger conditions in any order, and after every tick
the schedule must hold its promises (no step early, none late, plan order, heals when due,
one history op per start and per end). No thread, no sleep: the test cannot be timing-lucky."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from fake_clock import FakeClock
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from test_nemesis import RecordingPlatform

from faults.context import FaultContext
from faults.kinds import FAULT_KINDS
from faults.model import Plan, Step, Trigger
from faults.nemesis import Nemesis, StepOutcome

# Timestamps are rounded to the millisecond in outcomes: compare with that slack.
EPS = 0.002
# Fault kinds the recording platform can take; kill-broker fails (no brokers): a failed step.
KINDS = ["kill", "stop", "pause", "move", "delay-checkpoint", "kill-broker"]


class Conditions:
    """Stands in for the TraceWatcher: every condition holds when `met` says so."""

    def __init__(self) -> None:
        self.met = False

    def holds(self, condition: str, target: str, since_ns: int, count: int) -> bool:
        return self.met


@st.composite
def steps(draw: st.DrawFn) -> tuple[Step, ...]:
    drawn = []
    for i in range(draw(st.integers(1, 6))):
        fault = draw(st.sampled_from(KINDS))
        target = "broker-1" if fault == "kill-broker" else draw(st.sampled_from(["pod-0", "pod-1"]))
        condition = draw(st.none() | st.just("commits"))
        trigger = Trigger(draw(st.floats(0, 20)), condition, timeout_s=draw(st.floats(0.5, 10)))
        params: dict[str, Any] = {"ms": 100} if fault == "delay-checkpoint" else {}
        if fault == "move":
            params = {"keep_volume": draw(st.booleans())}
        heal = None if FAULT_KINDS[fault].instant else draw(st.none() | st.floats(0.1, 10))
        heal_when = None
        if heal is not None and draw(st.booleans()):  # a heal that waits for a condition
            heal_when = Trigger(heal, "commits", timeout_s=draw(st.floats(0.5, 10)))
            heal = None
        drawn.append(Step(i, fault, target, trigger, params, heal_after_s=heal,
                          heal_when=heal_when))
    return tuple(drawn)


class NemesisSchedule(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="kchaos-nemesis-"))
        self.clock = FakeClock()
        self.conditions = Conditions()
        self.ops: list[tuple[str, str, str, dict[str, Any]]] = []
        self.finished = False

    @initialize(plan_steps=steps(), ordered=st.booleans())
    def begin(self, plan_steps: tuple[Step, ...], ordered: bool) -> None:
        platform = RecordingPlatform(self.root, ["pod-0", "pod-1"])
        self.ordered = ordered
        self.nemesis = Nemesis(
            Plan(1, "schedule", plan_steps, ordered=ordered),
            FaultContext(platform=platform, application_id="app"),
            self.conditions,  # type: ignore[arg-type]  # the watcher's one method used here
            lambda *op: self.ops.append(op),
            monotonic=self.clock.monotonic, wall_ns=self.clock.wall_ns,
        )
        self.nemesis.begin()
        self.nemesis.tick()

    @rule(seconds=st.floats(0, 4))  # also after the end: then nothing may happen
    def advance(self, seconds: float) -> None:
        self.clock.now += seconds
        self.nemesis.tick()

    @rule(met=st.booleans())
    def condition(self, met: bool) -> None:
        self.conditions.met = met
        self.nemesis.tick()

    @precondition(lambda self: not self.finished)
    @rule()
    def end_of_load(self) -> None:
        self.nemesis.stop_and_heal()
        self.finished = True
        self.ops_at_end = len(self.ops)
        assert all(o.status in ("healed", "skipped", "failed") for o in self.outcomes)

    @invariant()
    def nothing_happens_after_the_end(self) -> None:
        if self.finished:
            assert len(self.ops) == self.ops_at_end

    @property
    def outcomes(self) -> list[StepOutcome]:
        return self.nemesis.outcomes

    @invariant()
    def steps_start_in_plan_order(self) -> None:
        if not self.ordered:
            return
        started = [o.status != "pending" for o in self.outcomes]
        assert started == sorted(started, reverse=True), "a step started before an earlier one"

    @invariant()
    def no_step_starts_early(self) -> None:
        for o in self.outcomes:
            if o.applied_at_s is None:
                continue
            trigger = o.step.trigger
            assert o.applied_at_s >= trigger.at_s - EPS
            if trigger.condition is None:
                assert o.condition_met is None
            elif o.condition_met is False:  # fired by its timeout, not by the condition
                assert o.applied_at_s >= trigger.at_s + trigger.timeout_s - EPS

    @invariant()
    def no_step_starts_late(self) -> None:
        if self.finished:
            return
        now = self.clock.now
        pending = [o for o in self.outcomes if o.status == "pending"]
        # Ordered: the next one waits for something that has not happened yet. Unordered:
        # every pending step does, whatever the steps before it wait for.
        for o in pending[:1] if self.ordered else pending:
            trigger = o.step.trigger
            due = trigger.at_s if trigger.condition is None else trigger.at_s + trigger.timeout_s
            fires_now = now >= trigger.at_s and (
                trigger.condition is None or self.conditions.met
            )
            assert not fires_now and now < due + EPS

    @invariant()
    def heals_come_when_due(self) -> None:
        for o in self.outcomes:
            heal_after = o.step.heal_after_s
            if o.applied_at_s is None:
                continue
            if FAULT_KINDS[o.step.fault].instant and o.status == "healed":
                assert o.healed_at_s == o.applied_at_s
            elif heal_after is not None and not self.finished:
                due = o.applied_at_s + heal_after
                if o.status == "applied":
                    assert self.clock.now < due + EPS, "a heal is late"
                if o.status == "healed":
                    assert o.healed_at_s is not None and o.healed_at_s >= due - EPS

    @invariant()
    def conditional_heals_come_neither_early_nor_late(self) -> None:
        for o in self.outcomes:
            when = o.step.heal_when
            if when is None or o.applied_at_s is None or self.finished:
                continue
            earliest, latest = o.applied_at_s + when.at_s, o.applied_at_s + when.at_s + (
                when.timeout_s)
            if o.status == "healed":
                assert o.healed_at_s is not None and o.healed_at_s >= earliest - EPS
                if o.heal_condition_met is False:
                    assert o.healed_at_s >= latest - EPS
            elif o.status == "applied":
                assert self.clock.now < latest + EPS, "a heal is late"
                assert not (self.clock.now >= earliest + EPS and self.conditions.met), (
                    "its condition holds and the heal did not come")

    @invariant()
    def one_history_op_per_start_and_end(self) -> None:
        starts = [op[3]["step"] for op in self.ops if op[3]["phase"] == "start"]
        ends = [op[3]["step"] for op in self.ops if op[3]["phase"] == "end"]
        applied = [o.step.id for o in self.outcomes if o.applied_at_s is not None]
        healed = [o.step.id for o in self.outcomes if o.healed_at_s is not None]
        assert sorted(starts) == sorted(applied) and len(set(starts)) == len(starts)
        assert sorted(ends) == sorted(healed) and len(set(ends)) == len(ends)
        assert all(op[:2] == ("nemesis", "info") for op in self.ops)

    def teardown(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


NemesisSchedule.TestCase.settings = settings(
    max_examples=100, stateful_step_count=30, deadline=None
)
test_nemesis_schedule = NemesisSchedule.TestCase
