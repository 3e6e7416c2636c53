"""`kchaos nightly` against a fake `kchaos` (fake_kchaos.py): the matrix, the budget, a run
that fails or hangs, the summary, and the exit code for passing and failing matrices."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest
import xmlschema
from fake_clock import FakeClock

from faults.plan import PROFILES
from harness.errors import UsageError
from harness.nightly import (
    DEFAULT_MATRIX,
    NIGHTLY_JUNIT,
    Attempt,
    Cell,
    load_matrix,
    nightly,
    parse_duration,
    parse_matrix,
    run_matrix,
)
from harness.nightly.supervise import Launcher
from workloads.worker.bugs import BUG_NAMES

FAKE = Path(__file__).with_name("fake_kchaos.py")
SCHEMA = xmlschema.XMLSchema(Path(__file__).with_name("junit.xsd"))


def _fake(**outcomes: object) -> list[str]:
    return [sys.executable, str(FAKE), "--outcomes", json.dumps(outcomes)]


def _matrix(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "matrix.yaml"
    path.write_text(text)
    return path


TINY = """
time_limit_s: 1
profiles: [all]
seeds: [1, 2]
bugs: [[], [KAFKA-7672]]
"""


def test_matrix_is_seed_major_with_includes() -> None:
    m = parse_matrix({
        "profiles": ["all", "kill"], "seeds": [2, 1], "bugs": [[], ["KIP-406"]],
        "include": [{"profile": "KAFKA-8187", "bugs": ["KAFKA-8187"], "seeds": [1]},
                    {"profile": "kill", "bugs": ["offsets-outside-txn"], "args": ["--rate", "5"],
                     "seeds": [2]}],
        "time_limit_s": 5,
    })
    assert [c.seed for c in m.cells] == [1] * 5 + [2] * 5
    assert m.cells[-1] == Cell("kill", 2, ("offsets-outside-txn",), ("--rate", "5"))
    assert m.cells[-1].argv(1, Path("r"), ["--pods", "3"])[-4:] == [
        "--pods", "3", "--rate", "5"]
    assert m.cells[:5] == (
        Cell("all", 1), Cell("all", 1, ("KIP-406",)), Cell("kill", 1),
        Cell("kill", 1, ("KIP-406",)), Cell("KAFKA-8187", 1, ("KAFKA-8187",)),
    )
    assert m.time_limit_s == 5 and m.run_timeout_s == 615


def test_cell_command_line() -> None:
    cell = Cell("all", 3, ("KAFKA-7672", "KIP-406"))
    assert cell.argv(60, Path("r"), ["--pods", "3"]) == [
        "--results-dir", "r", "run", "--profile", "all", "--seed", "3",
        "--bugs", "KAFKA-7672,KIP-406", "--time-limit", "60", "--pods", "3",
    ]
    assert "--bugs" not in Cell("all", 3).argv(60, Path("r"), [])


def test_default_matrix_loads() -> None:
    m = load_matrix(None)
    assert load_matrix(DEFAULT_MATRIX) == m
    # Every profile and bug switch it names exists (a typo would be a red nightly).
    assert {c.profile for c in m.cells} <= set(PROFILES)
    assert {b for c in m.cells for b in c.bugs} <= set(BUG_NAMES)
    fixed = {c.profile for c in m.cells if not c.bugs}
    for bug in ("KAFKA-7672", "KAFKA-8187", "KAFKA-20685", "KIP-406"):
        assert Cell(bug, 1, (bug,)) in m.cells and bug in fixed


@pytest.mark.parametrize("doc", [
    [], {"profiles": "all"}, {"profiles": ["all"], "seeds": ["x"]},
    {"profiles": ["all"], "bugs": [3]}, {"profiles": ["all"], "time_limit_s": -1},
    {"seeds": [1]}, {"include": [{"bugs": []}]},
    {"include": [{"profile": "all", "args": "--rate 5"}]},
])
def test_bad_matrix_is_a_usage_error(doc: object) -> None:
    with pytest.raises(UsageError):
        parse_matrix(doc)


def test_unreadable_matrix_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not valid YAML"):
        load_matrix(_matrix(tmp_path, "profiles: [all\n"))
    with pytest.raises(UsageError, match="cannot read"):
        load_matrix(tmp_path / "absent.yaml")


@pytest.mark.parametrize(("text", "seconds"), [
    ("90", 90), ("90s", 90), ("45m", 2700), ("2h", 7200), ("1h30m", 5400), ("0.5h", 1800),
])
def test_budget_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "abc", "2x", "h", "0", "1h 30m", "-5m"])
def test_bad_budget_is_a_usage_error(text: str) -> None:
    with pytest.raises(UsageError, match="--budget"):
        parse_duration(text)




@dataclass
class FakeRun:
    """A run that ends `took` seconds of the fake clock after it started."""

    cell: Cell
    clock: FakeClock
    took: float
    began: float = 0.0
    stopped: bool = False
    signals: list[str] | None = None  # shared by the runs of one test: the order of calls

    def poll(self) -> Attempt | None:
        if self.clock.now - self.began >= self.took:
            return Attempt(self.cell, 0, None, self.clock.now - self.began)
        return None

    def terminate(self) -> None:
        if self.signals is not None:
            self.signals.append(f"SIGTERM {self.cell.profile}")

    def stop(self, note: str) -> Attempt:
        self.stopped = True
        if self.signals is not None:
            self.signals.append(f"stop {self.cell.profile}")
        return Attempt(self.cell, None, None, self.clock.now - self.began, note)


def _fake_runs(clock: FakeClock, took: float, log: list[FakeRun],
               signals: list[str] | None = None) -> Launcher:
    def start(cell: Cell, number: int) -> FakeRun:
        log.append(FakeRun(cell, clock, took, clock.now, signals=signals))
        return log[-1]

    return start


FIVE = {"profiles": ["all", "kill", "move", "checkpoint", "global"], "time_limit_s": 10}


def test_budget_stops_new_runs() -> None:
    """Fake clock: before any run the estimate is 2x the time limit, then the slowest run."""
    m = parse_matrix(FIVE)
    clock, log = FakeClock(), []
    done = run_matrix(m, 95.0, _fake_runs(clock, 30.0, log), clock=clock, sleep=clock.sleep)
    # 0+20 fits; 30+30, 60+30 fit; 90+30 > 95.
    assert [a.cell.profile for a in done.attempts] == ["all", "kill", "move"]
    assert [c.profile for c in done.skipped] == ["checkpoint", "global"]
    assert done.interrupted is None
    done = run_matrix(m, 15.0, _fake_runs(clock, 30.0, []), clock=clock, sleep=clock.sleep)
    assert done.attempts == [] and len(done.skipped) == 5


def test_jobs_run_at_once_and_attempts_keep_the_matrix_order() -> None:
    m = parse_matrix(FIVE)
    clock, log = FakeClock(), []
    done = run_matrix(m, 1000.0, _fake_runs(clock, 30.0, log), jobs=2, clock=clock,
                      sleep=clock.sleep)
    assert [a.cell.profile for a in done.attempts] == FIVE["profiles"]
    assert [r.began for r in log] == [0.0, 0.0, 30.0, 30.0, 60.0]  # never more than 2
    assert clock.now == 90.0  # 3 rounds of 30 s, not 5


def test_interruption_stops_every_run_in_progress() -> None:
    m = parse_matrix(FIVE)
    clock, log = FakeClock(), []

    def sleep(seconds: float) -> None:
        clock.sleep(seconds)
        if clock.now >= 40.0:
            raise KeyboardInterrupt

    signals: list[str] = []
    done = run_matrix(m, 1000.0, _fake_runs(clock, 30.0, log, signals), jobs=2, clock=clock,
                      sleep=sleep)
    assert done.interrupted is not None
    assert [r.stopped for r in log] == [False, False, True, True]
    # Every run is told first: a run slow to stop does not hold back the other's SIGTERM.
    assert signals == ["SIGTERM move", "SIGTERM checkpoint", "stop move", "stop checkpoint"]
    assert [a.exit_code for a in done.attempts] == [0, 0, None, None]
    assert [c.profile for c in done.skipped] == ["global"]


def test_jobs_must_be_a_positive_number() -> None:
    assert parse_matrix({**FIVE, "jobs": 3}).jobs == 3
    with pytest.raises(UsageError, match="jobs"):
        parse_matrix({**FIVE, "jobs": 0})


def _junit(results_dir: Path) -> ET.Element:
    path = results_dir / NIGHTLY_JUNIT
    SCHEMA.validate(str(path))
    return ET.parse(path).getroot()


def test_passing_matrix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "results"
    # The bug is caught in one of its two runs: detected across runs, the nightly passes.
    code = nightly(results, 3600, _matrix(tmp_path, TINY),
                   _fake(**{"all/1/KAFKA-7672": 1, "default": 0}))
    assert code == 0
    printed = capsys.readouterr().out
    assert "kchaos nightly" in printed and "nightly passed" in printed
    assert printed.count("bug caught") == 1 and printed.count("bug missed") == 1
    assert (results / "index.html").exists()
    runs = [d for d in results.iterdir() if (d / "run.json").exists()]
    assert len(runs) == 4 and all((d / "report.html").exists() for d in runs)
    assert all((d / "junit.xml").exists() for d in runs)
    root = _junit(results)
    assert root.get("tests") == "5" and root.get("failures") == "0"
    summary = json.loads(next(results.glob("nightly-*/nightly.json")).read_text())
    assert summary["ok"] is True and len(summary["runs"]) == 4


@pytest.mark.parametrize(("outcomes", "reason"), [
    ({"fixed": 1, "KAFKA-7672": 1}, "fixed worker invalid"),
    ({"all/2/fixed": 2, "KAFKA-7672": 1}, "fixed worker unknown"),
    ({"all/1/fixed": "no-folder", "KAFKA-7672": 1}, "fixed worker run left no folder"),
])
def test_failing_matrix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], outcomes: dict, reason: str
) -> None:
    results = tmp_path / "results"
    assert nightly(results, 3600, _matrix(tmp_path, TINY), _fake(**outcomes)) == 1
    printed = capsys.readouterr().out
    assert reason in printed and "nightly passed" not in printed
    root = _junit(results)
    assert int(root.get("failures", "0")) + int(root.get("errors", "0")) >= 1
    # Every cell ran: one bad run does not stop the nightly.
    summary = json.loads(next(results.glob("nightly-*/nightly.json")).read_text())
    assert len(summary["runs"]) == 4 and summary["ok"] is False


@pytest.mark.parametrize(("profile", "code", "says"), [
    ("kill", 1, "bug KAFKA-7672 went undetected in all 2 run(s)"),
    ("all", 0, "missed by all (measured, not gated)"),
])
def test_a_missed_switch_fails_the_nightly_unless_only_the_broad_profile_ran_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], profile: str, code: int, says: str
) -> None:
    matrix = _matrix(tmp_path, TINY.replace("profiles: [all]", f"profiles: [{profile}]"))
    assert nightly(tmp_path / "results", 3600, matrix,
                   _fake(**{"fixed": 0, "KAFKA-7672": 0})) == code
    assert says in capsys.readouterr().out


def test_docker_cells_are_not_started_where_no_engine_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    results = tmp_path / "results"
    matrix = _matrix(tmp_path, TINY + "include:\n  - {profile: KIP-406, bugs: [], seeds: [1],"
                                      " args: [--platform, docker]}\n")
    # The fake would fail the docker cell; not started, it cannot fail the nightly.
    assert nightly(results, 3600, matrix, _fake(**{"KIP-406": 1, "KAFKA-7672": 1})) == 0
    assert "1 docker run(s) not started: no Docker engine answers" in capfd.readouterr().err
    summary = json.loads(next(results.glob("nightly-*/nightly.json")).read_text())
    assert len(summary["runs"]) == 4 and summary["ok"] is True
    (left_out,) = summary["not_started_no_engine"]
    assert left_out["profile"] == "KIP-406" and left_out["args"] == ["--platform", "docker"]


def test_hanging_run_is_stopped_and_counted(tmp_path: Path) -> None:
    results = tmp_path / "results"
    matrix = _matrix(tmp_path, "time_limit_s: 1\nrun_timeout_s: 2\nprofiles: [all]\n"
                               "seeds: [1, 2]\n")
    assert nightly(results, 3600, matrix, _fake(**{"all/1/fixed": "hang"})) == 1
    summary = json.loads(next(results.glob("nightly-*/nightly.json")).read_text())
    first, second = summary["runs"]
    assert first["exit_code"] is None and "stopped after 2 s" in first["note"]
    assert second["exit_code"] == 0  # the nightly went on


def test_budget_too_small_for_one_run(tmp_path: Path) -> None:
    results = tmp_path / "results"
    assert nightly(results, 1.0, _matrix(tmp_path, TINY), _fake()) == 2
    assert (results / "index.html").exists() and (results / NIGHTLY_JUNIT).exists()


NIGHTLY_IN_A_PROCESS = """
import signal
import sys
from pathlib import Path
# Ctrl-C at a terminal: a background job (CI started with `&`) inherits SIGINT ignored.
signal.signal(signal.SIGINT, signal.default_int_handler)
from harness.cli import _stop_on_sigterm
from harness.nightly import nightly

with _stop_on_sigterm():  # as `kchaos nightly` runs it
    try:
        code = nightly(Path(sys.argv[1]), 3600, Path(sys.argv[2]), sys.argv[3:])
    except KeyboardInterrupt:
        code = -1  # the nightly let the interruption through: no summary
sys.exit(code)
"""


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupted_nightly_stops_its_run_cleans_and_sums_up(
    tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    results = tmp_path / "results"
    matrix = _matrix(tmp_path, "time_limit_s: 1\nprofiles: [all]\nseeds: [1, 2]\n")
    proc = subprocess.Popen(
        [sys.executable, "-c", NIGHTLY_IN_A_PROCESS, str(results), str(matrix),
         *_fake(**{"all/1/fixed": "hang"})],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    try:
        deadline = time.monotonic() + 60
        run_pid = None
        while run_pid is None and time.monotonic() < deadline:
            for out in results.glob("nightly-*/001.out"):
                found = re.search(r"hanging: pid (\d+)", out.read_text())
                run_pid = int(found.group(1)) if found else None
            time.sleep(0.2)
        assert run_pid is not None, "the run never started"
        proc.send_signal(sig)
        # Generous: the run's stop grace (60 s), `kchaos clean` and the summary, on a
        # loaded machine (timed out at 120 s under load 15+); a hang still fails.
        stdout, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, stderr
    assert not psutil.pid_exists(run_pid) or psutil.Process(run_pid).status() == "zombie"
    log_dir = next(d for d in results.glob("nightly-*") if d.is_dir())
    assert (log_dir / "001.clean").exists()  # `kchaos clean` ran after the stopped run
    summary = json.loads((log_dir / "nightly.json").read_text())
    assert summary["interrupted"] is True and summary["ok"] is False
    assert [r["exit_code"] for r in summary["runs"]] == [None]
    assert "interrupted" in summary["runs"][0]["note"]
    assert len(summary["not_started"]) == 1  # seed 2 never started
    assert "nightly interrupted" in stdout and (results / NIGHTLY_JUNIT).exists()
