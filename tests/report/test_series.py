"""The timeline's numbers: fault bands from nemesis ops, throughput, lag, commits."""

from __future__ import annotations

from typing import Any

from harness.report.charts import timeline_figure
from harness.report.series import build_timeline, fault_bands, partition_of

S = 10**9


def _nemesis(t: float, f: str, target: str, phase: str) -> dict[str, Any]:
    return {"time_ns": int(t * S), "process": "nemesis", "type": "info", "f": f,
            "value": {"target": target, "params": {}, "phase": phase}}


def _ack(t: float, p: int, o: int) -> dict[str, Any]:
    return {"time_ns": int(t * S), "process": "client-0", "type": "ok", "f": "send",
            "value": {"event_id": f"e{o}", "partition": p, "offset": o}}


def test_bands_pair_start_and_end_per_target() -> None:
    ops = [_nemesis(1, "pause", "pod-0", "start"), _nemesis(2, "kill", "pod-1", "start"),
           _nemesis(2.5, "kill", "pod-1", "end"), _nemesis(4, "pause", "pod-0", "end"),
           _nemesis(5, "kill-broker", "broker-1", "start")]
    bands = fault_bands(ops, 0, end_s=9.0)
    got = [(b.target, b.fault, b.start_s, b.end_s, b.healed) for b in bands]
    assert got == [("pod-0", "pause", 1, 4, True), ("pod-1", "kill", 2, 2.5, True),
                   ("broker-1", "kill-broker", 5, 9.0, False)]


def test_commit_keys_name_partitions() -> None:
    assert [partition_of(k) for k in (3, "3", "ledger-input-12", "x")] == [3, 3, 12, None]


def test_throughput_lag_and_commits() -> None:
    # 10 acks/s for 3 s over two partitions; times are relative to the first op (0.1 s).
    ops = [_ack(0.1 + i * 0.1, i % 2, i // 2) for i in range(30)]
    commits = {"pod-0": [
        {"event": "txn-commit", "ts_ns": int(1.6 * S), "offsets": {"0": 5, "1": 5}},
        {"event": "txn-commit", "ts_ns": int(2.95 * S), "offsets": {"0": 15, "1": 15}},
    ]}
    tl = build_timeline(ops, commits, {})
    assert tl is not None and tl.bin_s == 1.0 and len(tl.bins) == 3
    assert tl.acks == [10.0, 10.0, 10.0]
    # End of bin 0: 10 acked, 0 committed; bin 1: 20 - 10; the last bin: 30 - 30.
    assert tl.lag == [10, 10, 0]
    assert tl.commits == {"pod-0": [0.0, 1.0, 1.0]}
    assert tl.band_source == "plan.json" and tl.bands == []


def test_plan_is_the_fallback_for_bands() -> None:
    plan = {"steps": [{"fault": "move", "target": "pod-2", "applied_at_s": 3,
                       "healed_at_s": None}, {"fault": "bad", "applied_at_s": "x"}]}
    tl = build_timeline([_ack(0, 0, 0), _ack(10, 0, 1)], {}, plan)
    assert tl is not None and tl.lag is None
    assert [(b.target, b.start_s, b.end_s, b.healed) for b in tl.bands] == [
        ("pod-2", 3.0, 10.0, False)]


def test_nothing_to_plot() -> None:
    assert build_timeline([{"f": "send"}], {"pod-0": []}, {}) is None


def test_pod_exits_and_restarts_are_on_the_timeline_with_their_cause() -> None:
    ops = [
        _ack(0, 0, 0),
        {"process": "harness", "type": "info", "f": "pod-exited", "time_ns": 2_000_000_000,
         "value": {"target": "pod-1", "cause": "nemesis-kill", "signal": "SIGKILL"}},
        {"process": "harness", "type": "info", "f": "pod-restarted", "time_ns": 3_000_000_000,
         "value": {"target": "pod-1", "restarts": 1, "backoff_s": 1.0}},
        _ack(5, 0, 1),
    ]
    tl = build_timeline(ops, {}, {})
    assert tl is not None
    assert [(e.target, e.what, e.at_s) for e in tl.pod_events] == [
        ("pod-1", "pod-exited", 2.0), ("pod-1", "pod-restarted", 3.0)]
    assert tl.pod_events[0].text == "cause nemesis-kill, signal SIGKILL"
    fig = timeline_figure(tl, ["pod-0", "pod-1"])
    assert {t.name for t in fig.data} >= {"exited", "restarted"}


def test_commit_keys_int_refuses_are_not_partitions() -> None:
    # Found by test_corrupt_files_never_crash: "\x1e6" passed str.isdigit after strip()
    # and int() raised, so the whole report fell back to its error page.
    assert partition_of("\x1e6") == 6  # stripped first, then given to int()
    assert partition_of("²") is None
    assert partition_of(" 7 ") == 7 and partition_of("-1") == -1


def test_each_fault_is_shaded_on_every_row_of_the_timeline() -> None:
    ops = [_ack(0, 0, 0), _nemesis(2, "kill", "pod-1", "start"),
           _nemesis(3, "kill", "pod-1", "end"), _ack(10, 0, 1)]
    tl = build_timeline(ops, {}, {})
    assert tl is not None and len(tl.bands) == 1
    fig = timeline_figure(tl, ["pod-0", "pod-1"])
    shaded = sorted((s.xref, s.yref, s.x0, s.x1) for s in fig.layout.shapes)
    band = tl.bands[0]
    assert shaded == [(f"x{n}", f"y{n} domain", band.start_s, band.end_s)
                      for n in ("", "2", "3", "4")]
