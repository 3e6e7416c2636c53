"""The clock fault without a broker: its place in `all` and its scenario's plan, the
coverage class it aims at on synthetic histories, and the pods' traces put back on the
harness's clock after it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from checker.coverage import coverage_of
from checker.coverage.facts import Facts, fault_ops
from faults.clock import Span, settle_traces, spans, true_times
from faults.plan import plan

S = 1_000_000_000
T1 = "StreamThread-1"
CLASS = "clock-jump-in-txn-or-session"


def clock_op(t: float, pod: str, phase: str, **details: Any) -> dict[str, Any]:
    return {"index": 0, "time_ns": int(t * S), "process": "nemesis", "type": "info",
            "f": "clock", "value": {"target": pod, "params": {}, "phase": phase,
                                    "details": {"written_ns": int(t * S), **details}}}


def ev(t: float, event: str, pid: int = 10, **fields: Any) -> dict[str, Any]:
    return {"ts_ns": int(t * S), "pod": "pod-0", "pid": pid, "thread": T1, "event": event,
            **fields}


def hits(events: list[dict[str, Any]], ops: list[dict[str, Any]]) -> int:
    f = Facts(events=events, faults=fault_ops(ops), guarantee="exactly_once_v2",
              session_timeout_ms=10_000)
    return int(coverage_of(f)["classes"][CLASS]["count"])


# -- the plans ---------------------------------------------------------------------------

def test_the_scenario_jumps_in_a_transaction_past_the_session_and_skews() -> None:
    steps = plan(1, "clock-jump", 2, 1, 60.0).steps
    assert [(s.fault, s.target, s.params) for s in steps] == [
        ("clock", "pod-0", {"jump_s": 30.0}), ("clock", "pod-1", {"jump_s": -30.0}),
        ("clock", "pod-0", {"rate": 3.0})]
    assert steps[0].trigger.condition == "commits"  # right after a commit: in a transaction
    assert steps[1].heal_after_s is not None and steps[1].heal_after_s > 10  # the session


def test_all_draws_the_clock_where_the_platform_offers_it_and_not_elsewhere() -> None:
    drawn = {s.fault for seed in range(12)
             for s in plan(seed, "all", 2, 1, 60.0, platform_kinds={"clock"}).steps}
    assert "clock" in drawn
    assert not any(s.fault == "clock" for seed in range(12)
                   for s in plan(seed, "all", 2, 1, 60.0).steps)


# -- the coverage class ------------------------------------------------------------------

def test_a_jump_inside_an_open_transaction_counts() -> None:
    events = [ev(1, "assigned", active=["0_1"]), ev(2, "txn-begin")]
    assert hits(events, [clock_op(3, "pod-0", "start", jump_s=5.0)]) == 1


def test_a_small_jump_after_the_commit_does_not() -> None:
    events = [ev(1, "assigned", active=["0_1"]), ev(2, "txn-begin"), ev(2.5, "txn-commit")]
    assert hits(events, [clock_op(3, "pod-0", "start", jump_s=5.0)]) == 0


def test_a_jump_past_the_session_timeout_of_a_member_counts_and_so_does_its_heal() -> None:
    events = [ev(1, "assigned", active=["0_1"]), ev(2, "txn-begin"), ev(2.5, "txn-commit")]
    ops = [clock_op(3, "pod-0", "start", jump_s=-30.0),
           clock_op(9, "pod-0", "end", offset_s=-30.0)]
    assert hits(events, ops) == 2


def test_a_jump_past_the_session_of_a_process_running_a_task_counts() -> None:
    """Kafka Streams traces neither transactions' beginnings nor assignments."""
    events = [ev(1, "task-running", task="0_1"), ev(2.5, "txn-commit")]
    assert hits(events, [clock_op(3, "pod-0", "start", jump_s=30.0)]) == 1


def test_a_skew_starts_with_no_jump() -> None:
    events = [ev(1, "assigned", active=["0_1"]), ev(2.5, "txn-commit")]
    assert hits(events, [clock_op(3, "pod-0", "start", jump_s=0.0, rate=3.0)]) == 0


# -- the traces back on the harness's clock ----------------------------------------------

def test_a_jump_ahead_and_its_heal_map_back_in_file_order() -> None:
    span = [Span(10 * S, 20 * S, 30 * S, 1.0)]
    # True times 9, 11, 19, 21 stamped by a clock 30 s ahead between 10 and 20 s.
    assert true_times([9 * S, 41 * S, 49 * S, 21 * S], span) == [9 * S, 11 * S, 19 * S, 21 * S]


def test_a_jump_behind_maps_back_though_its_stamps_repeat_earlier_ones() -> None:
    span = [Span(10 * S, 40 * S, -30 * S, 1.0)]
    stamps = [5 * S, 9 * S, -19 * S, 8 * S, 41 * S]  # true 5, 9, 11, 38, 41
    assert true_times(stamps, span) == [5 * S, 9 * S, 11 * S, 38 * S, 41 * S]


def test_a_skew_maps_back_through_its_rate() -> None:
    span = [Span(10 * S, 20 * S, 0, 3.0)]
    # True 11 and 19.9 on a clock running 3x from 10 s (13 and 39.7), then 20.3 healed.
    stamps = [13 * S, int(39.7 * S), int(20.3 * S)]
    assert [round(t / S, 1) for t in true_times(stamps, span)] == [11.0, 19.9, 20.3]


def test_settle_traces_rewrites_the_faulted_pod_once(tmp_path: Path) -> None:
    (tmp_path / "pods" / "pod-0").mkdir(parents=True)
    ops = [clock_op(10, "pod-0", "start", jump_s=30.0, rate=1.0),
           clock_op(20, "pod-0", "end", offset_s=30.0)]
    (tmp_path / "history.jsonl").write_text("".join(json.dumps(o) + "\n" for o in ops))
    trace = tmp_path / "pods" / "pod-0" / "trace.jsonl"
    trace.write_text("".join(json.dumps(ev(t, "commit")) + "\n" for t in (9, 41, 21))
                     + '{"torn"')
    assert set(spans(ops)) == {"pod-0"}
    assert settle_traces(tmp_path) == 1
    assert settle_traces(tmp_path) == 0  # already on the harness's clock
    lines = trace.read_text().splitlines()
    assert [json.loads(line)["ts_ns"] for line in lines[:3]] == [9 * S, 11 * S, 21 * S]
    assert json.loads(lines[1])["pod_ts_ns"] == 41 * S
    assert lines[3] == '{"torn"'
