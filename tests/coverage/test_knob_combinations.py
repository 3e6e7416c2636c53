"""Knob combinations (checker/coverage/knobs.py): each is reached on a small synthetic run
that has it and not on a near miss; they are of scope `knobs`, never a run's `missed`;
a run folder's settings come from run.json, an old one's read as before the knobs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from checker.coverage import CLASSES, coverage_of, coverage_section
from checker.coverage.facts import Facts, fault_ops
from checker.coverage.knobs import KNOB_CLASSES
from harness.report.coverage import coverage_rows, coverage_table

S = 1_000_000_000
EOS, ALOS = "exactly_once_v2", "at_least_once"


def ev(t: float, event: str, pod: str = "pod-0", pid: int = 10, **fields: Any) -> dict:
    return {"ts_ns": int(t * S), "pod": pod, "pid": pid, "thread": "StreamThread-1",
            "event": event, **fields}


def op(t: float, fault: str, target: str, phase: str) -> dict:
    return {"index": 0, "time_ns": int(t * S), "process": "nemesis", "type": "info",
            "f": fault, "value": {"target": target, "params": {}, "phase": phase}}


def reached(config: dict[str, Any], events: list[dict] = (), ops: list[dict] = (),
            guarantee: str = EOS) -> set[str]:
    f = Facts(events=[ev(0, "client-state"), *events], faults=fault_ops(ops),
              guarantee=guarantee, config=config)
    doc = coverage_of(f)
    assert not set(doc["missed"]) & {c.name for c in KNOB_CLASSES}
    return {n for n in doc["reached"] if n in {c.name for c in KNOB_CLASSES}}


def test_the_combinations_are_classes_of_scope_knobs() -> None:
    names = [c.name for c in CLASSES]
    assert len(names) == len(set(names))
    assert {c.scope for c in KNOB_CLASSES} == {"knobs"}
    assert all(c in CLASSES for c in KNOB_CLASSES)


@pytest.mark.parametrize(("config", "guarantee", "want", "not_want"), [
    ({"session_timeout_ms": 45_000, "transaction_timeout_ms": 5000}, EOS,
     {"session-over-txn"}, {"txn-over-session"}),
    ({"session_timeout_ms": 6000, "transaction_timeout_ms": 60_000}, EOS,
     {"txn-over-session"}, {"session-over-txn"}),
    # before the knobs, both were 10 s; at-least-once has no transactions
    ({}, EOS, set(), {"session-over-txn", "txn-over-session"}),
    ({"session_timeout_ms": 45_000, "transaction_timeout_ms": 5000}, ALOS,
     set(), {"session-over-txn"}),
    ({"threads": 1}, EOS, {"single-thread"}, {"threads-over-tasks"}),
    ({"threads": 4, "pods": 2, "partitions": 6}, EOS, {"threads-over-tasks"},
     {"single-thread"}),
    ({"standbys": 2, "pods": 2}, EOS, {"standbys-unplaceable"}, set()),
    ({"standbys": 1, "pods": 2}, EOS, set(), {"standbys-unplaceable"}),
    ({"commit_interval_ms": 30_000, "session_timeout_ms": 10_000}, ALOS,
     {"commit-over-session"}, set()),
    ({"commit_interval_ms": 2000, "session_timeout_ms": 10_000}, EOS,
     set(), {"commit-over-session"}),
])
def test_combinations_of_settings(config: dict[str, Any], guarantee: str, want: set[str],
                                  not_want: set[str]) -> None:
    got = reached(config, guarantee=guarantee)
    assert want <= got and not (not_want & got), got


def test_a_pause_between_the_two_timeouts() -> None:
    config = {"session_timeout_ms": 45_000, "transaction_timeout_ms": 10_000}
    between = [op(10, "pause", "pod-0", "start"), op(28, "pause", "pod-0", "end")]
    assert "pause-between-timeouts" in reached(config, ops=between)
    short = [op(10, "pause", "pod-0", "start"), op(15, "pause", "pod-0", "end")]
    assert "pause-between-timeouts" not in reached(config, ops=short)
    assert "pause-between-timeouts" not in reached({}, ops=between)  # 10 s and 10 s
    assert "pause-between-timeouts" not in reached(config, ops=between, guarantee=ALOS)


def test_at_least_once_with_a_standby_assigned() -> None:
    standby = [ev(2, "assigned", active=["0_0"], standby=["0_1"])]
    assert "alos-standbys" in reached({"standbys": 1}, standby, guarantee=ALOS)
    assert "alos-standbys" not in reached({"standbys": 1}, standby, guarantee=EOS)
    none = [ev(2, "assigned", active=["0_0"], standby=[])]
    assert "alos-standbys" not in reached({"standbys": 1}, none, guarantee=ALOS)


def test_a_restoration_longer_than_one_poll() -> None:
    restore = [ev(3, "restore-start", task="0_1", from_offset=0, end_offset=150)]
    assert "poll-below-restore" in reached({"restore_max_poll_records": 100}, restore)
    assert "poll-below-restore" not in reached({"restore_max_poll_records": 1000}, restore)
    assert "poll-below-restore" not in reached({}, restore)  # the worker's 2000 before


def test_the_cleaner_deleting_during_the_run() -> None:
    deleted = [ev(30, "cleaner-delete", task="0_1", age_s=1.2)]
    assert "cleaner-in-run" in reached({"cleaner_delay_ms": 1000}, deleted)
    assert "cleaner-in-run" not in reached({"cleaner_delay_ms": 1000})


def test_a_run_folder_gives_its_settings_and_the_report_names_them(tmp_path: Path) -> None:
    run = tmp_path / "20261126T000000-all-s4"
    (run / "pods" / "pod-0").mkdir(parents=True)
    (run / "pods" / "pod-0" / "trace.jsonl").write_text(json.dumps(ev(1, "commit")) + "\n")
    config = {"profile": "all", "guarantee": EOS, "session_timeout_ms": 45_000,
              "transaction_timeout_ms": 5000, "threads": 1}
    (run / "run.json").write_text(json.dumps({"profile": "all", "config": config}))
    section = coverage_section(run)
    assert {"session-over-txn", "single-thread"} <= set(section["reached"])
    rows = {r.name: r for r in coverage_rows(section and {"coverage": section}, None)}
    assert rows["session-over-txn"].evidence == [
        "run.json config: session_timeout_ms=45000, transaction_timeout_ms=5000"]
    (run / "results.json").write_text(json.dumps({"coverage": section}))
    table = coverage_table([run])  # what a nightly's coverage.md counts, per profile
    assert table.cell("session-over-txn", "all") == "1/1"
    assert table.cell("txn-over-session", "all") == "0/1"
