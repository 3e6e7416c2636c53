"""The run's settings a plan's windows are sized from (`PlanSettings`), and the windows
themselves: how long a pause must last to make a zombie, a crash to fail over, the quiet
after it, ... each a function of the settings the run really has (drawn by
faults/knobs.py, pinned by options or by the profile), not of the defaults.

Before, `all`'s long pause healed after 16-20 s, written for a 10 s session: against a
drawn 45 s session no pause made a zombie. Each window here is the setting plus a margin
for what follows it (the rebalance, a standby's promotion); at a 10 s session each is the
window the profiles had (the profiles that pin their settings drew the same plans).

harness/config/run.py builds `PlanSettings` from the resolved run configuration
(`plan_settings`) and checks on import that each field is a RunConfig field of the same
type and default; faults/plan.py passes it to the profile's draw.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from common.guarantees import EXACTLY_ONCE_V2
from faults.model import FIRST_FAULT_S, Trigger

# After the session timeout ends, the group rebalances and the tasks run elsewhere: 6-10 s
# on a 2-core machine (the margin `all`'s 16-20 s pauses had over the 10 s session).
REBALANCE_S = (6.0, 10.0)
# A crash held down past the session and the failover: 4-10 s past the session (`all`'s
# 14-20 s at a 10 s session).
FAILOVER_S = (4.0, 10.0)
# The quiet after a crash: the session timeout, the rebalance and a standby's promotion
# (16 s at a 10 s session: 12 s was too short at load 10, docs/faults.md).
PROMOTION_S = 6.0
# A pod a fault took down is RUNNING again this long after its heal, on a loaded machine:
# before a zombie's session ends, the pods that must take its tasks are back by then.
RESTART_S = 8.0
# The long pause waits for its pod's second commit (it holds running tasks), 10 s at most;
# when the run is tight, as long as the run allows but this at the least.
ZOMBIE_COMMIT_WAIT_S: tuple[float, float] = (2, 10)  # ints: plan.json writes 10, as before


@dataclass(frozen=True)
class PlanSettings:
    """The settings a window depends on. Defaults: RunConfig's (checked on import of
    harness/config/run.py), i.e. a run that pins and draws nothing."""

    guarantee: str | None = None  # not given: exactly-once, or an app's own (not yet known)
    commit_interval_ms: int = 500
    session_timeout_ms: int = 10_000
    transaction_timeout_ms: int = 10_000
    threads: int = 2
    standbys: int = 0
    partitions: int = 4
    cleaner_delay_ms: int = 600_000

    @staticmethod
    def of(settings: Mapping[str, Any]) -> PlanSettings:
        """The fields `settings` (a profile's settings, a run configuration's) has; the
        rest at their defaults."""
        names = {f.name for f in fields(PlanSettings)}
        return PlanSettings(**{k: v for k, v in settings.items() if k in names})

    @property
    def session_s(self) -> float:
        return self.session_timeout_ms / 1000

    @property
    def commit_s(self) -> float:
        return self.commit_interval_ms / 1000

    @property
    def exactly_once(self) -> bool:
        """Whether the plan may count on transactions: exactly-once given, or none given
        (the worker's and the ledger app's default; an app's own is known only once the
        app is described, after the plan is drawn)."""
        return self.guarantee in (EXACTLY_ONCE_V2, None)


def zombie_pause_s(s: PlanSettings) -> tuple[float, float]:
    """A pause that makes a zombie: past the session and the rebalance after it."""
    return s.session_s + REBALANCE_S[0], s.session_s + REBALANCE_S[1]


def crash_down_s(s: PlanSettings) -> tuple[float, float]:
    """A crash held down past the session, so its tasks fail over."""
    return s.session_s + FAILOVER_S[0], s.session_s + FAILOVER_S[1]


def promotion_quiet_s(s: PlanSettings) -> float:
    """No new fault this long after a crash: the session, the rebalance, the promotion."""
    return s.session_s + PROMOTION_S


def session_pause_s(s: PlanSettings) -> tuple[float, float]:
    """`kill`'s pause, around the session timeout (8-12 s at 10 s): some past it, some not."""
    return s.session_s - 2.0, s.session_s + 2.0


def cut_off_s(s: PlanSettings) -> tuple[float, float]:
    """A pod cut off 4-12 s at a 10 s session: some cuts past the session (fenced when back),
    some within it."""
    return max(1.0, s.session_s - 6.0), s.session_s + 2.0


def commits_wait_s(s: PlanSettings, count: int, least_s: float = 10) -> float:
    """How long a trigger waits for `count` commits: `least_s` (the wait sized at the 500
    ms-2 s commit intervals), or as long as `count` intervals and 2 s more."""
    return max(least_s, round(count * s.commit_s + 2.0, 1))


def longest_session_s(time_limit_s: float) -> float:
    """The longest session a run of `time_limit_s` can outwait: a pause at the first fault,
    after the shortest commit wait, must outlast it and the rebalance before the end."""
    return time_limit_s - FIRST_FAULT_S - ZOMBIE_COMMIT_WAIT_S[0] - REBALANCE_S[0]


def newcomer_takes_a_task(partitions: int, pods: int) -> bool:
    """Whether a pod scaled out of `pods` takes a task (and can give it back): the
    assignor keeps each task where it is within a process's fair share (tasks over
    processes, rounded up; workloads/worker/assignor.py), so a newcomer gets one only
    from a pod above its share once it joined."""
    return partitions > pods * -(-partitions // (pods + 1))


def zombie_fits(s: PlanSettings, at_s: float, time_limit_s: float) -> bool:
    """Whether a zombie pause starting at `at_s` can outlast the session and the rebalance
    before the load phase ends (the heal at the end of load still counts)."""
    return at_s + ZOMBIE_COMMIT_WAIT_S[0] + zombie_pause_s(s)[0] <= time_limit_s


def failover_fits(s: PlanSettings, at_s: float, time_limit_s: float) -> bool:
    """Whether a crash at `at_s` leaves time for the failover and a standby's promotion
    (there is a standby to promote)."""
    return s.standbys > 0 and at_s + promotion_quiet_s(s) <= time_limit_s


def takeover_span(s: PlanSettings, at_s: float) -> tuple[float, float]:
    """Around a zombie pause's session end (it starts at `at_s`): from a restart before the
    session ends to the rebalance after it, no other fault is in force, so the pods that
    take its tasks over are up."""
    expiry = at_s + s.session_s
    return expiry - RESTART_S, at_s + ZOMBIE_COMMIT_WAIT_S[0] + zombie_pause_s(s)[0]


def over_by(trigger: Trigger, heal_after_s: float | None, heal_when: Trigger | None,
            by_s: float) -> tuple[Trigger, float | None, Trigger | None] | None:
    """A step's trigger and heal shortened so that, at its latest (its condition's timeout,
    then its heal), it is over by `by_s`: its wait first, then its heal; None when less
    than a second of fault would be left."""
    room = by_s - trigger.at_s
    heal = (heal_after_s if heal_after_s is not None
            else heal_when.at_s + heal_when.timeout_s if heal_when is not None else 0.0)
    wait = trigger.timeout_s if trigger.condition is not None else 0.0
    if wait + heal <= room:
        return trigger, heal_after_s, heal_when
    wait = max(0.0, min(wait, room - heal))
    heal = room - wait
    if heal < 1.0 and (heal_after_s is not None or heal_when is not None):
        return None
    if wait < 0:
        return None
    fitted = replace(trigger, timeout_s=round(wait, 1)) if trigger.condition else trigger
    if heal_after_s is not None:
        return fitted, round(heal, 1), None
    if heal_when is not None:
        timeout = round(max(0.0, heal - heal_when.at_s), 1)
        return fitted, None, replace(heal_when, timeout_s=timeout)
    return fitted, None, None
