"""Seed + profile -> fault plan, deterministically (the same inputs give the same plan,
byte for byte, on any machine: `random.Random` seeded with a string is stable)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import replace

from faults.model import (
    FIRST_FAULT_S,
    Plan,
    ProfileSettings,
    Step,
    Trigger,
    check_settings,
    pod_name,
)
from faults.soak import SOAK, Window, soak_plan

QUIET_TAIL_S = 8.0  # no new fault this close to the end of the load phase


class _Builder:
    def __init__(self, seed: int, profile: str, pods: int, brokers: int, time_limit_s: float,
                 platform_kinds: frozenset[str] = frozenset(),
                 refused: frozenset[str] = frozenset()):
        self.rng = random.Random(f"kchaos:{profile}:{seed}")
        self.pods = pods
        self.brokers = brokers
        self.time_limit_s = time_limit_s
        self.platform_kinds = platform_kinds
        self.refused = refused  # kinds the system under test cannot take: never added
        self.steps: list[Step] = []
        self.spare = pods  # index of the next pod a scale-out creates

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
        self.steps.append(
            Step(len(self.steps), fault, target, trigger, dict(params), heal_after_s, heal_when)
        )

    def pod(self) -> str:
        return pod_name(self.rng.randrange(self.pods))

    def times(self, low_gap: float, high_gap: float) -> list[float]:
        """Fault times from FIRST_FAULT_S to the quiet tail, gaps drawn in [low, high]."""
        at, times = FIRST_FAULT_S, []
        while at < self.time_limit_s - QUIET_TAIL_S:
            times.append(round(at, 1))
            at += self.rng.uniform(low_gap, high_gap)
        return times

    def r(self, low: float, high: float) -> float:
        return round(self.rng.uniform(low, high), 1)


# -- generic mixes: each adds one fault at time `at` -----------------------------------------


def _kill(b: _Builder, at: float) -> None:
    b.add("kill", b.pod(), Trigger(at), heal_after_s=b.r(1, 3))


def _kill_in_running(b: _Builder, at: float) -> None:
    """SIGKILL while a task is RUNNING after some commits: the exactly-once wipe window."""
    b.add("kill", b.pod(), Trigger(at, "commits", count=4, timeout_s=10), heal_after_s=b.r(1, 3))


def _kill_after_commit(b: _Builder, at: float) -> None:
    """SIGKILL right after the pod's next commit (a crash just past a commit point)."""
    b.add("kill", b.pod(), Trigger(at, "commits", count=1, timeout_s=10), heal_after_s=b.r(1, 3))


def _kill_after_flush(b: _Builder, at: float) -> None:
    """SIGKILL once a memtable flush has persisted writes of a still-open transaction:
    the restart must not trust a store holding aborted writes. A memtable fills only
    every ~30 s per store at `all`'s rate (whatever the write buffer), hence the wait."""
    b.add("kill", b.pod(), Trigger(at, "flush-traced-in-txn", timeout_s=20),
          heal_after_s=b.r(1, 3))


def _pause(b: _Builder, at: float) -> None:
    b.add("pause", b.pod(), Trigger(at), heal_after_s=b.r(8, 12))  # past the session timeout


def _long_pause(b: _Builder, at: float) -> None:
    """Past the session timeout and the failover that follows it: the pod resumes as a
    zombie while its tasks run elsewhere. It waits (10 s at most) for the pod to commit,
    so that it holds running tasks when it stops."""
    b.add("pause", b.pod(), Trigger(at, "commits", count=2, timeout_s=10),
          heal_after_s=b.r(16, 20))


def _crash(b: _Builder, at: float) -> None:
    """A machine crash: SIGKILL, and nothing restarts the pod before its session ends, so
    its tasks fail over. It waits (10 s at most) for a moment when a task running in the
    pod has a standby in another live pod: at a random moment the other pod was often
    down, paused or restoring itself, and no standby was promoted (1 seed of 3)."""
    b.add("kill", b.pod(), Trigger(at, "standby-elsewhere", timeout_s=10),
          heal_after_s=b.r(14, 20), down=True)


def _stop(b: _Builder, at: float) -> None:
    b.add("stop", b.pod(), Trigger(at), heal_after_s=b.r(1, 3))


def _move_with_volume(b: _Builder, at: float) -> None:
    b.add("move", b.pod(), Trigger(at), keep_volume=True)


def _move_empty(b: _Builder, at: float) -> None:
    b.add("move", b.pod(), Trigger(at), keep_volume=False)


def _scale_out(b: _Builder, at: float) -> None:
    b.add("scale-out", pod_name(b.spare), Trigger(at), heal_after_s=b.r(6, 10))
    b.spare += 1


def _scale_out_and_back(b: _Builder, at: float) -> None:
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


def _scale_in(b: _Builder, at: float) -> None:
    b.add("scale-in", b.pod(), Trigger(at), heal_after_s=b.r(6, 10))


def _delay_checkpoint(b: _Builder, at: float) -> None:
    b.add("delay-checkpoint", b.pod(), Trigger(at), heal_after_s=b.r(8, 15),
          ms=b.rng.choice([500, 1500, 3000]))


def _truncate_global(b: _Builder, at: float) -> None:
    b.add("truncate-global", b.pod(), Trigger(at, "commits", count=4, timeout_s=10))


def _kill_broker(b: _Builder, at: float) -> None:
    b.add("kill-broker", f"broker-{b.rng.randrange(b.brokers) + 1}", Trigger(at),
          heal_after_s=b.r(4, 8))


def _stop_broker(b: _Builder, at: float) -> None:
    b.add("stop-broker", f"broker-{b.rng.randrange(b.brokers) + 1}", Trigger(at),
          heal_after_s=b.r(4, 8))


def _partition_pod(b: _Builder, at: float) -> None:
    """A pod cut off from everything, past its session timeout: fenced when it is back."""
    b.add("partition", b.pod(), Trigger(at), heal_after_s=b.r(4, 12))


def _partition_broker(b: _Builder, at: float) -> None:
    b.add("partition", f"broker-{b.rng.randrange(b.brokers) + 1}", Trigger(at),
          heal_after_s=b.r(4, 8))


def _power_loss(b: _Builder, at: float) -> None:
    b.add("power-loss", b.pod(), Trigger(at), heal_after_s=b.r(1, 3))


def _power_loss_in_running(b: _Builder, at: float) -> None:
    b.add("power-loss", b.pod(), Trigger(at, "commits", count=4, timeout_s=10),
          heal_after_s=b.r(1, 3))


def _io_delay(b: _Builder, at: float) -> None:
    """Checkpoint fsyncs and renames slowed from outside (any system under test)."""
    b.add("io-delay", b.pod(), Trigger(at), heal_after_s=b.r(8, 15),
          ms=b.rng.choice([500, 1500, 3000]))


def _io_error(b: _Builder, at: float) -> None:
    b.add("io-error", b.pod(), Trigger(at), heal_after_s=b.r(2, 5),
          error=b.rng.choice(["EIO", "ENOSPC"]))


def _netem(b: _Builder, at: float, target: str) -> None:
    """A slow, lossy link (each direction): requests time out and are retried, sessions
    and transactions run long, none of it a crash."""
    b.add("netem", target, Trigger(at), heal_after_s=b.r(6, 12),
          delay_ms=b.rng.choice([50, 200, 500]), jitter_ms=b.rng.choice([0, 20]),
          loss_pct=b.rng.choice([0, 2, 10]))


def _netem_pod(b: _Builder, at: float) -> None:
    _netem(b, at, b.pod())


def _netem_broker(b: _Builder, at: float) -> None:
    _netem(b, at, f"broker-{b.rng.randrange(b.brokers) + 1}")


# -- the platform's families in `all`: one slot each, the variant drawn among the kinds the
# platform can apply (a seed's few slots then hold a power loss or an I/O fault as often as
# any other kind, whatever number of variants each family has).

def _variant(b: _Builder, at: float,
             variants: tuple[tuple[str, Callable[[_Builder, float], None]], ...]) -> None:
    b.rng.choice([add for kind, add in variants if kind in b.platform_kinds])(b, at)


def _power_loss_any(b: _Builder, at: float) -> None:
    """A machine crash that loses what the volume never fsynced: at a random moment or
    after some commits (a store and its checkpoints mid-write)."""
    _variant(b, at, (("power-loss", _power_loss), ("power-loss", _power_loss_in_running)))


def _io_fault(b: _Builder, at: float) -> None:
    _variant(b, at, (("io-delay", _io_delay), ("io-error", _io_error)))


# The kinds a platform may or may not apply (faults.kinds: Storage, Network, Links), by the
# family `all` draws them in. Pod and broker faults every platform applies.
PLATFORM_FAMILIES: dict[Callable[[_Builder, float], None], frozenset[str]] = {
    _power_loss_any: frozenset({"power-loss"}),
    _io_fault: frozenset({"io-delay", "io-error"}),
    _partition_pod: frozenset({"partition"}),
    _netem_pod: frozenset({"netem"}),
}
PLATFORM_KINDS = frozenset().union(*PLATFORM_FAMILIES.values())


MIXES: dict[str, tuple[Callable[[_Builder, float], None], ...]] = {
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
QUIET_AFTER_S: dict[Callable[[_Builder, float], None], float] = {_crash: 16.0}
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


def _bag(b: _Builder, mix: list[Callable[[_Builder, float], None]],
         groups: tuple[int, ...]) -> list[Callable[[_Builder, float], None]]:
    bag: list[Callable[[_Builder, float], None]] = []
    for size in (*groups, len(mix)):
        group = mix[len(bag):len(bag) + size]
        b.rng.shuffle(group)
        bag += group
    return bag


def _generic(b: _Builder, profile: str) -> ProfileSettings:
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
        bag: list[Callable[[_Builder, float], None]] = []
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


# -- targeted profiles: aim at one seed's window ---------------------------------------------


def _kafka_20685(b: _Builder) -> ProfileSettings:
    """SIGKILL pod-0 again and again at the moment a memtable flush has persisted writes of
    a still-open transaction (long transactions, small write buffers): a restore-time
    checkpoint left in place is then trusted over a store holding aborted writes."""
    return _crash_after_flush_in_txn(b, "kill")


def _crash_after_flush_in_txn(b: _Builder, fault: str) -> ProfileSettings:
    """`fault` (kill or power-loss) on pod-0 whenever a memtable flush has persisted writes
    of a still-open transaction."""
    for at in b.times(8, 11):
        b.add(fault, pod_name(0), Trigger(at, "flushed-in-txn", timeout_s=10),
              heal_after_s=b.r(1, 2))
    # One partition takes the whole rate, so its memtables fill (and flush) within one
    # long transaction; RocksDB rounds tiny write buffers up, hence the rate.
    return {"pods": 1, "threads": 1, "partitions": 1, "guarantee": "exactly_once_v2",
            "rate": 300.0, "commit_interval_ms": 5000, "write_buffer_bytes": 8192}


def _kafka_7672(b: _Builder) -> ProfileSettings:
    """Tasks leave pod-0's threads for a scaled-out pod long enough for the cleaner to
    delete their directories, then come back: a thread that restored a task before finds
    it without checkpoint or data and must restore it again from the changelog.

    The scale-in follows the system, not the clock: it comes once pod-0's cleaner has
    deleted a directory of a task that left it (the spare joined and took it), however long
    the spare took to start and join (a loaded machine, a pod container); a fixed 4-6 s
    hold was missed at load 20 (the nightly of 2026-11-22). The fixed worker's cleaner
    deletes the same directories, so it runs the same sequence. Cycles are 22-26 s apart
    (one in a 30 s run): a spare scaled out before the tasks came back took them instead
    (seed 3 at load 13, missed). The spacing was set when a scaled-in spare's tasks came
    back only at its session's end; a scale-in now leaves the group at once (KIP-812), so
    it could be shorter, which nobody has measured yet."""
    for at in b.times(22, 26):
        b.add("scale-out", pod_name(b.spare), Trigger(at),
              heal_when=Trigger(2.0, "cleaner-deleted", timeout_s=25, pod=pod_name(0)))
        b.spare += 1
    return {"pods": 1, "threads": 2, "guarantee": "exactly_once_v2",
            "cleaner_delay_ms": 1500, "cleaner_interval_ms": 500}


def _kafka_8187(b: _Builder) -> ProfileSettings:
    """A standby moves between the two threads of pod-0 while the old owner is slow to let
    go; the cleaner deletes its directory; a restart writes its creation-time checkpoint
    into the empty directory; every active fails over to pod-0 and trusts it.

    7 partitions, 2 threads per pod, standbys=1, pod-0 alone at the start. The assignor is
    deterministic (workloads/worker/assignor.py): whichever way pod-0's two threads
    joined the empty group (together, or one first and taking every task), when pod-1
    and then pod-2 join, pod-0's standbys 0_4 and 0_6 move from StreamThread-1 to
    StreamThread-2 (standbys are spread over threads in task order).
    1. pod-1 joins at once; pod-0's StreamThread-1 gets standbys (0_4, 0_6), which read
       their changelogs for a few seconds.
    2. pod-0's closing checkpoint writes are slowed down (only those: a slowed thread loop
       would miss the next rebalance) and pod-2 joins. StreamThread-1, closing 0_4 and
       then 0_6 with slow checkpoint writes, still holds 0_6's directory when
       StreamThread-2 creates the standby: lock contention (`contended`), the standby's
       only lock attempt under the bug. The delay then ends.
    3. StreamThread-1 lets go and the cleaner (cleaner_delay_ms 1500) deletes the
       directory nobody holds (`cleaned`). pod-1 and pod-2 are killed: every active will
       fail over to pod-0 once their sessions time out (10 s; restarted sooner, static
       members would get their tasks back without a rebalance), so which task and which
       thread does not matter. pod-0 is stopped and restarted at once: closing the
       forgotten standby writes the offsets read at creation into the recreated, empty
       directory; the restarted process trusts them (task-init with a checkpoint,
       entries 0: stale-checkpoint) and restores only what follows.
    4. The failover makes that store active: history before the stale offset is gone.
    The fixed worker retries the lock and checkpoints a complete store. It sees the same
    contention, so the delay ends at the same moment; `cleaned` never holds and the kills
    come at their deadline, a moment later than in a run with the bug.
    Detection: a re-sent event from before the stale offset is processed again
    (duplicate-output, wrong-balance); accounts not written between the stale offset and
    the kill go back (lost-history; 400 accounts make such cold accounts likely). Each
    step waits for the join it needs (pod-1's commits, the contention pod-2's join
    makes), not for a moment: as processes the sequence to the kills takes 9-14 s, the
    failover another 11 s, and some load must follow it (--time-limit 40 or more); as
    containers (9-12 s a start) use --time-limit 60."""
    first, second = pod_name(b.spare), pod_name(b.spare + 1)
    b.spare += 2
    b.add("scale-out", first, Trigger(0.0))  # stays until the end of the load phase
    # Killed 16 s before the load phase ends at the latest: the failover (10 s later) must
    # come well before the end restarts them.
    slow_at = b.r(4.0, 4.5)
    deadline = max(b.time_limit_s - 16.0, slow_at + 1.0)
    until_deadline = round(deadline - slow_at, 1)
    # The standbys pod-1's join gave pod-0 must read their changelogs for a while before
    # the delay: the offsets a forgotten standby hands over must not be empty (an empty
    # stale checkpoint is harmless). pod-1 joins in ~2 s as a process, 9-12 s as a
    # container: wait for its second commit (it is RUNNING, the standbys have read).
    b.add("delay-checkpoint", pod_name(0),
          Trigger(slow_at, "commits", count=2, timeout_s=until_deadline, pod=first),
          ms=b.rng.choice([1000, 1500]), reasons=["close"])
    b.add("scale-out", second, Trigger(slow_at))  # right after the delay is in force
    # pod-2's join makes the contention, however long its start takes.
    b.add("delay-checkpoint", pod_name(0),
          Trigger(slow_at, "contended", timeout_s=until_deadline), ms=0)
    cleaned = Trigger(slow_at, "cleaned", timeout_s=until_deadline)
    b.add("kill", first, cleaned)
    b.add("kill", second, Trigger(slow_at))  # right after
    b.add("stop", pod_name(0), Trigger(slow_at), heal_after_s=0.5)
    # The killed pods must stay down until their sessions time out (a restart policy would
    # bring them back as the same static members, with their tasks).
    return {"pods": 1, "threads": 2, "standbys": 1, "partitions": 7, "accounts": 400,
            "cleaner_delay_ms": 1500, "cleaner_interval_ms": 500, "restart": "never"}


def _kip_406(b: _Builder) -> ProfileSettings:
    """The global topic is truncated past pod-0's global checkpoint while it is down."""
    b.add("truncate-global", pod_name(0), Trigger(FIRST_FAULT_S + 4, "commits", count=4,
                                                   timeout_s=10))
    return {"pods": 1}


def _global_rebuild_nonblocking(b: _Builder) -> ProfileSettings:
    """The global topic is cut past the position of pod-0's *running* global consumer (the
    pod is paused meanwhile), again and again: the global thread wipes its store and
    rebuilds it while input waits. The fixed worker stops joining until the rebuild is
    done; with `global-rebuild-nonblocking` the stream threads join against the half-built
    table (stale-global: null joins for accounts the topic held). Many accounts make the
    rebuild take long enough to overlap the backlog of the pause."""
    for at in b.times(8, 11):
        b.add("truncate-global", pod_name(0), Trigger(at), live=True)
    return {"pods": 1, "accounts": 2000}


def _eos_no_corruption_wipe(b: _Builder) -> ProfileSettings:
    """The window of KAFKA-20685 seen from the other side: SIGKILL while memtable flushes
    have persisted an open transaction's writes. The fixed worker (no checkpoint while
    RUNNING) finds a store without checkpoint and wipes it; with `eos-no-corruption-wipe`
    the store, aborted writes included, is kept and the changelog replayed on top of it
    (dedup-skip, wrong-balance).

    Aimed finer than KAFKA-20685's plan, which missed at load 20: the kill waits until
    *every* store has flushed in the open transaction (a flushed balances store alone is
    overwritten by the replay; the dedup store's aborted entries are what outlive it),
    transactions last 8 s (the kill lands seconds before the commit, whatever the load),
    and each kill waits as long as the run allows for that, so a slow restart does not
    make the next kills fire on their timeouts, before the pod is RUNNING again."""
    for at in b.times(8, 11):
        timeout = max(10.0, round(b.time_limit_s - QUIET_TAIL_S - at, 1))
        b.add("kill", pod_name(0), Trigger(at, "all-flushed-in-txn", timeout_s=timeout),
              heal_after_s=b.r(1, 2))
    return {"pods": 1, "threads": 1, "partitions": 1, "guarantee": "exactly_once_v2",
            "rate": 300.0, "commit_interval_ms": 8000, "write_buffer_bytes": 8192}


def _checkpoint_delete_no_fsync(b: _Builder) -> ProfileSettings:
    """KAFKA-20685's window with a power loss instead of a SIGKILL: pod-0 loses power when
    a memtable flush has persisted an open transaction's writes. The fixed worker's
    RUNNING task has no checkpoint on disk (deleted durably): wipe and restore. With
    `checkpoint-delete-no-fsync` the deletion is undone by the crash and the restore-time
    checkpoint is trusted over a store holding aborted writes (dedup-skip). The first
    start restores an empty changelog (a checkpoint without entries: harmless), so the
    window opens from the second incarnation on."""
    return _crash_after_flush_in_txn(b, "power-loss")


def _store_wal_no_sync(b: _Builder) -> ProfileSettings:
    """At-least-once, pod-0 loses power right after commits (each writes a checkpoint).
    The fixed worker flushed its stores before each checkpoint; with `store-wal-no-sync`
    the writes since the last memtable flush lived in an unsynced log the crash drops,
    while the checkpoint claims them (lost-history, wrong-balance). Big write buffers keep
    the memtable from flushing by itself between commits."""
    for at in b.times(7, 10):
        b.add("power-loss", pod_name(0), Trigger(at, "commits", count=3, timeout_s=10),
              heal_after_s=b.r(1, 2))
    return {"pods": 1, "threads": 1, "partitions": 1, "guarantee": "at_least_once",
            "rate": 100.0, "write_buffer_bytes": 4 << 20}


TARGETED: dict[str, Callable[[_Builder], ProfileSettings]] = {
    "KAFKA-20685": _kafka_20685,
    "KAFKA-7672": _kafka_7672,
    "KAFKA-8187": _kafka_8187,
    "KIP-406": _kip_406,
    "eos-no-corruption-wipe": _eos_no_corruption_wipe,
    "global-rebuild-nonblocking": _global_rebuild_nonblocking,
    "checkpoint-delete-no-fsync": _checkpoint_delete_no_fsync,
    "store-wal-no-sync": _store_wal_no_sync,
}

PROFILES = (*MIXES, *TARGETED, SOAK)  # soak: `all` again in each window (faults/soak.py)
ALL_KINDS_PROFILES = frozenset({"all", SOAK})  # draw from every kind the platform applies


def _all_window(platform_kinds: frozenset[str], refused: frozenset[str]) -> Window:
    """One window of a soak: `all`'s steps over its length, drawn from its stream."""
    def draw(rng: random.Random, pods: int, brokers: int, length_s: float,
             spare: int) -> tuple[list[Step], int]:
        b = _Builder(0, "all", pods, brokers, length_s, platform_kinds, refused)
        b.rng, b.spare = rng, spare
        _generic(b, "all")
        return b.steps, b.spare
    return draw


def profile_config(profile: str) -> ProfileSettings:
    """The run settings a profile needs (pods, ...), before any plan is drawn (checked)."""
    mix = "all" if profile == SOAK else profile
    build = TARGETED.get(profile, lambda _: MIX_CONFIG.get(mix, {}))
    return check_settings(build(_Builder(0, profile, 1, 1, 0.0)), profile)


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
    builder = _Builder(seed, profile, pods, brokers, time_limit_s, kinds, refused)
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
