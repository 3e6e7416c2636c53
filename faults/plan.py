"""Seed + profile -> fault plan, deterministically (the same inputs give the same plan,
byte for byte, on any machine: `random.Random` seeded with a string is stable)."""

from __future__ import annotations

import random
from collections.abc import Callable

from faults.model import Plan, Step, Trigger

FIRST_FAULT_S = 6.0
QUIET_TAIL_S = 8.0  # no new fault this close to the end of the load phase


def pod_name(i: int) -> str:
    return f"pod-{i}"


class _Builder:
    def __init__(self, seed: int, profile: str, pods: int, brokers: int, time_limit_s: float):
        self.rng = random.Random(f"kchaos:{profile}:{seed}")
        self.pods = pods
        self.brokers = brokers
        self.time_limit_s = time_limit_s
        self.steps: list[Step] = []
        self.spare = pods  # index of the next pod a scale-out creates

    def add(
        self,
        fault: str,
        target: str,
        trigger: Trigger,
        heal_after_s: float | None = None,
        **params: object,
    ) -> None:
        self.steps.append(
            Step(len(self.steps), fault, target, trigger, dict(params), heal_after_s)
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


def _pause(b: _Builder, at: float) -> None:
    b.add("pause", b.pod(), Trigger(at), heal_after_s=b.r(8, 12))  # past the session timeout


def _stop(b: _Builder, at: float) -> None:
    b.add("stop", b.pod(), Trigger(at), heal_after_s=b.r(1, 3))


def _move_with_volume(b: _Builder, at: float) -> None:
    b.add("move", b.pod(), Trigger(at), keep_volume=True)


def _move_empty(b: _Builder, at: float) -> None:
    b.add("move", b.pod(), Trigger(at), keep_volume=False)


def _scale_out(b: _Builder, at: float) -> None:
    b.add("scale-out", pod_name(b.spare), Trigger(at), heal_after_s=b.r(6, 10))
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


MIXES: dict[str, tuple[Callable[[_Builder, float], None], ...]] = {
    "kill": (_kill, _kill_in_running, _pause),
    "move": (_move_with_volume, _move_empty),
    "checkpoint": (_delay_checkpoint, _stop, _scale_out, _scale_in, _kill_in_running),
    "global": (_truncate_global,),
    "all": (_kill, _kill_in_running, _pause, _stop, _move_with_volume, _move_empty,
            _scale_out, _scale_in, _delay_checkpoint, _truncate_global),
}


def _generic(b: _Builder, profile: str) -> dict[str, object]:
    mix = list(MIXES[profile])
    if profile == "all" and b.brokers >= 3:
        mix += [_kill_broker, _stop_broker]
    for at in b.times(5, 9):
        b.rng.choice(mix)(b, at)
    return {}


# -- targeted profiles: aim at one seed's window ---------------------------------------------


def _kafka_20685(b: _Builder) -> dict[str, object]:
    """SIGKILL pod-0 again and again at the moment a memtable flush has persisted writes of
    a still-open transaction (long transactions, small write buffers): a restore-time
    checkpoint left in place is then trusted over a store holding aborted writes."""
    for at in b.times(8, 11):
        b.add("kill", pod_name(0), Trigger(at, "flushed-in-txn", timeout_s=10),
              heal_after_s=b.r(1, 2))
    # One partition takes the whole rate, so its memtables fill (and flush) within one
    # long transaction; RocksDB rounds tiny write buffers up, hence the rate.
    return {"pods": 1, "threads": 1, "partitions": 1, "guarantee": "exactly_once_v2",
            "rate": 300.0, "commit_interval_ms": 5000, "write_buffer_bytes": 8192}


def _kafka_7672(b: _Builder) -> dict[str, object]:
    """Tasks leave pod-0's threads for a scaled-out pod long enough for the cleaner to
    delete their directories, then come back: a thread that restored a task before finds
    it without checkpoint or data and must restore it again from the changelog."""
    for at in b.times(8, 11):
        b.add("scale-out", pod_name(b.spare), Trigger(at), heal_after_s=b.r(4, 6))
        b.spare += 1
    return {"pods": 1, "threads": 2, "guarantee": "exactly_once_v2",
            "cleaner_delay_ms": 1500, "cleaner_interval_ms": 500}


def _kafka_8187(b: _Builder) -> dict[str, object]:
    """A standby moves between the two threads of pod-0 while the old owner is slow to let
    go; its directory is cleaned; the active fails over onto that forgotten standby.

    3 partitions, 2 threads per pod, standbys=1, pod-0 alone at the start. The assignor is
    deterministic (workloads/worker/assignor.py), so the moves are known in advance once
    the threads' previous tasks are: those of pod-0 depend on whether its two threads
    joined the empty group together, so pod-0 is first killed and comes back while pod-1
    joins, and rejoins that rebalance with no previous tasks.
    1. pod-1 joins: pod-0 gets 0_0 (StreamThread-1) and 0_1 (StreamThread-2), pod-1 gets
       0_2, whose standby goes to pod-0's StreamThread-1.
    2. once pod-0 has restored, its checkpoints are slowed down and pod-2 joins: 0_1 moves
       to pod-2 and the standby 0_2 from StreamThread-1 (stalled in slow checkpoint
       writes, then closing it with one) to StreamThread-2 (standbys are spread over the
       threads in task order), which creates it while StreamThread-1 still holds the task
       directory: lock contention (`contended`), the standby's only lock attempt under
       the bug. The delay then ends.
    3. StreamThread-1 lets go; with no lock on it, the cleaner (cleaner_delay_ms 1500)
       deletes the directory (`cleaned`). pod-1, owner of the active 0_2, is killed and
       stays down past the session timeout (10 s: a static member back sooner gets its
       tasks back without a rebalance); it is restarted at the end of the load.
    4. The failover gives 0_2 to pod-0's least loaded thread, StreamThread-2: the standby
       is closed there, writing the offsets it read at creation into the recreated, empty
       directory, and the active trusts them (task-init with a checkpoint, entries 0).
    The fixed worker retries the lock and hands a complete store over. It sees the same
    contention, so the delay ends at the same moment; `cleaned` never holds and the kill
    comes at its timeout, a little later than in a run with the bug.
    Detection: a re-sent event from before the stale offset is processed again
    (duplicate-output, wrong-balance); accounts not written between the stale offset and
    the kill go back (lost-history; 200 accounts make such cold accounts likely). The
    failover needs about 28 s of load (--time-limit 30 or more)."""
    first, second = pod_name(b.spare), pod_name(b.spare + 1)
    b.spare += 2
    b.add("kill", pod_name(0), Trigger(0.0), heal_after_s=2.0)
    b.add("scale-out", first, Trigger(0.0))  # stays until the end of the load phase
    # Once pod-0 has been processing for ~1.5 s (its threads commit every 500 ms): the
    # rebalance with it back is over and the standby 0_2 has read and checkpointed some
    # history, which the delay would starve (an empty stale checkpoint is harmless).
    settled = Trigger(1.0, "commits", count=6, timeout_s=10)
    b.add("delay-checkpoint", pod_name(0), settled, ms=b.rng.choice([1000, 1500]))
    b.add("scale-out", second, Trigger(1.0))  # right after the delay is in force
    b.add("delay-checkpoint", pod_name(0), Trigger(1.0, "contended", timeout_s=14), ms=0)
    # killed by 16 s at the latest: back within the session timeout, pod-1 would get its
    # tasks back without a rebalance, and it is restarted when the load phase ends
    b.add("kill", first, Trigger(1.0, "cleaned", timeout_s=15))
    return {"pods": 1, "threads": 2, "standbys": 1, "partitions": 3, "accounts": 400,
            "cleaner_delay_ms": 1500, "cleaner_interval_ms": 500}


def _kip_406(b: _Builder) -> dict[str, object]:
    """The global topic is truncated past pod-0's global checkpoint while it is down."""
    b.add("truncate-global", pod_name(0), Trigger(FIRST_FAULT_S + 4, "commits", count=4,
                                                   timeout_s=10))
    return {"pods": 1}


TARGETED: dict[str, Callable[[_Builder], dict[str, object]]] = {
    "KAFKA-20685": _kafka_20685,
    "KAFKA-7672": _kafka_7672,
    "KAFKA-8187": _kafka_8187,
    "KIP-406": _kip_406,
}

PROFILES = (*MIXES, *TARGETED)


def profile_config(profile: str) -> dict[str, object]:
    """The run settings a profile needs (pods, threads, ...), before any plan is drawn."""
    if profile in TARGETED:
        return TARGETED[profile](_Builder(0, profile, 1, 1, 0.0))
    return {}


def plan(seed: int, profile: str, pods: int, brokers: int, time_limit_s: float) -> Plan:
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; profiles: {', '.join(PROFILES)}")
    builder = _Builder(seed, profile, pods, brokers, time_limit_s)
    targeted = TARGETED.get(profile)
    config = targeted(builder) if targeted else _generic(builder, profile)
    return Plan(seed=seed, profile=profile, steps=tuple(builder.steps), config=config)
