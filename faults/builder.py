"""A plan being drawn: the seeded random stream, the run's shape and the steps so far. The
mixes (faults/plan.py) and each scenario's plan (faults/scenarios/) add steps to one."""

from __future__ import annotations

import math
import random
from dataclasses import replace

from common.guarantees import EXACTLY_ONCE_V2
from faults.model import FIRST_FAULT_S, ProfileSettings, Step, Trigger, pod_name
from faults.windows import PlanSettings, over_by

QUIET_TAIL_S = 8.0  # no new fault this close to the end of the load phase


class Builder:
    def __init__(self, seed: int, profile: str, pods: int, brokers: int, time_limit_s: float,
                 platform_kinds: frozenset[str] = frozenset(),
                 refused: frozenset[str] = frozenset(), *,
                 settings: PlanSettings | None = None):
        self.rng = random.Random(f"kchaos:{profile}:{seed}")
        self.pods = pods
        self.brokers = brokers
        self.time_limit_s = time_limit_s
        self.platform_kinds = platform_kinds
        self.refused = refused  # kinds the system under test cannot take: never added
        self.steps: list[Step] = []
        self.spare = pods  # index of the next pod a scale-out creates
        # The run's settings the windows are sized from (faults/windows.py).
        self.settings = settings or PlanSettings()
        self.now = 0.0  # the slot being drawn (a bag's): `pod` leaves out the pods held then
        # Pods no other fault may target until a time (a pause meant to make a zombie: a
        # kill of the paused process would end it), and spans no fault may start in or be
        # in force in (the failover the zombie waits for: the pods that take its tasks over
        # are up).
        self.held: dict[str, float] = {}
        self.quiet: list[tuple[float, float]] = []

    def add(
        self,
        fault: str,
        target: str,
        trigger: Trigger,
        heal_after_s: float | None = None,
        heal_when: Trigger | None = None,
        **params: object,
    ) -> None:
        if fault in self.refused:
            return
        ahead = [start for start, end in self.quiet if trigger.at_s < end]
        if ahead:  # a fault before a quiet span is over by its start (faults/windows.py)
            if trigger.at_s >= min(ahead):
                return
            fitted = over_by(trigger, heal_after_s, heal_when, min(ahead))
            if fitted is None:
                return
            trigger, heal_after_s, heal_when = fitted
        self.steps.append(
            Step(len(self.steps), fault, target, trigger, dict(params), heal_after_s, heal_when)
        )

    def pod(self) -> str:
        """A pod of the run, drawn among those no fault holds at the slot being drawn
        (all of them when every one is held)."""
        free = [i for i in range(self.pods) if self.held.get(pod_name(i), 0.0) <= self.now]
        free = free or list(range(self.pods))
        return pod_name(free[self.rng.randrange(len(free))])

    def hold(self, pod: str, until_s: float) -> None:
        self.held[pod] = max(self.held.get(pod, 0.0), until_s)

    def keep_quiet(self, start_s: float, end_s: float, but: int) -> None:
        """No fault starts in [start_s, end_s] or is in force in it, but step `but` (the
        one it is kept for): the steps drawn before are shortened to be over by then (a
        step with less than a second left is dropped), those drawn after too (`add`)."""
        self.quiet.append((start_s, end_s))
        kept: list[Step] = []
        for step in self.steps:
            if step.id != but and step.trigger.at_s < end_s:
                fitted = over_by(step.trigger, step.heal_after_s, step.heal_when, start_s)
                if fitted is None or step.trigger.at_s >= start_s:
                    continue
                trigger, heal_after_s, heal_when = fitted
                step = replace(step, trigger=trigger, heal_after_s=heal_after_s,
                               heal_when=heal_when)
            kept.append(replace(step, id=len(kept)))
        self.steps = kept

    def room_before_quiet(self, at: float) -> float:
        """How long a fault starting at `at` may be in force before a quiet span."""
        return min((start - at for start, end in self.quiet if at < end), default=math.inf)

    def after_quiet(self, at: float) -> float:
        """`at`, or later: past the quiet span it falls in, and past the moment every pod
        is held (a pause and a crash on two pods), so each fault has a pod to target."""
        for start, end in sorted(self.quiet):
            if start <= at < end:
                at = end
        holds = [self.held.get(pod_name(i), 0.0) for i in range(self.pods)]
        if min(holds) > at:
            return self.after_quiet(min(holds))
        return at

    def times(self, low_gap: float, high_gap: float) -> list[float]:
        """Fault times from FIRST_FAULT_S to the quiet tail, gaps drawn in [low, high]."""
        at, times = FIRST_FAULT_S, []
        while at < self.time_limit_s - QUIET_TAIL_S:
            times.append(round(at, 1))
            at += self.rng.uniform(low_gap, high_gap)
        return times

    def r(self, low: float, high: float) -> float:
        return round(self.rng.uniform(low, high), 1)

    def window(self, before_end_s: float) -> tuple[float, float]:
        """A targeted window that opens 4-4.5 s into the load phase and closes
        `before_end_s` before its end (a second after it opens at the least): when it
        opens, and how long it lasts (a step's timeout in it)."""
        opens = self.r(4.0, 4.5)
        closes = max(self.time_limit_s - before_end_s, opens + 1.0)
        return opens, round(closes - opens, 1)


def crash_after_flush_in_txn(b: Builder, fault: str) -> ProfileSettings:
    """`fault` (kill or power-loss) on pod-0 whenever a memtable flush has persisted writes
    of a still-open transaction."""
    for at in b.times(8, 11):
        b.add(fault, pod_name(0), Trigger(at, "flushed-in-txn", timeout_s=10),
              heal_after_s=b.r(1, 2))
    # One partition takes the whole rate, so its memtables fill (and flush) within one
    # long transaction; RocksDB rounds tiny write buffers up, hence the rate.
    return {"pods": 1, "threads": 1, "partitions": 1, "guarantee": EXACTLY_ONCE_V2,
            "rate": 300.0, "commit_interval_ms": 5000, "write_buffer_bytes": 8192}
