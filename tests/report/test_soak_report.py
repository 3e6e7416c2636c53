"""A soak's report (issue 33): coverage and anomalies window by window, on the run's page
and on the nightly's, from a synthetic 15-minute soak (no Kafka): synth_run.py's 30 s of
history, traces and faults repeated at the start of each 5-minute window."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from checker.coverage import coverage_section
from faults.soak import WINDOW_S
from harness.report import render_report
from harness.report.coverage import over_time_of
from harness.report.nightlies import NIGHTLY_JSON
from harness.report.nightly_page import render_nightly
from tests.report.synth_run import T0_NS, Spec, make_run

WINDOWS = 3
LIMIT_S = WINDOWS * WINDOW_S


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _put_lines(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _shifted(row: dict[str, Any], key: str, k: int) -> dict[str, Any]:
    """The row k windows later, from a process of its own (a new pid)."""
    moved = {**row, key: row[key] + int(k * WINDOW_S * 1e9)}
    if "pid" in moved:
        moved["pid"] += 10 * k
    return moved


def soak_run(results_dir: Path, name: str = "20251009T020000-soak-1") -> Path:
    """A judged soak: the same faults in each window (so the same classes: a kill just
    after a commit, inside a transaction), one anomaly example in the first window and one
    in the last, one without a time."""
    run_dir = make_run(results_dir, name, Spec(profile="soak", verdict="invalid"))
    ops = _lines(run_dir / "history.jsonl")
    _put_lines(run_dir / "history.jsonl", [
        {**op, "index": n} for n, op in enumerate(
            _shifted(op, "time_ns", k) for k in range(WINDOWS) for op in ops)])
    for trace in run_dir.glob("pods/*/trace.jsonl"):
        events = _lines(trace)
        if trace.parent.name == "pod-1":  # killed at 8 s: just after a commit, in a txn
            events += [{"ts_ns": T0_NS + int(t * 1e9), "pod": "pod-1", "pid": 101,
                        "thread": "StreamThread-1", "event": event}
                       for t, event in ((7.85, "txn-commit"), (7.9, "txn-begin"))]
            events.sort(key=lambda e: e["ts_ns"])
        _put_lines(trace, [_shifted(e, "ts_ns", k) for k in range(WINDOWS) for e in events])
    run = json.loads((run_dir / "run.json").read_text())
    run["config"]["time_limit_s"] = LIMIT_S
    (run_dir / "run.json").write_text(json.dumps(run))
    results = json.loads((run_dir / "results.json").read_text())
    checks = results["checks"]
    late_ms = (T0_NS + int((2 * WINDOW_S + 5) * 1e9)) // 1_000_000  # 605 s: the third window
    checks["lost-history"]["examples"].append({"account": "acct-1", "sent_ms": late_ms})
    checks["lost-history"]["count"] = 7
    results["anomaly_counts"]["lost-history"] = 7
    results["coverage"] = coverage_section(run_dir)
    (run_dir / "results.json").write_text(json.dumps(results))
    return run_dir


def test_the_soak_s_report_counts_coverage_and_anomalies_per_window(tmp_path: Path) -> None:
    run_dir = soak_run(tmp_path)
    coverage = json.loads((run_dir / "results.json").read_text())["coverage"]["classes"]
    reached = {n for n, c in coverage.items() if c["reached"] and c["scope"] == "run"}
    assert reached == {"crash-in-txn", "crash-after-commit"}

    ot = over_time_of(run_dir)
    assert ot is not None and ot.window_s == WINDOW_S
    assert [(w.start_s, w.end_s) for w in ot.windows] == [(0, 300), (300, 600), (600, 900)]
    # Every hit the checker counted is in one window; each window has the same ones.
    for name in reached:
        assert sum(w.classes.get(name, 0) for w in ot.windows) == coverage[name]["count"]
        assert ot.reached(name) == WINDOWS
    assert {frozenset(w.classes) for w in ot.windows} == {frozenset(reached)}
    assert all(w.faults == 3 for w in ot.windows)  # kill, pause, kill-broker each time
    assert [w.anomalies for w in ot.windows] == [{"dedup-skip": 1}, {}, {"lost-history": 1}]
    assert ot.counts == {"dedup-skip": 3, "lost-history": 7}
    assert ot.examples == {"dedup-skip": 1, "lost-history": 2}

    page = render_report(run_dir).read_text()
    table = page[page.index('id="over-time-table"'):]
    table = table[:table.index("</table>")]
    rows = re.findall(r'data-window="(\d+)" data-classes="(\d+)" data-anomalies="(\d+)"', table)
    assert rows == [("0", str(len(reached)), "1"), ("1", str(len(reached)), "0"),
                    ("2", str(len(reached)), "1")]
    assert "0-300 s" in table and "600-900 s" in table
    assert 'data-check="lost-history">lost-history 1<' in table
    assert page.index('id="coverage-table"') < page.index('id="over-time-table"')


def test_a_short_run_has_no_over_time_table(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, "20251009T020000-all-1", Spec(profile="all"))
    assert over_time_of(run_dir) is None
    page = render_report(run_dir).read_text()
    assert 'id="over-time-table"' not in page and "over-time" not in page


def test_the_nightly_page_shows_the_soak_s_windows(tmp_path: Path) -> None:
    run_dir = soak_run(tmp_path)
    short = make_run(tmp_path, "20251009T020100-all-1", Spec(profile="all"))
    log_dir = tmp_path / "nightly-20251009T020000"
    log_dir.mkdir()
    runs = [{"cell": {"profile": p, "seed": 1, "bugs": [], "args": a}, "exit_code": code,
             "run_dir": str(d), "duration_s": 1600.0, "note": ""}
            for p, a, d, code in (("soak", ["--time-limit", "900"], run_dir, 1),
                                  ("all", [], short, 0))]
    (log_dir / NIGHTLY_JSON).write_text(json.dumps({"runs": runs, "budget_s": 7200}))
    page = render_nightly(log_dir).read_text()
    assert page.count('id="soak-table-') == 1  # the soak's; the short run has none
    assert f'href="#soak-{run_dir.name}">(over time)' in page
    table = page[page.index('id="soak-table-1"'):]
    assert len(re.findall(r'data-window="\d+"', table[:table.index("</table>")])) == WINDOWS
