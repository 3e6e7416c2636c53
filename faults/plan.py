"""Seed + profile -> fault plan, deterministically (the same inputs give the same plan,
byte for byte, on any machine: `random.Random` seeded with a string is stable)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import replace

from faults.builder import QUIET_TAIL_S, Builder
from faults.model import (
    FIRST_FAULT_S,
    Plan,
    ProfileSettings,
    Step,
    Trigger,
    check_settings,
    pod_name,
)
from faults.scenarios import SCENARIOS
from faults.soak import SOAK, Window, soak_plan

# -- generic mixes: each adds one fault at time `at` -----------------------------------------


def _kill(b: Builder, at: float) -> None:
    b.add("kill", b.pod(), Trigger(at), heal_after_s=b.r(1, 3))


def _kill_in_running(b: Builder, at: float) -> None:
    """SIGKILL while a task is RUNNING after some commits: the exactly-once wipe window."""
    b.add("kill", b.pod(), Trigger(at, "commits", count=4, timeout_s=10), heal_after_s=b.r(1, 3))


def _kill_after_commit(b: Builder, at: float) -> None:
    """SIGKILL right after the pod's next commit (a crash just past a commit point)."""
    b.add("kill", b.pod(), Trigger(at, "commits", count=1, timeout_s=10), heal_after_s=b.r(1, 3))


def _kill_after_flush(b: Builder, at: float) -> None:
    """SIGKILL once a memtable flush has persisted writes of a still-open transaction:
    the restart must not trust a store holding aborted writes. A memtable fills only
    every ~30 s per store at `all`'s rate (whatever the write buffer), hence the wait."""
    b.add("kill", b.pod(), Trigger(at, "flush-traced-in-txn", timeout_s=20),
          heal_after_s=b.r(1, 3))


def _pause(b: Builder, at: float) -> None:
    b.add("pause", b.pod(), Trigger(at), heal_after_s=b.r(8, 12))  # past the session timeout


def _long_pause(b: Builder, at: float) -> None:
    """Past the session timeout and the failover that follows it: the pod resumes as a
    zombie while its tasks run elsewhere. It waits (10 s at most) for the pod to commit,
    so that it holds running tasks when it stops."""
    b.add("pause", b.pod(), Trigger(at, "commits", count=2, timeout_s=10),
          heal_after_s=b.r(16, 20))


def _crash(b: Builder, at: float) -> None:
    """A machine crash: SIGKILL, and nothing restarts the pod before its session ends, so
    its tasks fail over. It waits (10 s at most) for a moment when a task running in the
    pod has a standby in another live pod: at a random moment the other pod was often
    down, paused or restoring itself, and no standby was promoted (1 seed of 3)."""
    b.add("kill", b.pod(), Trigger(at, "standby-elsewhere", timeout_s=10),
          heal_after_s=b.r(14, 20), down=True)


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
    group (a slowed pod on its own saw no rebalance in 3 seeds of 3; one pod slowed was
    missed when another fault had it paused). Only standby writes: with every write
    slowed, each graceful stop took 9-15 s and held the nemesis up; with only suspend
    writes slowed 1-2 s, no rebalance fell inside one (2 seeds of 2)."""
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
    b.add("truncate-global", b.pod(), Trigger(at, "commits", count=4, timeout_s=10))


def _kill_broker(b: Builder, at: float) -> None:
    b.add("kill-broker", f"broker-{b.rng.randrange(b.brokers) + 1}", Trigger(at),
          heal_after_s=b.r(4, 8))


def _stop_broker(b: Builder, at: float) -> None:
    b.add("stop-broker", f"broker-{b.rng.randrange(b.brokers) + 1}", Trigger(at),
          heal_after_s=b.r(4, 8))


def _partition_pod(b: Builder, at: float) -> None:
    """A pod cut off from everything, past its session timeout: fenced when it is back."""
    b.add("partition", b.pod(), Trigger(at), heal_after_s=b.r(4, 12))


def _partition_broker(b: Builder, at: float) -> None:
    b.add("partition", f"broker-{b.rng.randrange(b.brokers) + 1}", Trigger(at),
          heal_after_s=b.r(4, 8))


def _power_loss(b: Builder, at: float) -> None:
    b.add("power-loss", b.pod(), Trigger(at), heal_after_s=b.r(1, 3))


def _power_loss_in_running(b: Builder, at: float) -> None:
    b.add("power-loss", b.pod(), Trigger(at, "commits", count=4, timeout_s=10),
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


# -- the platform's families in `all`: one slot each, the variant drawn among the kinds the
# platform can apply (a seed's few slots then hold a power loss or an I/O fault as often as
# any other kind, whatever number of variants each family has).

def _variant(b: Builder, at: float,
             variants: tuple[tuple[str, Callable[[Builder, float], None]], ...]) -> None:
    b.rng.choice([add for kind, add in variants if kind in b.platform_kinds])(b, at)


def _power_loss_any(b: Builder, at: float) -> None:
    """A machine crash that loses what the volume never fsynced: at a random moment or
    after some commits (a store and its checkpoints mid-write)."""
    _variant(b, at, (("power-loss", _power_loss), ("power-loss", _power_loss_in_running)))


def _io_fault(b: Builder, at: float) -> None:
    _variant(b, at, (("io-delay", _io_delay), ("io-error", _io_error)))


# The kinds a platform may or may not apply (faults.kinds: Storage, Network, Links), by the
# family `all` draws them in. Pod and broker faults every platform applies.
PLATFORM_FAMILIES: dict[Callable[[Builder, float], None], frozenset[str]] = {
    _power_loss_any: frozenset({"power-loss"}),
    _io_fault: frozenset({"io-delay", "io-error"}),
    _partition_pod: frozenset({"partition"}),
    _netem_pod: frozenset({"netem"}),
}
PLATFORM_KINDS = frozenset().union(*PLATFORM_FAMILIES.values())


MIXES: dict[str, tuple[Callable[[Builder, float], None], ...]] = {
    "none": (),  # no faults: the baseline a system under test must pass, and throughput
    "kill": (_kill, _kill_in_running, _pause),
    "move": (_move_with_volume, _move_empty),
    "checkpoint": (_delay_checkpoint, _stop, _scale_out, _scale_in, _kill_in_running),
    "global": (_truncate_global,),
    "broker": (_kill_broker, _stop_broker),  # needs a 3-node cluster (--brokers 3)
    # Need a run network (docker; local as root); a broker only out of three.
    "partition": (_partition_pod,),
    # The fault filesystem under the volumes (--platform local, fuse3); not in `all`, which
    # must run where FUSE cannot.
    "power-loss": (_power_loss, _power_loss_in_running),
    "storage": (_power_loss, _power_loss_in_running, _io_delay, _io_error),
    "network": (_partition_pod, _netem_pod),  # netem: local platform only
    # The first eight, drawn first in every seed (a bag), each make coverage classes
    # (checker/coverage): a zombie, a crash that fails over to a standby, a task leaving
    # and coming back under slowed checkpoints (these three need 15-20 s to unfold, so
    # they come first), a kill right after a commit, a kill after an in-transaction
    # flush, both moves, a global restart. The platform's families (PLATFORM_FAMILIES)
    # join the second group. A 60 s run has eight to ten slots; the last three kinds only
    # repeat kinds.
    "all": (_long_pause, _crash, _scale_out_and_back, _kill_after_commit, _kill_after_flush,
            _move_with_volume, _move_empty, _truncate_global, _kill, _stop, _scale_in),
}
# A bag mix's kinds in groups: each group shuffled and drawn before the next (the rest of
# the mix is the last group).
BAG_GROUPS: dict[str, tuple[int, ...]] = {"all": (3, 5)}
# A bag's faults are this far apart (seconds): with the quiet after a crash, a 60 s
# run holds `all`'s eight first kinds in 56 seeds of 60 (4-7 s: 2 of 60).
BAG_GAP_S = (3.0, 6.0)
# The least time before a bag's next fault: a crash's failover (the 10 s session timeout,
# a rebalance, then a standby's promotion) must not be cut short by a fault on the pod
# holding the standby (with two pods, 2 runs of 2 lost their promotion that way, and 12 s
# was too short at load 10).
QUIET_AFTER_S: dict[Callable[[Builder, float], None], float] = {_crash: 16.0}
# Run settings of the mixes (a targeted profile's come from its builder): `all` keeps a
# standby of every task, so a crash can promote one, and has more tasks than its pods have
# threads, so a scaled-out pod takes some (the sticky assignor leaves a joining pod idle
# while every thread already has at most one) and gives them back when it goes. Its
# transactions last 2 s: a memtable fills every ~30 s per store at its rate, whatever the
# write buffer, and a crash aborts flushed writes only if one came since the last commit
# (with 500 ms, in 0 seeds of 3).
MIX_CONFIG: dict[str, ProfileSettings] = {
    "all": {"standbys": 1, "partitions": 6, "commit_interval_ms": 2000},
}
# Mixes drawn from a bag and run unordered (a step waiting for its condition, or behind a
# long absence, holds no other back); the others keep the uniform draw and the order their
# recorded seeds were chosen with.
BAG_MIXES = frozenset({"all"})


def _bag(b: Builder, mix: list[Callable[[Builder, float], None]],
         groups: tuple[int, ...]) -> list[Callable[[Builder, float], None]]:
    bag: list[Callable[[Builder, float], None]] = []
    for size in (*groups, len(mix)):
        group = mix[len(bag):len(bag) + size]
        b.rng.shuffle(group)
        bag += group
    return bag


def _generic(b: Builder, profile: str) -> ProfileSettings:
    mix = list(MIXES[profile])
    if not mix:
        return {}
    groups: tuple[int, ...] = BAG_GROUPS.get(profile, ())
    if profile == "all":
        # Every fault kind the platform can apply: its families in the second group, as
        # likely in a seed's first slots as the kinds already there.
        families = [f for f, kinds in PLATFORM_FAMILIES.items() if kinds & b.platform_kinds]
        mix[sum(groups):sum(groups)] = families
        groups = (*groups[:-1], groups[-1] + len(families))
    if profile == "all" and b.brokers >= 3:
        mix += [_kill_broker, _stop_broker]
    if profile == "partition" and b.brokers >= 3:
        mix += [_partition_broker]
    if profile == "network" and b.brokers >= 3:
        mix += [_partition_broker, _netem_broker]
    if b.brokers < 3:  # one broker: killing it is no fault the worker could survive
        mix = [m for m in mix if m not in (_kill_broker, _stop_broker)]
        if not mix:
            return {}
    if profile in BAG_MIXES:
        # A bag (every kind once, group by group, each group shuffled, then again): a
        # seed's few slots get as many different faults as they can hold, where a
        # uniform draw repeats some and leaves others out.
        bag: list[Callable[[Builder, float], None]] = []
        at = FIRST_FAULT_S
        empty = 0  # kinds in a row that added nothing (all their faults refused)
        while at < b.time_limit_s - QUIET_TAIL_S and empty <= len(mix):
            if not bag:
                bag = _bag(b, mix, groups)
            kind = bag.pop(0)
            before = len(b.steps)
            kind(b, round(at, 1))
            if len(b.steps) == before:  # the slot goes to the bag's next kind
                empty += 1
                continue
            empty = 0
            at += max(b.rng.uniform(*BAG_GAP_S), QUIET_AFTER_S.get(kind, 0.0))
    else:
        for at in b.times(5, 9):
            b.rng.choice(mix)(b, at)
    return MIX_CONFIG.get(profile, {}).copy()


# Each scenario's plan (faults/scenarios/, one module each), by its profile's name.
TARGETED: dict[str, Callable[[Builder], ProfileSettings]] = {
    name: scenario.plan for name, scenario in SCENARIOS.items()
}

PROFILES = (*MIXES, *TARGETED, SOAK)  # soak: `all` again in each window (faults/soak.py)
ALL_KINDS_PROFILES = frozenset({"all", SOAK})  # draw from every kind the platform applies


def _all_window(platform_kinds: frozenset[str], refused: frozenset[str]) -> Window:
    """One window of a soak: `all`'s steps over its length, drawn from its stream."""
    def draw(rng: random.Random, pods: int, brokers: int, length_s: float,
             spare: int) -> tuple[list[Step], int]:
        b = Builder(0, "all", pods, brokers, length_s, platform_kinds, refused)
        b.rng, b.spare = rng, spare
        _generic(b, "all")
        return b.steps, b.spare
    return draw


def profile_config(profile: str) -> ProfileSettings:
    """The run settings a profile needs (pods, ...), before any plan is drawn (checked)."""
    mix = "all" if profile == SOAK else profile
    build = TARGETED.get(profile, lambda _: MIX_CONFIG.get(mix, {}))
    return check_settings(build(Builder(0, profile, 1, 1, 0.0)), profile)


def plan(seed: int, profile: str, pods: int, brokers: int, time_limit_s: float,
         platform_kinds: Iterable[str] = (), refused_kinds: Iterable[str] = ()) -> Plan:
    """`platform_kinds`: those of PLATFORM_KINDS the run's platform can apply; the broad
    profiles (`all`, `soak`) draw from them too, the others ignore them. `refused_kinds`:
    those the system under test cannot take; the broad profiles draw every other kind (a
    kind made only of refused faults gives its slot to the next), the others keep them
    (the run is then refused: the profile is about them)."""
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; profiles: {', '.join(PROFILES)}")
    kinds = (frozenset(platform_kinds) & PLATFORM_KINDS if profile in ALL_KINDS_PROFILES
             else frozenset())
    refused = frozenset(refused_kinds) if profile in ALL_KINDS_PROFILES else frozenset()
    recorded = tuple(sorted(kinds))
    if profile == SOAK:
        soak = soak_plan(seed, pods, brokers, time_limit_s, _all_window(kinds, refused),
                         MIX_CONFIG["all"].copy())
        return replace(soak, platform_kinds=recorded)
    builder = Builder(seed, profile, pods, brokers, time_limit_s, kinds, refused)
    targeted = TARGETED.get(profile)
    config = targeted(builder) if targeted else _generic(builder, profile)
    return Plan(seed=seed, profile=profile, steps=tuple(builder.steps), config=config,
                ordered=profile not in BAG_MIXES, platform_kinds=recorded)


# Aimed at the real releases (`--sut kstreams`), whose app traces less than the worker:
# faults/kstreams_profiles.py. Listed after every other profile, so that their golden
# plans (tests/faults/golden_plans.json) keep their places.
from faults.kstreams_profiles import KSTREAMS_TARGETED  # noqa: E402

TARGETED.update(KSTREAMS_TARGETED)
PROFILES = (*PROFILES, *KSTREAMS_TARGETED)
