"""Folders that are not runs, or runs whose files are damaged, given to `kchaos report`,
`repro` and `check`: one line and 254 (or a verdict that is never valid), and nothing
written where it does not belong."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_bad_input, files_under, kchaos

from faults.plan import plan
from harness.config.run import RunConfig

# No broker listens on port 1: should a damaged run ever pass its checks, its replay
# still stops at once (and the test sees the wrong message).
NO_KAFKA = "127.0.0.1:1"


def _run_folder(results: Path, **damage: Any) -> Path:
    """A run folder as `kchaos run` leaves it (run.json, plan.json), then damaged."""
    run_dir = results / "20261122T000000-kill-s1"
    run_dir.mkdir(parents=True)
    config = RunConfig(profile="kill", seed=1, time_limit_s=30, bootstrap=NO_KAFKA)
    run = {"run_id": run_dir.name, "config": config.to_json(), "exit_code": 0}
    steps = plan(1, "kill", 2, 1, 30).to_json()
    assert steps["steps"], "the damage below needs a step"
    for key, value in damage.items():
        target, _, field = key.partition("__")
        doc = run if target == "run" else steps
        if field == "config" and isinstance(value, dict):
            doc["config"].update(value)
        elif field == "step":
            doc["steps"][0].update(value)
        elif field == "trigger":
            doc["steps"][0]["trigger"].update(value)
        else:
            doc[field] = value
    (run_dir / "run.json").write_text(json.dumps(run))
    (run_dir / "plan.json").write_text(json.dumps(steps))
    return run_dir


def test_report_on_a_folder_that_is_not_a_run(tmp_path: Path) -> None:
    # Before: exit 0, report.html written into it and index.html into its parent.
    parent = tmp_path / "home"
    folder = parent / "photos"
    folder.mkdir(parents=True)
    (folder / "cat.jpg").write_bytes(b"\xff\xd8")
    result = kchaos("report", str(folder), cwd=tmp_path)
    assert_bad_input(result, str(folder), "not a kchaos run folder")
    assert files_under(parent) == [Path("photos"), Path("photos/cat.jpg")]


def test_a_valid_looking_run_reaches_the_replay_checks(tmp_path: Path) -> None:
    # The control for the cases below: undamaged, the replay stops only at the broker.
    run_dir = _run_folder(tmp_path / "results")
    assert_bad_input(kchaos("repro", str(run_dir), cwd=tmp_path), NO_KAFKA, "no broker")


@pytest.mark.parametrize(("damage", "says"), [
    ({"plan__trigger": {"condition": "restord"}}, "unknown trigger condition 'restord'"),
    ({"plan__trigger": {"count": 0}}, "trigger out of range"),
    ({"plan__trigger": {"when": 3}}, "damaged"),
    ({"plan__step": {"fault": "meteor"}}, "unknown fault kinds ['meteor']"),
    ({"plan__steps": "none"}, "damaged"),
    ({"plan__seed": "x"}, "damaged"),
    ({"run__config": {"pods": "two"}}, "damaged"),
    ({"run__config": {"podz": 2}}, "unknown settings"),
    ({"run__config": {"brokers": 2}}, "--brokers"),
    ({"run__config": {"bugs": ["nosuch"]}}, "nosuch"),
    ({"run__config": "none"}, "damaged"),
])
def test_repro_of_a_damaged_run(tmp_path: Path, damage: dict[str, Any], says: str) -> None:
    run_dir = _run_folder(tmp_path / "results", **damage)
    before = files_under(tmp_path)
    assert_bad_input(kchaos("repro", str(run_dir), cwd=tmp_path), says)
    assert files_under(tmp_path) == before  # no replay folder started


@pytest.mark.parametrize("file", ["run.json", "plan.json"])
def test_repro_with_a_file_missing_or_corrupt(tmp_path: Path, file: str) -> None:
    run_dir = _run_folder(tmp_path / "results")
    (run_dir / file).unlink()
    assert_bad_input(kchaos("repro", str(run_dir), cwd=tmp_path), file, "missing")
    (run_dir / file).write_text('{"config": {')
    assert_bad_input(kchaos("repro", str(run_dir), cwd=tmp_path), file, "damaged")


def test_check_without_a_history(tmp_path: Path) -> None:
    run_dir = _run_folder(tmp_path / "results")
    assert_bad_input(kchaos("check", str(run_dir), cwd=tmp_path), "history")


def test_check_of_a_corrupt_history_is_never_valid(tmp_path: Path) -> None:
    run_dir = _run_folder(tmp_path / "results")
    (run_dir / "history").mkdir()
    (run_dir / "history" / "meta.json").write_text("{not json")
    result = kchaos("check", str(run_dir), cwd=tmp_path, timeout=300)
    assert result.returncode == 2, result.stderr  # unknown: nothing could be decided
    assert json.loads((run_dir / "results.json").read_text())["verdict"] == "unknown"
