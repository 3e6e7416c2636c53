"""`kchaos shrink`: bad input is one line and 254 before anything runs; with a fake rerun
(no Kafka) the shrink folder holds a plan `kchaos repro` takes, the log and the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import assert_bad_input, files_under, kchaos
from shrink_fixtures import write_run

from harness.run.command import read_config_and_plan
from harness.shrink import command
from harness.shrink.search import RunResult
from harness.shrink.timing import Variant


@pytest.mark.parametrize(("case", "args", "says"), [
    ("no folder", ["missing-run"], ["not a kchaos run folder"]),
    ("no run.json", ["empty"], ["no run.json"]),
    ("no plan", ["noplan"], ["plan.json is missing"]),
    ("never judged", ["unjudged"], ["kchaos check"]),
    ("a valid run", ["valid"], ["found no anomaly"]),
    ("allowed duplicates", ["at-least-once"], ["found no anomaly"]),
    ("K < M", ["failing", "--times", "2", "--min-hits", "3"], ["--min-hits 3 > --times 2"]),
    ("K = 0", ["failing", "--times", "0"], ["at least 1"]),
    ("not its anomaly", ["failing", "--anomaly", "lost-event"], ["lost-history"]),
    ("bad budget", ["failing", "--budget", "soon"], ["--budget"]),
])
def test_bad_input_is_one_line_and_254(tmp_path: Path, case: str, args: list[str],
                                       says: list[str]) -> None:
    results = tmp_path / "results"
    (results / "empty").mkdir(parents=True)
    write_run(results / "noplan", {"lost-history": 1}, plan=False)
    write_run(results / "unjudged", None)
    write_run(results / "valid", {})
    write_run(results / "failing", {"lost-history": 1})
    # At-least-once: duplicates counted, and allowed by the verdict: nothing to aim at.
    allowed = write_run(results / "at-least-once", {"duplicate-output": 549})
    (allowed / "results.json").write_text(json.dumps({
        "verdict": True, "anomaly_counts": {"duplicate-output": 549},
        "checks": {"duplicate-output": {"valid": True, "count": 549, "examples": []},
                   "lost-history": {"valid": True, "count": 0, "examples": []}}}))
    before = files_under(results)
    result = kchaos("shrink", str(results / args[0]), *args[1:], cwd=tmp_path)
    assert_bad_input(result, *says)
    assert files_under(results) == before  # no shrink folder, no run started


class FakeReruns:
    """Reproduces when steps 1 and 2 run in a load phase of 20 s or more."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.count = 0

    def __call__(self, v: Variant) -> RunResult:
        self.count += 1
        run_dir = self.folder / f"rerun-{self.count}"
        run_dir.mkdir(parents=True)
        (run_dir / "report.html").write_text("<html></html>")
        hit = {1, 2} <= {s.id for s in v.steps} and v.time_limit_s >= 20
        return RunResult(str(run_dir), ("lost-history",) if hit else (), int(hit), 0.01)


def _fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FakeReruns:
    reruns = FakeReruns(tmp_path / "reruns")
    monkeypatch.setattr(command, "_runner", lambda config, plan, runs_dir: reruns)
    monkeypatch.setattr("harness.run.command.require_tools", lambda config: None)
    return reruns


def test_shrink_writes_a_plan_repro_takes_the_log_and_the_report(
        failing_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reruns = _fake(monkeypatch, tmp_path)
    assert command.shrink(failing_run, 2, 1, 3600.0, None) == 0
    [folder] = [p for p in failing_run.parent.iterdir() if "shrink" in p.name]

    config, plan = read_config_and_plan(folder / "plan")  # what `kchaos repro` reads
    assert [s.id for s in plan.steps] == [1, 2]
    assert 20 <= config.time_limit_s <= 25
    assert config.profile == "KAFKA-8187" and plan.config == {"pods": 1}

    log = json.loads((folder / "shrink.json").read_text())
    assert log["target_classes"] == ["lost-history"]  # `unavailable` is load, not the bug
    assert log["reruns"] == reruns.count == sum(c["reruns"] for c in log["candidates"]) - 1
    assert log["candidates"][0]["runs"][0]["run_dir"] == str(failing_run)  # counted as a run
    assert log["shrunk"]["step_ids"] == [1, 2]
    assert all(r["run_dir"] for c in log["candidates"] for r in c["runs"])
    repro = (folder / "repro.txt").read_text()
    assert repro.startswith(f"kchaos repro {folder / 'plan'} --times 2")

    page = (folder / "report.html").read_text()
    statuses = [row.split('data-status="')[1].split('"')[0]
                for row in page.split("<tr ")[1:] if 'data-status="' in row]
    assert statuses == ["removed", "kept", "kept", "removed", "removed"]
    assert "rerun-1/report.html" in page
    assert f"{failing_run.name}/report.html" in page


def test_an_original_that_does_not_come_back_exits_2_and_keeps_the_log(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake(monkeypatch, tmp_path)
    run = write_run(tmp_path / "results" / "short", {"lost-history": 1}, time_limit_s=15.0)
    # the original run is one hit; its rerun misses: not 2 of 2
    assert command.shrink(run, 2, 2, 3600.0, tmp_path / "elsewhere") == 2
    [folder] = list((tmp_path / "elsewhere").iterdir())
    log = json.loads((folder / "shrink.json").read_text())
    assert log["shrunk"] is None and log["candidates"][0]["reproduced"] is False
    assert not (folder / "plan").exists()
    assert "not shrunk" in (folder / "report.html").read_text()


def test_a_shrink_is_listed_on_the_index_and_its_plan_repros_without_an_original(
        failing_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from harness.report.index import render_index
    from harness.run import command as run_command
    from harness.run.lifecycle import RunOutcome

    _fake(monkeypatch, tmp_path)
    assert command.shrink(failing_run, 2, 1, 3600.0, None) == 0
    [folder] = [p for p in failing_run.parent.iterdir() if "shrink" in p.name]
    index = render_index(failing_run.parent).read_text()
    listed = index.split('id="shrink-list"')[1].split("</table>")[0]
    assert f'href="{folder.name}/report.html"' in listed
    assert failing_run.name in listed and "5 &rarr; 2" in listed

    replay = tmp_path / "replay"
    replay.mkdir()
    (replay / "results.json").write_text(json.dumps({"anomaly_counts": {"lost-history": 3}}))
    monkeypatch.setattr(run_command, "execute",
                        lambda config, where, plan: RunOutcome(replay, False, 1))
    assert run_command.repro(folder / "plan", 1, tmp_path) == 1
    table = capsys.readouterr().out
    # Before: the plan folder's "original" column read 0, as if a run had found nothing.
    assert "not run" in table and "lost-history" in table
    assert " 0 " not in table.split("lost-history")[1].splitlines()[0]


def test_a_damaged_shrink_log_costs_its_own_row(tmp_path: Path) -> None:
    from harness.report.index import render_index

    (tmp_path / "shrink-x").mkdir()
    (tmp_path / "shrink-x" / "shrink.json").write_text("{not json")
    listed = render_index(tmp_path).read_text().split('id="shrink-list"')[1]
    assert "shrink-x" in listed.split("</table>")[0] and "error" in listed.split("</table>")[0]
