"""The generic profiles: each a `Mix` (faults/mix.py) of the faults below, which each add
one fault at time `at`.

Which mixes draw the run's settings from the seed (faults/knobs.py, `draws_knobs`): `all`,
the bag built to reach every coverage class, and those whose faults are not sized to one
setting and whose seeds no bug switch depends on (`checkpoint`, `global`, `broker`,
`power-loss`, `storage`). Not drawn:
- `none`: the baseline a system under test must pass, and the throughput figure;
- `kill` and `move`: the nightly's mutant cells run in them (offsets-outside-txn,
  restore-read-uncommitted, dedup-not-logged, checkpoint-without-flush): a drawn
  at-least-once or a 45 s session would hide a mutant on some seeds, and `kill`'s pause
  (8-12 s at the 10 s session) straddles the session timeout (faults/windows.py);
- `partition` and `network`: a pod is cut off 4-12 s at the 10 s session, around it,
  which is what those profiles are for;
- the targeted profiles (faults/scenarios/): each sets the settings its window needs.
"""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

from faults.builder import Builder
from faults.mix import Adder, Family, Mix
from faults.model import Trigger, pod_name
from faults.soak import SOAK
from faults.windows import (
    ZOMBIE_COMMIT_WAIT_S,
    commits_wait_s,
    crash_down_s,
    cut_off_s,
    failover_fits,
    newcomer_takes_a_task,
    promotion_quiet_s,
    session_pause_s,
    takeover_span,
    zombie_fits,
    zombie_pause_s,
)


def _kill(b: Builder, at: float) -> None:
    b.add("kill", b.pod(), Trigger(at), heal_after_s=b.r(1, 3))


def _kill_in_running(b: Builder, at: float) -> None:
    """SIGKILL while a task is RUNNING after some commits: the exactly-once wipe window."""
    b.add("kill", b.pod(), Trigger(at, "commits", count=4, timeout_s=commits_wait_s(b.settings, 4)),
          heal_after_s=b.r(1, 3))


def _kill_after_commit(b: Builder, at: float) -> None:
    """SIGKILL right after the pod's next commit (a crash just past a commit point)."""
    b.add("kill", b.pod(), Trigger(at, "commits", count=1, timeout_s=commits_wait_s(b.settings, 1)),
          heal_after_s=b.r(1, 3))


def _kill_after_flush(b: Builder, at: float) -> None:
    """SIGKILL once a memtable flush has persisted writes of a still-open transaction:
    the restart must not trust a store holding aborted writes. A memtable fills only
    every ~30 s per store at `all`'s rate (whatever the write buffer), hence the wait."""
    b.add("kill", b.pod(), Trigger(at, "flush-traced-in-txn", timeout_s=20),
          heal_after_s=b.r(1, 3))


def _pause(b: Builder, at: float) -> None:
    """Around the session timeout (8-12 s at 10 s): some pauses outlast it, some not."""
    b.add("pause", b.pod(), Trigger(at), heal_after_s=b.r(*session_pause_s(b.settings)))


def _long_pause(b: Builder, at: float) -> None:
    """Past the session timeout and the rebalance that follows it (faults/windows.py,
    sized from the run's session): the pod resumes as a zombie while its tasks run
    elsewhere. It waits (10 s at most, less when the run is tight) for the pod to commit,
    so that it holds running tasks when it stops. No other fault targets the paused pod
    (a kill would end the pause) and none starts around the session's end, when the
    others must take its tasks."""
    pause_s = zombie_pause_s(b.settings)
    least, most = ZOMBIE_COMMIT_WAIT_S
    wait = round(max(least, min(most, b.time_limit_s - at - pause_s[0])), 1)
    pod, before, fits = b.pod(), len(b.steps), _zombie_fits(b, at)
    b.add("pause", pod, Trigger(at, "commits", count=2, timeout_s=wait),
          heal_after_s=b.r(*pause_s))
    if len(b.steps) > before and fits:  # a pause drawn where no zombie can unfold: plain
        b.hold(pod, at + wait + pause_s[1])
        b.keep_quiet(*takeover_span(b.settings, at), but=before)


def _crash(b: Builder, at: float) -> None:
    """A machine crash: SIGKILL, and nothing restarts the pod before its session ends, so
    its tasks fail over. It waits (10 s at most) for a moment when a task running in the
    pod has a standby in another live pod: at a random moment the other pod was often
    down, paused or restoring itself, and no standby was promoted
    (docs/faults.md#how-all-was-sized)."""
    pod, wait, before = b.pod(), CRASH_WAIT_S, len(b.steps)
    fits = _failover_fits(b, at)
    down_s = b.r(*crash_down_s(b.settings))
    b.add("kill", pod, Trigger(at, "standby-elsewhere", timeout_s=wait), heal_after_s=down_s,
          down=True)
    if len(b.steps) > before and fits:  # down for its failover: no other fault for it
        b.hold(pod, at + wait + down_s)


CRASH_WAIT_S = 10  # at most, for a standby elsewhere


def _stop(b: Builder, at: float) -> None:
    b.add("stop", b.pod(), Trigger(at), heal_after_s=b.r(1, 3))


def _move_with_volume(b: Builder, at: float) -> None:
    b.add("move", b.pod(), Trigger(at), keep_volume=True)


def _move_empty(b: Builder, at: float) -> None:
    b.add("move", b.pod(), Trigger(at), keep_volume=False)


def _scale_out(b: Builder, at: float) -> None:
    b.add("scale-out", pod_name(b.spare), Trigger(at), heal_after_s=b.r(6, 10))
    b.spare += 1


def _scale_out_and_back(b: Builder, at: float) -> None:
    """The new pod goes once it has restored a task it took over (however slowly it
    joined): the task comes back to the live process that gave it up, before another
    fault can take that process down. Meanwhile the pods' standby checkpoints (written
    every commit) are slowed, so one is in flight when the new pod's join rebalances the
    group (a slowed pod on its own saw no rebalance; one pod slowed was missed when
    another fault had it paused). Only standby writes: with every write slowed, each
    graceful stop held the nemesis up; with only suspend writes slowed, no rebalance fell
    inside one (docs/faults.md#how-all-was-sized)."""
    ms = b.rng.choice([1500, 3000])
    for i in range(b.pods):
        b.add("delay-checkpoint", pod_name(i), Trigger(at), heal_after_s=b.r(10, 14), ms=ms,
              reasons=["standby-commit"])
    b.add("scale-out", pod_name(b.spare), Trigger(at),
          heal_when=Trigger(0.0, "restored", timeout_s=b.r(12, 16)))
    b.spare += 1


def _scale_in(b: Builder, at: float) -> None:
    b.add("scale-in", b.pod(), Trigger(at), heal_after_s=b.r(6, 10))


def _delay_checkpoint(b: Builder, at: float) -> None:
    b.add("delay-checkpoint", b.pod(), Trigger(at), heal_after_s=b.r(8, 15),
          ms=b.rng.choice([500, 1500, 3000]))


def _truncate_global(b: Builder, at: float) -> None:
    b.add("truncate-global", b.pod(),
          Trigger(at, "commits", count=4, timeout_s=commits_wait_s(b.settings, 4)))


def _kill_broker(b: Builder, at: float) -> None:
    b.add("kill-broker", f"broker-{b.rng.randrange(b.brokers) + 1}", Trigger(at),
          heal_after_s=b.r(4, 8))


def _stop_broker(b: Builder, at: float) -> None:
    b.add("stop-broker", f"broker-{b.rng.randrange(b.brokers) + 1}", Trigger(at),
          heal_after_s=b.r(4, 8))


def _partition_pod(b: Builder, at: float) -> None:
    """A pod cut off from everything, some cuts past its session timeout (fenced when it is
    back), some within it."""
    b.add("partition", b.pod(), Trigger(at), heal_after_s=b.r(*cut_off_s(b.settings)))


def _partition_broker(b: Builder, at: float) -> None:
    b.add("partition", f"broker-{b.rng.randrange(b.brokers) + 1}", Trigger(at),
          heal_after_s=b.r(4, 8))


def _power_loss(b: Builder, at: float) -> None:
    b.add("power-loss", b.pod(), Trigger(at), heal_after_s=b.r(1, 3))


def _power_loss_in_running(b: Builder, at: float) -> None:
    b.add("power-loss", b.pod(),
          Trigger(at, "commits", count=4, timeout_s=commits_wait_s(b.settings, 4)),
          heal_after_s=b.r(1, 3))


def _io_delay(b: Builder, at: float) -> None:
    """Checkpoint fsyncs and renames slowed from outside (any system under test)."""
    b.add("io-delay", b.pod(), Trigger(at), heal_after_s=b.r(8, 15),
          ms=b.rng.choice([500, 1500, 3000]))


def _io_error(b: Builder, at: float) -> None:
    b.add("io-error", b.pod(), Trigger(at), heal_after_s=b.r(2, 5),
          error=b.rng.choice(["EIO", "ENOSPC"]))


def _netem(b: Builder, at: float, target: str) -> None:
    """A slow, lossy link (each direction): requests time out and are retried, sessions
    and transactions run long, none of it a crash."""
    b.add("netem", target, Trigger(at), heal_after_s=b.r(6, 12),
          delay_ms=b.rng.choice([50, 200, 500]), jitter_ms=b.rng.choice([0, 20]),
          loss_pct=b.rng.choice([0, 2, 10]))


def _netem_pod(b: Builder, at: float) -> None:
    _netem(b, at, b.pod())


def _netem_broker(b: Builder, at: float) -> None:
    _netem(b, at, f"broker-{b.rng.randrange(b.brokers) + 1}")


# -- the platform's families (faults.mix.Family): one slot each, the variant drawn among
# the kinds the platform can apply.

def _variant(b: Builder, at: float,
             variants: tuple[tuple[str, Adder], ...]) -> None:
    b.rng.choice([add for kind, add in variants if kind in b.platform_kinds])(b, at)


def _power_loss_any(b: Builder, at: float) -> None:
    """A machine crash that loses what the volume never fsynced: at a random moment or
    after some commits (a store and its checkpoints mid-write)."""
    _variant(b, at, (("power-loss", _power_loss), ("power-loss", _power_loss_in_running)))


def _io_fault(b: Builder, at: float) -> None:
    _variant(b, at, (("io-delay", _io_delay), ("io-error", _io_error)))


def _clock(b: Builder, at: float) -> None:
    """A pod's clock (faults/clock.py) jumps 15-40 s either way right after a commit (a
    transaction just opened), or runs at 0.5x or 3x; healed after 4-10 s."""
    if b.rng.random() < 0.75:
        b.add("clock", b.pod(), Trigger(at, "commits", count=1,
                                        timeout_s=commits_wait_s(b.settings, 1)),
              heal_after_s=b.r(4, 10), jump_s=b.rng.choice([-1, 1]) * b.r(15, 40))
    else:
        b.add("clock", b.pod(), Trigger(at), heal_after_s=b.r(4, 10),
              rate=b.rng.choice([0.5, 3.0]))


# The families of kinds a platform may or may not apply; pod and broker faults every
# platform applies.
PLATFORM_FAMILIES = (
    Family(_power_loss_any, frozenset({"power-loss"})),
    Family(_io_fault, frozenset({"io-delay", "io-error"})),
    Family(_partition_pod, frozenset({"partition"})),
    Family(_netem_pod, frozenset({"netem"})),
    Family(_clock, frozenset({"clock"})),
)

# -- what the run's settings let each of `all`'s kinds reach (faults.mix: `moment_fits`,
# `quiet_after_s`), from faults/windows.py.

def _two_free_pods(b: Builder, at: float) -> bool:
    """One for the fault, one no fault holds to take its tasks over."""
    return sum(1 for p in range(b.pods) if b.held.get(pod_name(p), 0.0) <= at) >= 2


def _zombie_fits(b: Builder, at: float) -> bool:
    return _two_free_pods(b, at) and zombie_fits(b.settings, at, b.time_limit_s)


def _failover_fits(b: Builder, at: float) -> bool:
    """A standby to promote, time for the failover, a pod to take over, and no zombie's
    takeover to keep quiet for while the crashed pod is down (it would be cut short)."""
    down_s = CRASH_WAIT_S + crash_down_s(b.settings)[1]
    return (_two_free_pods(b, at) and failover_fits(b.settings, at, b.time_limit_s)
            and down_s <= b.room_before_quiet(at))


def _failover_quiet(b: Builder, at: float) -> float:
    """The failover's quiet when it can unfold; else none (the promotion is not waited for:
    a 45 s session's quiet would hold back every fault after the crash)."""
    return promotion_quiet_s(b.settings) if _failover_fits(b, at) else 0.0


def _newcomer_takes_a_task(b: Builder, at: float) -> bool:
    return newcomer_takes_a_task(b.settings.partitions, b.pods)


def _in_transactions(b: Builder, at: float) -> bool:
    return b.settings.exactly_once


# `all`: the first eight kinds, drawn first in every seed (a bag), each make coverage
# classes (checker/coverage): a zombie, a crash that fails over to a standby, a task
# leaving and coming back under slowed checkpoints (these three need 15-20 s to unfold, so
# they come first), a kill right after a commit, a kill after an in-transaction flush,
# both moves, a global restart. The platform's families join the second group. A 60 s run
# has eight to ten slots; the last three kinds only repeat kinds. Its faults are 3-6 s
# apart, and a crash's failover (the session timeout, a rebalance, then a standby's
# promotion) is not cut short by a fault on the pod holding the standby: the session and
# 6 s after it (16 s at 10 s). Those windows follow the run's settings (faults/windows.py),
# and the bag gives a slot to the kind whose moment the settings still let unfold there
# (`moment_fits`): a 45 s session's pause first, no crash waiting for a standby there is
# none of.
# Its settings keep a standby of every task, so a crash can promote one, and more tasks
# than its pods have threads, so a scaled-out pod takes some (the sticky assignor leaves a
# joining pod idle while every thread already has at most one) and gives them back when it
# goes; its transactions last 2 s, so a crash finds flushed writes of an open transaction
# (a memtable fills every ~30 s per store at its rate, whatever the write buffer). How
# these were sized: docs/faults.md#how-all-was-sized.
ALL = Mix(
    "all",
    (_long_pause, _crash, _scale_out_and_back, _kill_after_commit, _kill_after_flush,
     _move_with_volume, _move_empty, _truncate_global, _kill, _stop, _scale_in),
    with_three_brokers=(_kill_broker, _stop_broker),
    families=PLATFORM_FAMILIES,
    bag=(3, 5),
    gap_s=(3.0, 6.0),
    quiet_after_s=MappingProxyType({_crash: _failover_quiet}),
    moment_fits=MappingProxyType({_long_pause: _zombie_fits, _crash: _failover_fits,
                                  _scale_out_and_back: _newcomer_takes_a_task,
                                  _kill_after_flush: _in_transactions}),
    run_settings={"standbys": 1, "partitions": 6, "commit_interval_ms": 2000},
    draws_knobs=True,
)

MIXES: tuple[Mix, ...] = (
    Mix("none"),  # no faults: the baseline a system under test must pass, and throughput
    Mix("kill", (_kill, _kill_in_running, _pause)),
    Mix("move", (_move_with_volume, _move_empty)),
    Mix("checkpoint", (_delay_checkpoint, _stop, _scale_out, _scale_in, _kill_in_running),
        draws_knobs=True),
    Mix("global", (_truncate_global,), draws_knobs=True),
    Mix("broker", with_three_brokers=(_kill_broker, _stop_broker), min_brokers=3,
        draws_knobs=True),
    # Needs a run network (docker; local as root); a broker only out of three.
    Mix("partition", (_partition_pod,), with_three_brokers=(_partition_broker,)),
    # The fault filesystem under the volumes (--platform local, fuse3); not in `all`,
    # which must run where FUSE cannot.
    Mix("power-loss", (_power_loss, _power_loss_in_running), draws_knobs=True),
    Mix("storage", (_power_loss, _power_loss_in_running, _io_delay, _io_error),
        draws_knobs=True),
    # netem: local platform only.
    Mix("network", (_partition_pod, _netem_pod),
        with_three_brokers=(_partition_broker, _netem_broker)),
    ALL,
)

# `soak`: `all` again in each window of a long run (faults/soak.py), its settings not drawn.
SOAK_MIX = replace(ALL, name=SOAK, windows=True, draws_knobs=False)
