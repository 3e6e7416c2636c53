"""Windows that follow the system: a heal that waits for a condition (`heal_when`), a
trigger that reads another pod's trace (`Trigger.pod`), and the conditions the targeted
profiles and `all` wait for (`all-flushed-in-txn`, `cleaner-deleted`,
`standby-elsewhere`, `flush-traced-in-txn`). A clock moved by hand and trace files
written by the test: no thread, no sleep."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from fake_clock import FakeClock as Clock
from test_nemesis import RecordingPlatform

from faults.builder import QUIET_TAIL_S
from faults.context import FaultContext
from faults.model import Plan, Step, Trigger
from faults.nemesis import Nemesis
from faults.observe import TraceWatcher
from faults.plan import plan
from harness.shrink.page import step_rows


def _nemesis(platform: RecordingPlatform, clock: Clock, *steps: Step) -> Nemesis:
    nemesis = Nemesis(Plan(1, "t", steps), FaultContext(platform=platform, application_id="app"),
                      TraceWatcher(platform, "app"), lambda *op: None,
                      monotonic=clock.monotonic, wall_ns=clock.wall_ns)
    nemesis.begin()
    return nemesis


def _trace(platform: RecordingPlatform, pod: str, clock: Clock, **event: Any) -> None:
    path = platform.trace_path(pod)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as out:
        out.write(json.dumps({"ts_ns": clock.wall_ns(), "pid": 1, **event}) + "\n")


def _advance(nemesis: Nemesis, clock: Clock, seconds: float) -> None:
    clock.now += seconds
    nemesis.tick()


def _spare_healed_when_cleaned(
    tmp_path: Path, timeout_s: float
) -> tuple[RecordingPlatform, Clock, Nemesis]:
    """pod-1 scaled out at 1 s, scaled in once pod-0's cleaner deleted (after a 2 s hold)."""
    platform, clock = RecordingPlatform(tmp_path, ["pod-0"]), Clock()
    heal = Trigger(2.0, "cleaner-deleted", timeout_s=timeout_s, pod="pod-0")
    nemesis = _nemesis(platform, clock, Step(0, "scale-out", "pod-1", Trigger(1.0),
                                             heal_when=heal))
    return platform, clock, nemesis


def test_a_heal_waits_for_its_condition_on_another_pod(tmp_path: Path) -> None:
    platform, clock, nemesis = _spare_healed_when_cleaned(tmp_path, timeout_s=25)
    _advance(nemesis, clock, 1.0)
    assert platform.calls == [("add", "pod-1")]
    _trace(platform, "pod-0", clock, event="cleaner-delete", task="0_1")  # before the hold
    _advance(nemesis, clock, 1.0)
    _trace(platform, "pod-1", clock, event="cleaner-delete", task="0_1")  # not pod-0's
    for _ in range(5):
        _advance(nemesis, clock, 1.0)
    assert platform.calls == [("add", "pod-1")], "no heal before pod-0's cleaner deleted"
    _trace(platform, "pod-0", clock, event="cleaner-delete", task="0_0")
    _advance(nemesis, clock, 0.1)
    assert platform.calls == [("add", "pod-1"), ("stop", "pod-1")]
    outcome = nemesis.outcomes[0]
    assert outcome.status == "healed" and outcome.heal_condition_met is True
    assert outcome.healed_at_s == pytest.approx(7.1)
    assert outcome.to_json()["heal_condition_met"] is True


def test_a_heal_whose_condition_never_holds_comes_at_its_timeout(tmp_path: Path) -> None:
    platform, clock, nemesis = _spare_healed_when_cleaned(tmp_path, timeout_s=5)
    _advance(nemesis, clock, 1.0)
    _advance(nemesis, clock, 6.9)
    assert platform.calls == [("add", "pod-1")]
    assert nemesis.tick(), "a heal still to come keeps the nemesis going"
    _advance(nemesis, clock, 0.1)  # applied at 1 s + hold 2 s + timeout 5 s
    assert platform.calls == [("add", "pod-1"), ("stop", "pod-1")]
    assert nemesis.outcomes[0].heal_condition_met is False
    assert not nemesis.tick()


def test_a_trigger_reads_the_pod_it_names_not_its_target(tmp_path: Path) -> None:
    platform, clock = RecordingPlatform(tmp_path, ["pod-0", "pod-1"]), Clock()
    trigger = Trigger(1.0, "commits", count=2, timeout_s=30, pod="pod-1")
    nemesis = _nemesis(platform, clock, Step(0, "kill", "pod-0", trigger, heal_after_s=1))
    _advance(nemesis, clock, 1.0)
    for _ in range(3):
        _trace(platform, "pod-0", clock, event="txn-commit")
    _trace(platform, "pod-1", clock, event="txn-commit")
    _advance(nemesis, clock, 1.0)
    assert platform.calls == [], "pod-0's commits do not count, pod-1 has one"
    _trace(platform, "pod-1", clock, event="txn-commit")
    _advance(nemesis, clock, 0.1)
    assert platform.calls == [("kill", "pod-0")]
    assert nemesis.outcomes[0].condition_met is True


def _store(task_dir: Path, name: str, sst_mtime_ns: int | None) -> None:
    store = task_dir / name
    store.mkdir(parents=True)
    (store / "CURRENT").write_text("MANIFEST-000001\n")
    if sst_mtime_ns is not None:
        sst = store / "000007.sst"
        sst.write_bytes(b"x")
        os.utime(sst, ns=(sst_mtime_ns, sst_mtime_ns))


def test_all_flushed_in_txn_needs_every_store_flushed_since_the_last_commit(
    tmp_path: Path,
) -> None:
    platform = RecordingPlatform(tmp_path, ["pod-0"])
    watcher = TraceWatcher(platform, "app")
    commit_ns = 2_000_000_000_000_000_000
    events = [{"event": "task-running", "task": "0_0", "ts_ns": commit_ns - 10},
              {"event": "txn-commit", "ts_ns": commit_ns}]
    path = platform.trace_path("pod-0")
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps({"pid": 1, **e}) + "\n" for e in events))
    task_dir = platform.volume("pod-0") / "app" / "0_0"
    _store(task_dir, "balances", commit_ns + 5)  # flushed in the open transaction
    _store(task_dir, "dedup", commit_ns - 5)  # flushed before the commit: committed data
    assert watcher.holds("flushed-in-txn", "pod-0", 0, 1)
    assert not watcher.holds("all-flushed-in-txn", "pod-0", 0, 1)
    os.utime(task_dir / "dedup" / "000007.sst", ns=(commit_ns + 9, commit_ns + 9))
    assert watcher.holds("all-flushed-in-txn", "pod-0", 0, 1)
    with path.open("a") as out:  # the transaction commits: nothing open is persisted
        out.write(json.dumps({"pid": 1, "event": "txn-commit", "ts_ns": commit_ns + 20})
                  + "\n")
    assert not watcher.holds("all-flushed-in-txn", "pod-0", 0, 1)


def test_standby_elsewhere_needs_a_live_pod_whose_latest_assignment_holds_the_standby(
    tmp_path: Path,
) -> None:
    """`all`'s crash waits for it: a task running in the crashed pod can only be promoted
    by a standby in a pod that runs, is not paused, and still holds that standby."""
    platform, clock = RecordingPlatform(tmp_path, ["pod-0", "pod-1"]), Clock()
    watcher = TraceWatcher(platform, "app")
    _trace(platform, "pod-0", clock, event="assigned", thread="T1", active=["0_0"], standby=[])
    _trace(platform, "pod-0", clock, event="task-running", task="0_0")
    assert not watcher.holds("standby-elsewhere", "pod-0", 0, 1), "pod-1 has no standby yet"
    _trace(platform, "pod-1", clock, event="assigned", thread="T1", active=["0_1"],
           standby=["0_0"])
    assert watcher.holds("standby-elsewhere", "pod-0", 0, 1)
    platform.pod("pod-1").paused = True
    assert not watcher.holds("standby-elsewhere", "pod-0", 0, 1), "a paused pod promotes nothing"
    platform.pod("pod-1").paused = False
    _trace(platform, "pod-1", clock, event="assigned", thread="T1", active=["0_1"], standby=[])
    assert not watcher.holds("standby-elsewhere", "pod-0", 0, 1), "the standby moved away"
    _trace(platform, "pod-1", clock, event="assigned", thread="T2", active=[], standby=["0_0"])
    assert watcher.holds("standby-elsewhere", "pod-0", 0, 1), "another thread holds it"
    _trace(platform, "pod-0", clock, event="revoked", thread="T1", tasks=["0_0"])
    assert not watcher.holds("standby-elsewhere", "pod-0", 0, 1), "nothing runs in pod-0"


def test_flush_traced_in_txn_holds_until_that_thread_commits(tmp_path: Path) -> None:
    """`all`'s kill after a flush: a memtable flush traced inside a transaction, on a
    thread that has not committed or aborted since, in the pod's current process."""
    platform, clock = RecordingPlatform(tmp_path, ["pod-0"]), Clock()
    watcher = TraceWatcher(platform, "app")

    def holds() -> bool:
        return watcher.holds("flush-traced-in-txn", "pod-0", 0, 1)

    _trace(platform, "pod-0", clock, event="memtable-flush", thread="T1", in_txn=False)
    assert not holds(), "a flush outside a transaction persists nothing to abort"
    _trace(platform, "pod-0", clock, event="memtable-flush", thread="T1", in_txn=True)
    assert holds()
    _trace(platform, "pod-0", clock, event="txn-commit", thread="T2")
    assert holds(), "another thread's commit leaves T1's transaction open"
    _trace(platform, "pod-0", clock, event="txn-commit", thread="T1")
    assert not holds(), "committed: nothing flushed is aborted by a crash now"
    _trace(platform, "pod-0", clock, event="memtable-flush", thread="T1", in_txn=True)
    with platform.trace_path("pod-0").open("a") as out:  # a new process of the pod
        out.write(json.dumps({"ts_ns": clock.wall_ns(), "pid": 2, "event": "txn-begin",
                              "thread": "T1"}) + "\n")
    assert not holds(), "the flush was the previous process's"


def test_running_since_needs_a_running_state_traced_after_the_mark(tmp_path: Path) -> None:
    """The drain waits for a pod restarted at heal to trace RUNNING again: the state its
    killed process traced before the heal does not count."""
    platform, clock = RecordingPlatform(tmp_path, ["pod-0"]), Clock()
    watcher = TraceWatcher(platform, "app")
    _trace(platform, "pod-0", clock, event="client-state", to="RUNNING")
    clock.now += 1
    healed_ns = clock.wall_ns()
    assert not watcher.running_since("pod-0", healed_ns), "the killed process's RUNNING"
    _trace(platform, "pod-0", clock, event="client-state", to="REBALANCING")
    assert not watcher.running_since("pod-0", healed_ns)
    _trace(platform, "pod-0", clock, event="client-state", to="RUNNING")
    assert watcher.running_since("pod-0", healed_ns)


def test_optional_fields_round_trip_and_are_left_out_when_unset() -> None:
    plain = Step(0, "kill", "pod-0", Trigger(1.0), heal_after_s=2.0)
    assert "heal_when" not in plain.to_json() and "pod" not in plain.to_json()["trigger"]
    aimed = Step(1, "scale-out", "pod-1", Trigger(1.0, "commits", pod="pod-2"),
                 heal_when=Trigger(2.0, "cleaner-deleted", pod="pod-0"))
    assert Step.from_json(json.loads(json.dumps(aimed.to_json()))) == aimed
    assert Step.from_json(plain.to_json()) == plain
    with pytest.raises(ValueError, match="not both"):
        Step(2, "kill", "pod-0", Trigger(1.0), heal_after_s=1.0, heal_when=Trigger(1.0))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_targeted_windows_follow_the_system(seed: int) -> None:
    scale_outs = plan(seed, "KAFKA-7672", 1, 1, 30.0).steps
    assert scale_outs and all(
        s.fault == "scale-out" and s.heal_after_s is None and s.heal_when is not None
        and s.heal_when.condition == "cleaner-deleted" and s.heal_when.pod == "pod-0"
        for s in scale_outs)
    kills = plan(seed, "eos-no-corruption-wipe", 1, 1, 30.0).steps
    assert kills and all(s.trigger.condition == "all-flushed-in-txn" for s in kills)
    # the first kill may wait until the quiet tail: a slow restart does not cut it short
    assert kills[0].trigger.at_s + kills[0].trigger.timeout_s == 30.0 - QUIET_TAIL_S
    steps = plan(seed, "KAFKA-8187", 1, 1, 60.0).steps
    slow = steps[1]
    assert (slow.fault, slow.trigger.condition, slow.trigger.pod) == (
        "delay-checkpoint", "commits", "pod-1")
    # each wait lasts until the kills' deadline, 16 s before the end of the load
    assert all(s.trigger.at_s + s.trigger.timeout_s == pytest.approx(44.0)
               for s in steps if s.trigger.condition is not None)


def test_the_shrink_page_says_when_a_step_heals() -> None:
    step = Step(0, "scale-out", "pod-1", Trigger(6.0),
                heal_when=Trigger(2.0, "cleaner-deleted", timeout_s=25, pod="pod-0"))
    (row,) = step_rows({"original": {"steps": [step.to_json()]}, "shrunk": None})
    assert row["before"] == "at 6s, heal 2s on, once cleaner-deleted on pod-0 (timeout 25s)"


def test_newest_segment_flushed_needs_the_last_flush_to_be_the_newest_segments_own(
    tmp_path: Path,
) -> None:
    """`newest-segment-flushed` (the segment-flush-skew profile): the pod's last data flush
    filled up in the newest segment of a windowed store that has an older one; a flush of
    the offsets family, a commit's flush, another process's or an older segment's do not
    count."""
    platform = RecordingPlatform(tmp_path, ["pod-0"])
    watcher = TraceWatcher(platform, "app")
    path = platform.trace_path("pod-0")
    path.parent.mkdir(parents=True)

    def flush(ts: int, segment: str | None, reason: str = "WRITE_BUFFER_FULL",
              cf: str = "keyValueWithTimestamp", pid: int = 1) -> None:
        line = {"pid": pid, "ts_ns": ts, "event": "store-flush", "task": "0_0",
                "store": "windows", "segment": segment, "reason": reason, "cf": cf}
        with path.open("a") as out:
            out.write(json.dumps(line) + "\n")

    def holds() -> bool:
        return watcher.holds("newest-segment-flushed", "pod-0", 0, 1)

    flush(1, "windows.4000")
    assert not holds()  # one segment only: nothing older to lose
    flush(2, "windows.2000")
    assert not holds()  # the older one flushed last
    flush(3, "windows.4000", cf="offsets")
    assert not holds()  # the offsets family does not count: the older one is still last
    flush(4, "windows.4000")
    assert holds()
    flush(5, "windows.4000", reason="MANUAL_FLUSH")
    assert not holds()  # a commit's flush: every segment flushed
    flush(6, "windows.6000")
    assert holds()  # a newer segment rolled in and filled up
    flush(7, None, cf="default")  # a key-value store's flush is not a segment's
    assert holds()
    flush(8, "windows.6000", pid=2)
    assert not holds()  # a new process: its own flushes only, one segment so far
