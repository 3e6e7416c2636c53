"""What counts as the same failure, and the rate `kchaos repro` prints."""

from __future__ import annotations

import json
from pathlib import Path

from shrink_fixtures import write_run

from harness.anomalies import anomaly_classes, rate_text, target_classes
from harness.run.command import _target


def test_load_classes_are_aimed_at_only_when_alone() -> None:
    assert target_classes(("lost-history", "unavailable")) == ("lost-history",)
    assert target_classes(("unavailable",)) == ("unavailable",)
    assert target_classes(()) == ()


def test_anomaly_classes_skip_zero_counts_and_damaged_files(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", {"wrong-balance": 2, "dedup-skip": 0})
    assert anomaly_classes(run) == ("wrong-balance",)
    (run / "results.json").write_text("{not json")
    assert anomaly_classes(run) == ()
    (run / "results.json").write_text(json.dumps({"anomaly_counts": ["x"]}))
    assert anomaly_classes(run) == ()


def test_rate_text() -> None:
    assert rate_text(2, 3) == "2/3 (67%)"
    assert rate_text(0, 0) == "0/0"


def test_repro_aims_at_the_originals_classes_or_the_shrunk_plans(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", {"unavailable": 1, "duplicate-output": 1})
    assert _target(run, {"unavailable": 1, "duplicate-output": 1}) == ("duplicate-output",)
    plan_folder = write_run(tmp_path / "shrink" / "plan", None)
    info = json.loads((plan_folder / "run.json").read_text())
    (plan_folder / "run.json").write_text(json.dumps({**info, "shrink_target": ["lost-event"]}))
    assert _target(plan_folder, {}) == ("lost-event",)


def test_only_the_checks_that_failed_the_run_are_its_classes(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", {"duplicate-output": 7, "lost-history": 2})
    (run / "results.json").write_text(json.dumps({
        "anomaly_counts": {"duplicate-output": 7, "lost-history": 2},
        "checks": {"duplicate-output": {"valid": True, "count": 7},  # at-least-once
                   "lost-history": {"valid": False, "count": 2},
                   "unavailable": {"valid": False, "count": 0}}}))
    assert anomaly_classes(run) == ("lost-history", "unavailable")
