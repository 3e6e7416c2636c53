"""The `eos-no-corruption-wipe` scenario: its switch, its plan, what a catch shows."""

from __future__ import annotations

from common.guarantees import EXACTLY_ONCE_V2
from faults.builder import QUIET_TAIL_S, Builder
from faults.model import ProfileSettings, Trigger, pod_name
from faults.scenarios.scenario import Scenario


def plan(b: Builder) -> ProfileSettings:
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
    return {"pods": 1, "threads": 1, "partitions": 1, "guarantee": EXACTLY_ONCE_V2,
            "rate": 300.0, "commit_interval_ms": 8000, "write_buffer_bytes": 8192}


SCENARIO = Scenario("eos-no-corruption-wipe", plan, switches=("eos-no-corruption-wipe",), order=4)
