"""Project checks in the nightly (issue 29: `make test-fresh` as a nightly cell): the
matrix schema, their supervision beside the runs (a place of `jobs`, the budget, the
timeout, an interruption), and what a nightly records of them: nightly.json, the log, the
page, the Markdown table, the JUnit file and the verdict; "not started" where no Docker
engine can be had. The checks here are small Python commands; the runs are the fake
`kchaos` of the nightly tests."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import xmlschema
from fake_clock import FakeClock

from harness.errors import UsageError
from harness.nightly import load_matrix, nightly, parse_matrix
from harness.nightly import project_checks as checks_module
from harness.nightly.command import NIGHTLY_JUNIT
from harness.nightly.matrix import Cell, Matrix, ProjectCheck
from harness.nightly.project_checks import JUNIT_SUITE, ROOT
from harness.nightly.supervise import POLL_S, Attempt, run_matrix
from harness.report.nightlies import INTERRUPTED, PASSED, CheckRecord, read_nightly

FAKE = Path(__file__).resolve().parents[1] / "report" / "fake_kchaos.py"
SCHEMA = xmlschema.XMLSchema(Path(__file__).resolve().parents[1] / "report" / "junit.xsd")
PY = sys.executable


def _check(name: str, code: str, timeout_s: float = 120.0, **more: Any) -> dict[str, Any]:
    return {"name": name, "command": [PY, "-c", code], "timeout_s": timeout_s, **more}


# -- the schema ---------------------------------------------------------------------------


GOOD = _check("fresh", "pass")


@pytest.mark.parametrize(("checks", "says"), [
    ([{**GOOD, "timout_s": 5}], "`project_checks.0.timout_s`"),  # misspelt
    ([{k: v for k, v in GOOD.items() if k != "timeout_s"}], "`project_checks.0.timeout_s`"),
    ([{**GOOD, "command": "bash scripts/test-fresh.sh"}], "`project_checks.0.command`"),
    ([{**GOOD, "command": []}], "`project_checks.0.command`"),
    ([{**GOOD, "name": "Fresh machine"}], "`project_checks.0.name`"),
    ([{**GOOD, "timeout_s": "soon"}], "`project_checks.0.timeout_s`"),
    ([{**GOOD, "timeout_s": True}], "`project_checks.0.timeout_s`"),
    ([{**GOOD, "needs": ["podman"]}], "`project_checks.0.needs.0`"),
    ([{**GOOD, "needs": "docker"}], "`project_checks.0.needs`"),
    ([GOOD, GOOD], "`project_checks.1.name`: 'fresh' is named twice"),
    ("fresh-machine", "`project_checks`"),
])
def test_a_bad_project_check_is_one_line(checks: object, says: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_matrix({"profiles": ["all"], "project_checks": checks}, "m.yaml")
    message = str(caught.value)
    assert says in message and "\n" not in message and message.startswith("m.yaml"), message


def test_a_misspelt_key_of_the_matrix_names_it() -> None:
    with pytest.raises(UsageError, match="`project_check`"):
        parse_matrix({"profiles": ["all"], "project_check": [GOOD]})


def test_checks_parse_and_a_matrix_may_hold_only_checks() -> None:
    m = parse_matrix({"project_checks": [{**GOOD, "timeout_s": "30m", "needs": ["docker"]}]})
    assert m.cells == () and m.project_checks == (
        ProjectCheck("fresh", (PY, "-c", "pass"), 1800.0, ("docker",)),)


def test_the_default_matrix_runs_the_fresh_machine_check() -> None:
    (check,) = load_matrix(None).project_checks
    assert check.name == "fresh-machine" and check.needs == ("docker",)
    assert check.command == ("bash", "scripts/test-fresh.sh")  # the container's exit code
    assert (ROOT / check.command[1]).is_file() and 1200 <= check.timeout_s <= 3600


# -- supervision ----------------------------------------------------------------------------




class Busy:
    """A run or check that takes `took` seconds of the fake clock."""

    def __init__(self, clock: FakeClock, took: float, what: Cell | ProjectCheck,
                 log: list[str]) -> None:
        self.clock, self.took, self.what, self.began = clock, took, what, clock.now
        log.append(f"{clock.now:g} start {self.name}")
        self.log = log

    @property
    def name(self) -> str:
        return self.what.name if isinstance(self.what, ProjectCheck) else self.what.profile

    def _over(self) -> bool:
        return self.clock.now - self.began >= self.took

    def poll(self) -> Any:
        if not self._over():
            return None
        self.log.append(f"{self.clock.now:g} end {self.name}")
        if isinstance(self.what, ProjectCheck):
            return CheckRecord(self.what.name, self.what.command, PASSED, 0, self.took)
        return Attempt(self.what, 0, None, self.took)

    def terminate(self) -> None:
        self.log.append(f"SIGTERM {self.name}")

    def stop(self, note: str) -> Any:
        if isinstance(self.what, ProjectCheck):
            return CheckRecord(self.what.name, self.what.command, INTERRUPTED, note=note)
        return Attempt(self.what, None, None, 0.0, note)


def _matrix(*cells: Cell, checks: tuple[ProjectCheck, ...] = ()) -> Matrix:
    return Matrix(cells=cells, time_limit_s=10.0, run_timeout_s=100.0, project_checks=checks)


def _start(clock: FakeClock, log: list[str], took: float) -> tuple[Any, Any]:
    return (lambda cell, number: Busy(clock, took, cell, log),
            lambda check: Busy(clock, check.timeout_s / 2, check, log))


def test_checks_go_first_and_hold_a_place() -> None:
    clock, log = FakeClock(), list[str]()
    m = _matrix(Cell("all", 1), Cell("kill", 1),
                checks=(ProjectCheck("a", ("x",), 40.0), ProjectCheck("b", ("y",), 20.0)))
    start, start_check = _start(clock, log, 20.0)
    done = run_matrix(m, 1000.0, start, jobs=2, clock=clock, sleep=clock.sleep,
                      start_check=start_check)
    # b's place goes to the first run at the next poll, then a's to the second.
    assert log[:4] == ["0 start a", "0 start b", "10 end b", f"{10 + POLL_S:g} start all"]
    assert log[4:6] == ["20 end a", f"{20 + POLL_S:g} start kill"]
    assert [c.name for c in done.checks] == ["a", "b"] and len(done.attempts) == 2
    # Without a check launcher (the older callers) the checks are not run at all.
    done = run_matrix(m, 1000.0, start, clock=clock, sleep=clock.sleep)
    assert done.checks == [] and done.checks_skipped == [] and len(done.attempts) == 2


def test_what_does_not_fit_the_budget_is_left_and_shorter_ones_still_run() -> None:
    clock, log = FakeClock(), list[str]()
    long_run = Cell("soak", 1, args=("--time-limit", "1500"))
    m = _matrix(Cell("all", 1), long_run, Cell("kill", 1),
                checks=(ProjectCheck("slow", ("x",), 5000.0),))
    start, start_check = _start(clock, log, 20.0)
    done = run_matrix(m, 200.0, start, clock=clock, sleep=clock.sleep, start_check=start_check)
    assert [c.name for c in done.checks_skipped] == ["slow"]  # its timeout does not fit
    assert done.skipped == [long_run]  # 2 s per second of 1500 s does not fit 200 s
    assert [a.cell.profile for a in done.attempts] == ["all", "kill"]


def test_an_interruption_stops_the_checks_too() -> None:
    clock, log = FakeClock(), list[str]()
    m = _matrix(Cell("all", 1), checks=(ProjectCheck("a", ("x",), 400.0),))
    start, start_check = _start(clock, log, 300.0)

    def sleep(seconds: float) -> None:
        clock.sleep(seconds)
        if clock.now >= 50:
            raise KeyboardInterrupt

    done = run_matrix(m, 1000.0, start, jobs=2, clock=clock, sleep=sleep,
                      start_check=start_check)
    assert done.interrupted is not None
    assert log[-2:] == ["SIGTERM a", "SIGTERM all"]  # both told before either is waited for
    assert [c.status for c in done.checks] == [INTERRUPTED]


# -- in a nightly ---------------------------------------------------------------------------


def _nightly(tmp_path: Path, checks: list[dict[str, Any]], **outcomes: object
             ) -> tuple[int, Path]:
    matrix = tmp_path / "m.yaml"
    matrix.write_text(json.dumps({"time_limit_s": 1, "profiles": ["all"], "seeds": [1],
                                  "jobs": 2, "project_checks": checks}))
    results = tmp_path / "results"
    code = nightly(results, 3600, matrix, [PY, str(FAKE), "--outcomes", json.dumps(outcomes)])
    (folder,) = [p for p in results.glob("nightly-*") if p.is_dir()]
    return code, folder


def _suite(results: Path) -> ET.Element:
    SCHEMA.validate(str(results / NIGHTLY_JUNIT))
    root = ET.parse(results / NIGHTLY_JUNIT).getroot()
    (suite,) = [s for s in root if s.get("name") == JUNIT_SUITE]
    return suite


def test_checks_are_recorded_shown_and_judged(tmp_path: Path) -> None:
    code, folder = _nightly(tmp_path, [
        _check("good", "print('all set up')"),
        _check("bad", "import sys; print('pip: no such package'); sys.exit(3)")])
    assert code == 1  # the run was valid; a check failed
    doc = json.loads((folder / "nightly.json").read_text())
    good, bad = doc["project_checks"]
    assert (good["name"], good["status"], good["exit_code"]) == ("good", "passed", 0)
    assert (bad["name"], bad["status"], bad["exit_code"]) == ("bad", "failed", 3)
    assert good["command"] == [PY, "-c", "print('all set up')"] and good["duration_s"] > 0
    assert (folder / bad["log"]).read_text() == "pip: no such package\n"
    assert doc["ok"] is False and doc["reasons"] == ["project check bad failed (exit 3)"]
    # The page, the Markdown table, the index and JUnit say the same.
    page = (folder / "nightly.html").read_text()
    assert 'data-check="bad" data-status="failed"' in page
    assert f'href="{bad["log"]}"' in page and "nightly failed" in page
    assert "| bad | failed (exit 3) |" in (folder / "nightly.md").read_text()
    assert "<b>failed</b>" in (folder.parent / "index.html").read_text()
    suite = _suite(folder.parent)
    assert (suite.get("tests"), suite.get("failures")) == ("2", "1")
    failure = suite.find("testcase[@name='bad']/failure")
    assert failure is not None and "pip: no such package" in (failure.text or "")
    assert read_nightly(folder).judgement.ok is False


def test_a_passing_check_passes(tmp_path: Path) -> None:
    code, folder = _nightly(tmp_path, [_check("good", "pass")])
    assert code == 0 and read_nightly(folder).judgement.ok
    assert _suite(folder.parent).get("failures") == "0"


def test_a_check_past_its_timeout_is_stopped_and_fails(tmp_path: Path) -> None:
    code, folder = _nightly(tmp_path, [_check("hangs", "import time; time.sleep(600)", 1.0)])
    assert code == 1
    (record,) = json.loads((folder / "nightly.json").read_text())["project_checks"]
    assert record["status"] == "timed out" and record["exit_code"] is None
    assert record["duration_s"] < 60 and "timeout_s" in record["note"]


def test_without_an_engine_and_root_a_docker_check_is_not_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(checks_module, "_is_root", lambda: False)
    monkeypatch.setattr(checks_module, "_engine_status", lambda: (3, "no engine answers"))
    code, folder = _nightly(tmp_path, [_check("fresh", "raise SystemExit(9)",
                                              needs=["docker"]), _check("plain", "pass")])
    assert code == 0  # as a docker cell without an engine: listed, not a failure
    fresh, plain = json.loads((folder / "nightly.json").read_text())["project_checks"]
    assert fresh["status"] == "not started" and not (folder / "check-fresh.log").exists()
    assert "scripts/docker-engine.sh status: exit 3" in fresh["note"]
    assert plain["status"] == "passed"
    assert "project check fresh not started" in capsys.readouterr().err
    skipped = _suite(folder.parent).find("testcase[@name='fresh']/skipped")
    assert skipped is not None


def test_as_root_a_docker_check_starts_without_an_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Root may start an engine: the check's own script does (test-fresh.sh)."""
    monkeypatch.setattr(checks_module, "_is_root", lambda: True)
    monkeypatch.setattr(checks_module, "_engine_status", lambda: (3, "no engine answers"))
    code, folder = _nightly(tmp_path, [_check("fresh", "raise SystemExit(254)",
                                              needs=["docker"])])
    assert code == 1
    (record,) = json.loads((folder / "nightly.json").read_text())["project_checks"]
    assert (record["status"], record["exit_code"]) == ("failed", 254)
