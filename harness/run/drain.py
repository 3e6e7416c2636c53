"""The drain: after the heal, wait until the group has committed all of its input.

A group that has not caught up by its budget is not yet unavailable: an app that keeps one
task for all of its input (one input partition) may still be working through a backlog
the faults left. Past the budget the drain goes on while the group's lag keeps falling,
up to a bound (`SLOW_BOUND_FACTOR` times the budget); it ends undrained once the lag has
not fallen for a progress window (two commit intervals: the lag is read from committed
offsets, which move only at a commit). The outcome says which it was, so that the
`unavailable` check tells a slow group from a stalled one.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from common.waiting import wait_until
from harness.run.topics import LagProbe

DRAIN_POLL_S = 0.25
# How far past its budget a drain whose lag keeps falling may go.
SLOW_BOUND_FACTOR = 4.0
# The least progress window: a lag read a few times a second still needs a commit to move.
MIN_PROGRESS_WINDOW_S = 10.0


@dataclass(frozen=True)
class DrainOutcome:
    """How a drain ended. `lag_at_budget` is None when the group drained within its
    budget; otherwise the input it still had to commit then, and `last_lag` what it had
    when the drain ended."""

    drained: bool
    seconds: float
    budget_s: float
    bound_s: float
    lag_at_budget: int | None = None
    last_lag: int | None = None
    gave_up: bool = False  # nobody was left to consume
    still_falling: bool = False  # undrained, its lag falling when the bound ended it

    @property
    def verdict(self) -> str:
        """drained (within the budget), slow (drained past it, its lag falling all along),
        stalled (its lag stopped falling, or nobody was left), still-draining (its lag
        still falling at the bound: whether it would have caught up is not known)."""
        if self.drained:
            # At 0 by its budget the group had caught up; only its pods were settling.
            return "slow" if self.lag_at_budget else "drained"
        return "still-draining" if self.still_falling and not self.gave_up else "stalled"

    def to_meta(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "seconds": self.seconds, "budget_s": self.budget_s,
                "bound_s": self.bound_s, "lag_at_budget": self.lag_at_budget,
                "last_lag": self.last_lag}


@dataclass
class ProgressWatch:
    """Whether a drain not yet done may go on: always within its budget; past it only while
    the lag has fallen within the last progress window, and never past the bound."""

    budget_s: float
    bound_s: float
    window_s: float
    least_lag: int | None = None
    least_at: float = float("-inf")  # when the lag last fell (never yet: no fall seen)
    lag_at_budget: int | None = None
    last_lag: int | None = None

    def observe(self, elapsed_s: float, lag: int | None) -> None:
        if lag is None:  # the cluster did not answer: no news either way
            return
        self.last_lag = lag
        if self.least_lag is None:
            self.least_lag = lag
        elif lag < self.least_lag:
            self.least_lag, self.least_at = lag, elapsed_s
        if elapsed_s >= self.budget_s and self.lag_at_budget is None:
            self.lag_at_budget = lag

    def falling(self, elapsed_s: float) -> bool:
        """The lag fell within the last progress window. A fall to 0 counts: the drain
        then needs its pods settled and the offsets stable a moment; a lag at 0 from the
        first read has not fallen (the group waits for its pods, it is not catching up)."""
        return elapsed_s - self.least_at < self.window_s

    def go_on(self, elapsed_s: float) -> bool:
        if elapsed_s < self.budget_s:
            return True
        return elapsed_s < self.bound_s and self.falling(elapsed_s)


def wait_drained(
    bootstrap: str, group: str, timeout_s: float, stable_s: float = 1.0,
    settled: Callable[[], bool] = lambda: True, give_up: Callable[[], bool] = lambda: False,
    topics: tuple[str, ...] | None = None, progress_window_s: float = MIN_PROGRESS_WINDOW_S,
    slow_bound_factor: float = SLOW_BOUND_FACTOR,
) -> DrainOutcome:
    """Until the group's committed offsets equal the input end offsets and stay so for
    `stable_s` (the load has stopped: nothing moves them after that but a late commit) and
    `settled` holds, polled every DRAIN_POLL_S; past `timeout_s` only while the lag falls
    (ProgressWatch). `give_up` ends the wait undrained (nobody is left to consume)."""
    started = time.monotonic()
    watch = ProgressWatch(timeout_s, timeout_s * slow_bound_factor,
                          max(progress_window_s, MIN_PROGRESS_WINDOW_S))
    stable_since: float | None = None
    gave_up = drained = False
    probe = LagProbe(bootstrap, group, topics)

    def done() -> bool:
        nonlocal stable_since, gave_up, drained
        ready = settled()  # asked before give_up, each poll
        if give_up():
            gave_up = True
            return True
        remaining = probe.lag()
        now = time.monotonic()
        watch.observe(now - started, remaining)
        if remaining != 0:
            stable_since = None
            return not watch.go_on(now - started)
        stable_since = stable_since if stable_since is not None else now
        drained = ready and now - stable_since >= stable_s
        return drained or not watch.go_on(now - started)

    try:
        wait_until(done, watch.bound_s, interval_s=DRAIN_POLL_S)
    finally:
        probe.close()
    elapsed = time.monotonic() - started
    return DrainOutcome(drained=drained, seconds=round(elapsed, 2), budget_s=timeout_s,
                        bound_s=watch.bound_s, lag_at_budget=watch.lag_at_budget,
                        last_lag=watch.last_lag, gave_up=gave_up,
                        still_falling=not drained and watch.falling(elapsed))
