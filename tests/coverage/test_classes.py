"""Each condition class is detected on a small synthetic history that has its moment and
not on a near miss that lacks it (pure logic: plain trace lines and nemesis ops)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from checker.coverage import CLASSES, coverage_of, coverage_section
from checker.coverage.facts import Facts, fault_ops

S = 1_000_000_000
T1 = "StreamThread-1"


def ev(t: float, pod: str, pid: int, event: str, thread: str = T1, **fields: Any) -> dict:
    return {"ts_ns": int(t * S), "pod": pod, "pid": pid, "thread": thread, "event": event,
            **fields}


def op(t: float, fault: str, target: str, phase: str = "start", **params: Any) -> dict:
    return {"index": 0, "time_ns": int(t * S), "process": "nemesis", "type": "info",
            "f": fault, "value": {"target": target, "params": params, "phase": phase}}


def facts(events: list[dict], ops: list[dict] = (), guarantee: str = "exactly_once_v2",
          publishes: list[float] = (), session_timeout_ms: int | None = 10_000) -> Facts:
    return Facts(events=list(events), faults=fault_ops(ops), guarantee=guarantee,
                 publishes=[int(t * S) for t in publishes],
                 session_timeout_ms=session_timeout_ms)


def count(name: str, f: Facts) -> int:
    return coverage_of(f)["classes"][name]["count"]


# -- zombie -----------------------------------------------------------------------------

ZOMBIE = [ev(1, "pod-0", 10, "task-running", task="0_1"),
          ev(14, "pod-1", 20, "task-running", task="0_1")]


def test_zombie_paused_past_session_and_task_still_elsewhere() -> None:
    f = facts(ZOMBIE, [op(2, "pause", "pod-0"), op(15, "pause", "pod-0", "end")])
    assert count("zombie", f) == 1


def test_zombie_of_a_task_resumed_after_a_rebalance() -> None:
    # Revoked and assigned back to its thread, the task resumes without a task-running.
    events = [ev(0.5, "pod-0", 10, "task-running", task="0_1"),
              ev(1, "pod-0", 10, "revoked", tasks=["0_1"]),
              ev(1.5, "pod-0", 10, "assigned", active=["0_1"], standby=[]),
              ev(14, "pod-1", 20, "task-running", task="0_1")]
    f = facts(events, [op(2, "pause", "pod-0"), op(15, "pause", "pod-0", "end")])
    assert count("zombie", f) == 1
    moved = [*events[:2], ev(1.5, "pod-0", 10, "assigned", active=[], standby=["0_1"]),
             events[3]]
    f = facts(moved, [op(2, "pause", "pod-0"), op(15, "pause", "pod-0", "end")])
    assert count("zombie", f) == 0


def test_no_zombie_when_the_task_left_the_other_pod_before_resume() -> None:
    events = [*ZOMBIE, ev(14.5, "pod-1", 20, "revoked", tasks=["0_1"])]
    f = facts(events, [op(2, "pause", "pod-0"), op(15, "pause", "pod-0", "end")])
    assert count("zombie", f) == 0


def test_no_zombie_when_the_pause_is_shorter_than_the_session() -> None:
    f = facts(ZOMBIE, [op(6, "pause", "pod-0"), op(15, "pause", "pod-0", "end")])
    assert count("zombie", f) == 0


# -- task returns -----------------------------------------------------------------------


def test_task_returns_to_the_same_live_process() -> None:
    events = [ev(1, "pod-0", 10, "task-running", task="0_2"),
              ev(5, "pod-2", 30, "task-running", task="0_2"),
              ev(9, "pod-0", 10, "task-running", task="0_2")]
    assert count("task-returns", facts(events)) == 1


def test_task_back_to_a_restarted_process_is_not_a_return() -> None:
    events = [ev(1, "pod-0", 10, "task-running", task="0_2"),
              ev(5, "pod-2", 30, "task-running", task="0_2"),
              ev(9, "pod-0", 11, "task-running", task="0_2")]
    assert count("task-returns", facts(events)) == 0


# -- restored then killed ---------------------------------------------------------------

RESTORED = [ev(1, "pod-0", 10, "task-init", task="0_0", kind="active", checkpoint=None),
            ev(2, "pod-0", 10, "restore-end", task="0_0", restored=40),
            ev(3, "pod-0", 10, "task-running", task="0_0")]


def test_restored_task_killed_while_running() -> None:
    assert count("restored-then-killed", facts(RESTORED, [op(5, "kill", "pod-0")])) == 1


def test_restored_from_empty_changelog_is_not_counted() -> None:
    events = [RESTORED[0], {**RESTORED[1], "restored": 0}, RESTORED[2]]
    assert count("restored-then-killed", facts(events, [op(5, "kill", "pod-0")])) == 0


def test_restored_task_revoked_before_the_kill_is_not_counted() -> None:
    events = [*RESTORED, ev(4, "pod-0", 10, "revoked", tasks=["0_0"])]
    assert count("restored-then-killed", facts(events, [op(5, "kill", "pod-0")])) == 0


# -- crash in / after a transaction ------------------------------------------------------


def test_crash_inside_an_open_transaction() -> None:
    events = [ev(1, "pod-0", 10, "txn-commit"), ev(1.5, "pod-0", 10, "txn-begin")]
    f = facts(events, [op(3, "kill", "pod-0")])
    assert count("crash-in-txn", f) == 1
    assert count("crash-after-commit", f) == 0


def test_crash_right_after_a_commit() -> None:
    events = [ev(1, "pod-0", 10, "txn-begin"), ev(2.9, "pod-0", 10, "txn-commit")]
    f = facts(events, [op(3, "kill", "pod-0")])
    assert count("crash-after-commit", f) == 1
    assert count("crash-in-txn", f) == 0


def test_truncate_global_kill_time_is_unknown_so_no_after_commit() -> None:
    events = [ev(1, "pod-0", 10, "task-running", task="0_0"), ev(2, "pod-0", 10, "txn-commit")]
    assert count("crash-after-commit", facts(events, [op(2.1, "truncate-global", "pod-0")])) == 0


def test_clean_stop_is_no_crash() -> None:
    events = [ev(1, "pod-0", 10, "txn-begin")]
    f = facts(events, [op(1.1, "stop", "pod-0")])
    assert count("crash-in-txn", f) == 0
    assert count("crash-after-commit", f) == 0


def test_truncate_global_crash_is_the_process_that_ran_tasks() -> None:
    # truncate-global's op is recorded after the restart: pid 11 already traced its start.
    events = [ev(1, "pod-0", 10, "task-running", task="0_0"), ev(2, "pod-0", 10, "txn-begin"),
              ev(4, "pod-0", 11, "client-state", thread="main", **{"from": "CREATED"})]
    f = facts(events, [op(5, "truncate-global", "pod-0")])
    assert count("crash-in-txn", f) == 1


# -- flush then abort -------------------------------------------------------------------


def test_flush_in_a_transaction_then_killed() -> None:
    events = [ev(1, "pod-0", 10, "txn-begin"),
              ev(1.2, "pod-0", 10, "memtable-flush", task="0_0", store="balances", in_txn=True)]
    assert count("flush-then-abort", facts(events, [op(2, "kill", "pod-0")])) == 1


def test_flush_in_a_transaction_then_aborted() -> None:
    events = [ev(1, "pod-0", 10, "txn-begin"),
              ev(1.2, "pod-0", 10, "memtable-flush", task="0_0", store="dedup", in_txn=True),
              ev(1.4, "pod-0", 10, "txn-abort")]
    assert count("flush-then-abort", facts(events)) == 1


def test_flush_in_a_transaction_that_committed_is_not_counted() -> None:
    events = [ev(1, "pod-0", 10, "txn-begin"),
              ev(1.2, "pod-0", 10, "memtable-flush", task="0_0", store="dedup", in_txn=True),
              ev(1.4, "pod-0", 10, "txn-commit"), ev(1.5, "pod-0", 10, "txn-begin")]
    assert count("flush-then-abort", facts(events, [op(2, "kill", "pod-0")])) == 0


# -- standby promoted -------------------------------------------------------------------

STANDBY = [ev(1, "pod-0", 10, "task-running", task="0_3"),
           ev(1, "pod-1", 20, "assigned", active=["0_1"], standby=["0_3"])]


def test_standby_promoted_after_the_active_pod_crashed() -> None:
    events = [*STANDBY, ev(15, "pod-1", 20, "task-running", task="0_3")]
    assert count("standby-promoted", facts(events, [op(3, "kill", "pod-0")])) == 1


def test_active_elsewhere_without_a_standby_is_no_promotion() -> None:
    events = [STANDBY[0], ev(1, "pod-1", 20, "assigned", active=["0_1"], standby=[]),
              ev(15, "pod-1", 20, "task-running", task="0_3")]
    assert count("standby-promoted", facts(events, [op(3, "kill", "pod-0")])) == 0


# -- moves ------------------------------------------------------------------------------


@pytest.mark.parametrize(("keep_volume", "checkpoint", "restored", "reached", "not_reached"), [
    (False, None, 100, "move-full-restore", "move-checkpoint-reuse"),  # restores fully
    (True, 99, 3, "move-checkpoint-reuse", "move-full-restore"),  # reuses the checkpoint
])
def test_a_move_restores_fully_or_reuses_its_checkpoint(
        keep_volume: bool, checkpoint: int | None, restored: int, reached: str,
        not_reached: str) -> None:
    events = [ev(1, "pod-0", 10, "txn-commit"),
              ev(4, "pod-0", 11, "task-init", task="0_0", kind="active", checkpoint=checkpoint),
              ev(5, "pod-0", 11, "restore-end", task="0_0", restored=restored)]
    f = facts(events, [op(3, "move", "pod-0", keep_volume=keep_volume)])
    assert count(reached, f) == 1
    assert count(not_reached, f) == 0


def test_move_with_volume_but_no_checkpoint_is_not_a_reuse() -> None:
    events = [ev(1, "pod-0", 10, "txn-commit"),
              ev(4, "pod-0", 11, "task-init", task="0_0", kind="active", checkpoint=None)]
    assert count("move-checkpoint-reuse",
                 facts(events, [op(3, "move", "pod-0", keep_volume=True)])) == 0


# -- global update, checkpoint in flight --------------------------------------------------

GLOBAL = [ev(5.5, "pod-0", 11, "global-restore-start", thread="global", from_offset=40,
             end_offset=45)]


def test_restart_right_after_a_global_update() -> None:
    assert count("restart-after-global-update", facts(GLOBAL, publishes=[1.0, 5.0])) == 1


def test_restart_long_after_the_last_global_update_is_not_counted() -> None:
    assert count("restart-after-global-update", facts(GLOBAL, publishes=[1.0, 3.0])) == 0


def test_rebalance_while_a_checkpoint_write_is_delayed() -> None:
    events = [ev(1, "pod-0", 10, "checkpoint-delay", task="0_0", delay_ms=1500, reason="close"),
              ev(2, "pod-1", 20, "assigned", active=["0_0"], standby=[])]
    assert count("rebalance-during-checkpoint", facts(events)) == 1


def test_delayed_global_checkpoint_is_not_counted() -> None:
    events = [ev(1, "pod-0", 10, "checkpoint-delay", thread="global", task="global",
                 delay_ms=1500, reason="commit"),
              ev(2, "pod-1", 20, "assigned", active=["0_0"], standby=[])]
    assert count("rebalance-during-checkpoint", facts(events)) == 0


def test_rebalance_after_the_delay_is_not_counted() -> None:
    events = [ev(1, "pod-0", 10, "checkpoint-delay", task="0_0", delay_ms=500, reason="close"),
              ev(2, "pod-1", 20, "assigned", active=["0_0"], standby=[])]
    assert count("rebalance-during-checkpoint", facts(events)) == 0


# -- power loss and network cuts (the platform's kinds in `all`) -------------------------


def _power_loss(t: float, names: int, files: int) -> dict:
    line = op(t, "power-loss", "pod-0")
    line["value"]["details"] = {"undone": {"names_undone": names, "files_rolled_back": files,
                                           "paths": ["/0_1/.checkpoint"] * (names + files)}}
    return line


RUNNING_0 = [ev(1, "pod-0", 10, "task-running", task="0_1"), ev(2, "pod-0", 10, "txn-begin")]


@pytest.mark.parametrize("names, files, hits", [(1, 0, 1), (0, 2, 1), (0, 0, 0)])
def test_power_loss_counts_when_it_took_unsynced_writes(names: int, files: int,
                                                        hits: int) -> None:
    f = facts(RUNNING_0, [_power_loss(3, names, files)])
    assert count("power-loss-unsynced", f) == hits
    assert count("crash-in-txn", f) == 1  # a power loss is a crash too, whatever it took


def test_power_loss_is_no_crash_right_after_a_commit() -> None:
    # Its op is recorded after the volume's roll-back, so its moment is not the kill's.
    events = [ev(1, "pod-0", 10, "txn-commit")]
    assert count("crash-after-commit", facts(events, [_power_loss(1.1, 1, 0)])) == 0


def test_cut_off_with_a_transaction_open() -> None:
    ops = [op(3, "partition", "pod-0"), op(8, "partition", "pod-0", phase="end")]
    assert count("cut-off-in-commit-or-rebalance", facts(RUNNING_0, ops)) == 1


@pytest.mark.parametrize("cut_s, hits", [(5, 1), (0.05, 0)])
def test_cut_off_at_least_once_when_a_commit_fell_due(cut_s: float, hits: int) -> None:
    events = [ev(1, "pod-0", 10, "commit")]
    ops = [op(3, "partition", "pod-0"), op(3 + cut_s, "partition", "pod-0", phase="end")]
    f = facts(events, ops, guarantee="at_least_once")
    f.config = {"commit_interval_ms": 100}
    assert count("cut-off-in-commit-or-rebalance", f) == hits


def test_cut_off_while_the_group_rebalances() -> None:
    events = [ev(1, "pod-0", 10, "txn-commit"),
              ev(5, "pod-1", 20, "assigned", active=["0_1"], standby=[])]
    ops = [op(3, "partition", "pod-0"), op(8, "partition", "pod-0", phase="end")]
    assert count("cut-off-in-commit-or-rebalance", facts(events, ops)) == 1


def test_cut_off_between_transactions_and_rebalances_is_not_counted() -> None:
    events = [ev(1, "pod-0", 10, "txn-commit"),
              ev(9, "pod-1", 20, "assigned", active=["0_1"], standby=[])]  # after the heal
    ops = [op(3, "partition", "pod-0"), op(8, "partition", "pod-0", phase="end"),
           op(3, "partition", "broker-1")]
    assert count("cut-off-in-commit-or-rebalance", facts(events, ops)) == 0


# -- guarantees and the section ----------------------------------------------------------


@pytest.mark.parametrize("guarantee, commit, reached",
                         [("exactly_once_v2", "txn-commit", "exactly-once"),
                          ("at_least_once", "commit", "at-least-once")])
def test_guarantee_classes(guarantee: str, commit: str, reached: str) -> None:
    doc = coverage_of(facts([ev(1, "pod-0", 10, commit)], guarantee=guarantee))
    assert [n for n in doc["reached"] if n.endswith("-once")] == [reached]


def test_section_from_a_run_folder(tmp_path: Path) -> None:
    pod = tmp_path / "pods" / "pod-0"
    pod.mkdir(parents=True)
    lines = [json.dumps(e) for e in [ev(1, "pod-0", 10, "txn-commit"),
                                     ev(1.5, "pod-0", 10, "txn-begin")]]
    (pod / "trace.jsonl").write_text("\n".join(lines) + "\n{torn")
    (tmp_path / "history.jsonl").write_text(json.dumps(op(3, "kill", "pod-0")) + "\n")
    (tmp_path / "run.json").write_text(json.dumps({"config": {"guarantee": "exactly_once_v2"}}))
    doc = coverage_section(tmp_path)
    entry = doc["classes"]["crash-in-txn"]
    assert entry["reached"] and entry["count"] == 1 and entry["first_s"] == 2.0
    assert [line.get("event") or line.get("f") for line in entry["evidence"]] == [
        "txn-begin", "kill"]
    assert set(doc["missed"]) <= {c.name for c in CLASSES if c.scope == "run"}


def test_section_of_a_missing_folder_is_empty_not_an_error(tmp_path: Path) -> None:
    doc = coverage_section(tmp_path / "nope")
    assert doc["reached"] == [] and "error" not in doc


# -- checkpoint-read-then-cleaned (KAFKA-8187's family) ---------------------------------

OFFSETS = {"ledger-app-balances-changelog-5": 143}
READ_THEN_CLEANED = [
    ev(34.0, "pod-0", 10, "checkpoint-read", task="0_5", offsets=OFFSETS),
    ev(40.4, "pod-0", 10, "cleaner-delete", thread="cleaner", task="0_5", age_s=24.0),
    ev(63.8, "pod-0", 10, "dir-locked", task="0_5"),
    ev(63.9, "pod-0", 10, "restore-start", task="0_5", store="balances", partition=5,
       from_offset=143, end_offset=198),
]


def test_a_checkpoint_read_then_its_directory_cleaned_before_the_restore() -> None:
    assert count("checkpoint-read-then-cleaned", facts(READ_THEN_CLEANED)) == 1


def test_a_restore_before_the_cleaning_is_not_counted() -> None:
    used_first = [READ_THEN_CLEANED[0], {**READ_THEN_CLEANED[3], "ts_ns": 35 * S},
                  READ_THEN_CLEANED[1]]
    assert count("checkpoint-read-then-cleaned", facts(used_first)) == 0


def test_an_empty_checkpoint_or_another_process_is_not_counted() -> None:
    empty = [{**READ_THEN_CLEANED[0], "offsets": {}}, *READ_THEN_CLEANED[1:]]
    assert count("checkpoint-read-then-cleaned", facts(empty)) == 0
    elsewhere = [READ_THEN_CLEANED[0], {**READ_THEN_CLEANED[1], "pid": 11}]
    assert count("checkpoint-read-then-cleaned", facts(elsewhere)) == 0


def test_a_read_made_moot_by_a_fresh_read_is_not_counted() -> None:
    """Kafka Streams 2.6 on: the lock first, then the read, which finds no file (and a read
    of offsets for the rebalance's lag report, which no restore follows)."""
    lock_first = [*READ_THEN_CLEANED[:3],
                  ev(63.85, "pod-0", 10, "checkpoint-read", task="0_5", offsets={}),
                  {**READ_THEN_CLEANED[3], "from_offset": 0}]
    assert count("checkpoint-read-then-cleaned", facts(lock_first)) == 0
