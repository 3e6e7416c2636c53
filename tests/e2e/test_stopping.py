"""`kchaos run` stopped by SIGTERM (as the nightly and CI stop it) mid-fault: it stops
like Ctrl-C, its exit code and run.json agree, nothing it started is left, and the paused
pod is not resumed just to be stopped.

The real thing: its own Kafka broker, worker processes, the nemesis."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from faults.plan import plan
from harness.procs import is_same_process, load_records

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

# Profile `kill` with seed 5 pauses a pod 6 s into the load and resumes it 8 s later:
# a wide window to stop the run in, with a fault in force.
PROFILE, SEED, TIME_LIMIT = "kill", 5, 30
REPO = Path(__file__).resolve().parents[2]


def _ops(run_dir: Path) -> list[dict]:
    path = run_dir / "history.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]


def test_sigterm_mid_pause_stops_the_run_cleanly(tmp_path: Path) -> None:
    first = plan(SEED, PROFILE, 2, 1, TIME_LIMIT).steps[0]
    assert first.fault == "pause" and (first.heal_after_s or 0) >= 5, "the plan moved"
    results = tmp_path / "results"
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "--results-dir", str(results), "run",
         "--profile", PROFILE, "--seed", str(SEED), "--time-limit", str(TIME_LIMIT)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)}, start_new_session=True,
    )
    run_dir: Path | None = None
    try:
        deadline = time.monotonic() + 240
        paused = False
        while not paused and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
            run_dir = next(iter(results.glob("*-kill-s5")), None)
            paused = run_dir is not None and any(
                op["f"] == "pause" and op["value"].get("phase") == "start"
                for op in _ops(run_dir))
        assert paused, "the pause never came"
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert run_dir is not None
    # Before: killed by the signal (-15), run.json without an exit code, processes left.
    assert proc.returncode == 143, stderr[-2000:]
    info = json.loads((run_dir / "run.json").read_text())
    assert info["exit_code"] == 143 and "Interrupted" in info["error"]
    alive = [r for r in load_records(run_dir / "pids.json") if is_same_process(r)]
    assert not alive, f"left behind: {alive}"
    ops = _ops(run_dir)
    # The paused pod was killed where it stood: no resume, no restart at heal.
    assert not any(op["f"] == "pause" and op["value"].get("phase") == "end" for op in ops)
    assert not any(op["f"] == "heal-start" for op in ops)
    assert (run_dir / "report.html").exists()
