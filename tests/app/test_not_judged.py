"""An app run whose oracle is not applicable (an output carrying the wall clock, an
at-least-once app) is valid only by its other checks: results.json says what was not
judged and why, and so do the console's verdict line and the top of the report. Before,
the console said `verdict VALID  (no anomalies)` and nothing else."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checker.check import results_document
from checker.checks import principal_check
from checker.meta import Meta
from checker.model import CheckResult, not_applicable
from harness.report.report import render_report
from harness.run.command import _print_verdict
from harness.run.lifecycle import RunOutcome
from tests.report.synth_run import Spec, make_run

REASON = ("the topology's output depends on the order of records across partitions or on "
          "wall-clock time: the reference fed in two orders differs (keys out/k1)")


def app_results() -> dict[str, object]:
    meta = Meta.from_json({"workload": "app", "guarantee": "exactly_once_v2"})
    results = {"oracle": not_applicable(REASON), "stale-checkpoint": CheckResult(valid=True),
               "unavailable": CheckResult(valid=True)}
    return results_document(results, {}, None, principal_check(meta))


def test_results_say_the_oracle_did_not_judge_an_app_run() -> None:
    doc = app_results()
    assert doc["verdict"] is True
    assert doc["not_judged"] == {"check": "oracle", "reason": REASON}
    ledger = Meta.from_json({"guarantee": "exactly_once_v2"})
    assert principal_check(ledger) is None  # a ledger run has many checks carrying it


def test_the_verdict_line_and_the_report_say_not_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = make_run(tmp_path, "20251009T020000-kill-s1", Spec(verdict="valid"))
    (run_dir / "results.json").write_text(json.dumps(app_results()))
    _print_verdict(RunOutcome(run_dir, True, 0))
    line = next(li for li in capsys.readouterr().out.splitlines() if li.startswith("verdict"))
    assert "VALID" in line and "NOT JUDGED by the oracle" in line, line
    assert "wall-clock time" in line, line
    page = render_report(run_dir).read_text()
    top = page[:page.index('id="configuration"')]
    assert 'id="not-judged"' in top and "Not judged by the" in top and "wall-clock" in top


def test_a_run_judged_in_part_says_what_was_and_was_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Under at-least-once the oracle judges what every correct execution keeps and says
    the rest: results.json, the verdict line and the top of the report carry both."""
    meta = Meta.from_json({"workload": "app", "guarantee": "at_least_once"})
    judged = CheckResult(valid=True, details={
        "judged": ["every key the reference produced committed (counts)"],
        "not_judged": ["each key's sequence of values: replayed after a crash"]})
    doc = results_document({"oracle": judged, "stale-checkpoint": CheckResult(valid=True),
                            "unavailable": CheckResult(valid=True)}, {}, None,
                           principal_check(meta))
    assert "not_judged" not in doc
    assert doc["partly_judged"]["judged"] == ["every key the reference produced committed "
                                              "(counts)"]
    run_dir = make_run(tmp_path, "20251009T020000-kill-s1", Spec(verdict="valid"))
    (run_dir / "results.json").write_text(json.dumps(doc))
    _print_verdict(RunOutcome(run_dir, True, 0))
    line = next(li for li in capsys.readouterr().out.splitlines() if li.startswith("verdict"))
    assert "PARTLY JUDGED by the oracle: every key the reference produced" in line, line
    page = render_report(run_dir).read_text()
    top = page[:page.index('id="configuration"')]
    assert 'id="partly-judged"' in top and "replayed after a crash" in top
