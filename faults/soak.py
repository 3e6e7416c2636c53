"""The `soak` profile: a long run that keeps meeting faults (issue 33).

`all` already refills its bag until the quiet tail, however long the run, but its draws
form one stream: fault k of a 25-minute run depends on every draw before it, and the first
kinds (the zombie, the crash to a standby, the task that leaves and comes back) open only
its first minute. The soak cuts the time limit into windows of WINDOW_S seconds and draws
`all`'s plan again for each, as if each window were a run of its own:

- window k's draws come from their own stream, `kchaos:soak:<seed>:<k>`: a pure function
  of the run's seed and the window's index, not of the windows before it;
- each window starts with `all`'s first group (the kinds that need 15-20 s to unfold) after
  FIRST_FAULT_S and ends with its quiet tail, so every window is a complete `all` mix;
- scaled-out pods are numbered on across windows (pod-2, pod-3, ...): a window's spare
  never takes the name of one an earlier window may still be scaling in;
- the run settings are `all`'s (a standby per task, 6 partitions, 2 s transactions).

The windows are `windows(time_limit_s)`: boundaries every WINDOW_S seconds, the last
window taking the rest (between half a window and one and a half); a run shorter than 1.5
windows is one window, i.e. `all`'s own mix drawn from the soak's stream. The run's report
counts coverage and anomalies in the same windows (harness/report/coverage.py).

faults/plan.py draws each window (`Window`: `all`'s builder over the window's length) and
imports this module, never the other way round.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable

from faults.model import Plan, ProfileSettings, Step

SOAK = "soak"
WINDOW_S = 300.0
# (the window's random stream, pods, brokers, its length, the next spare pod's index) ->
# its steps from 0 s, and the next spare pod's index after it.
Window = Callable[[random.Random, int, int, float, int], tuple[list[Step], int]]


def windows(time_limit_s: float, window_s: float = WINDOW_S) -> list[tuple[float, float]]:
    """(start, end) of each window, covering [0, time_limit_s] without gaps or overlaps."""
    count = max(1, round(time_limit_s / window_s))
    starts = [k * window_s for k in range(count)]
    ends = [*starts[1:], time_limit_s]
    return list(zip(starts, ends, strict=True))


def _shifted(step: Step, new_id: int, offset_s: float) -> Step:
    """The step renumbered and its trigger moved by `offset_s` (a heal_when trigger counts
    from the fault's own application, so it stays)."""
    trigger = dataclasses.replace(step.trigger, at_s=round(step.trigger.at_s + offset_s, 1))
    return dataclasses.replace(step, id=new_id, trigger=trigger)


def soak_plan(seed: int, pods: int, brokers: int, time_limit_s: float, draw: Window,
              config: ProfileSettings) -> Plan:
    steps: list[Step] = []
    spare = pods
    for k, (start, end) in enumerate(windows(time_limit_s)):
        rng = random.Random(f"kchaos:{SOAK}:{seed}:{k}")
        drawn, spare = draw(rng, pods, brokers, end - start, spare)
        steps += [_shifted(s, len(steps) + n, start) for n, s in enumerate(drawn)]
    return Plan(seed=seed, profile=SOAK, steps=tuple(steps), config=config, ordered=False)
