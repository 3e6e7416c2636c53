"""What the detection tests on each platform share (test_detection.py on local,
test_docker_detection.py on docker): a `kchaos` run as a subprocess, what it judged, its
plan beside the one its seed draws, and a repro that must bring its anomaly back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from faults.plan import plan

SEED = "1"


def kchaos(results: Path, *args: str) -> tuple[int, Path, str]:
    """`kchaos --results-dir RESULTS ARGS` that made a run folder: (exit code, the folder,
    what it printed)."""
    done = subprocess.run(
        [sys.executable, "-m", "harness", "--results-dir", str(results), *args],
        capture_output=True, text=True, timeout=900,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("run folder: ")]
    assert lines, f"no run folder in output:\n{done.stdout}\n{done.stderr[-3000:]}"
    return done.returncode, Path(lines[-1].removeprefix("run folder: ").strip()), done.stdout


def outcome(run_dir: Path) -> dict[str, Any]:
    return dict(json.loads((run_dir / "results.json").read_text()))


def steps(run_dir: Path) -> list[dict[str, Any]]:
    return list(json.loads((run_dir / "plan.json").read_text())["steps"])


def planned_steps(run_dir: Path) -> list[tuple[Any, ...]]:
    return [(s["fault"], s["target"], s["trigger"]["at_s"], s["trigger"]["condition"])
            for s in steps(run_dir)]


def expected_steps(profile: str, run_dir: Path) -> list[tuple[Any, ...]]:
    """The steps `profile` draws for SEED with the run's pods, brokers and time limit."""
    config = json.loads((run_dir / "run.json").read_text())["config"]
    drawn = plan(int(SEED), profile, config["pods"], config["brokers"], config["time_limit_s"])
    return [(s.fault, s.target, s.trigger.at_s, s.trigger.condition) for s in drawn.steps]


def repro_brings_it_back(run_dir: Path, spark_url: str) -> Path:
    """`kchaos repro RUN_DIR --times 1` of a failing run: it fails again, its table says
    the anomaly came back, and its one replay, beside the run, ran the same plan. The
    replay's folder."""
    done = subprocess.run(
        [sys.executable, "-m", "harness", "repro", str(run_dir), "--times", "1",
         "--spark-master", spark_url],
        capture_output=True, text=True, timeout=900,
    )
    assert done.returncode == 1, done.stdout + done.stderr[-2000:]
    assert "unavailable" in done.stdout and "1/1" in done.stdout
    (replay,) = [p for p in run_dir.parent.iterdir() if p.is_dir() and p != run_dir]
    assert planned_steps(replay) == planned_steps(run_dir)
    return replay


def app_valid_under_kills(results: Path, app: Path, spec: Path,
                          spark_url: str) -> tuple[Path, dict[str, Any]]:
    """`kchaos run --sut app` of `app` under `kill` seed 1 for 20 s: a pod killed, exit 0,
    the oracle valid on more than 100 records. The run folder and meta.json's `app`."""
    code, run_dir, printed = kchaos(
        results, "run", "--sut", "app", "--app", str(app), "--input", str(spec),
        "--profile", "kill", "--seed", SEED, "--time-limit", "20", "--spark-master", spark_url)
    history = (run_dir / "history.jsonl").read_text().splitlines()
    assert any('"nemesis"' in line and '"kill"' in line for line in history), "no pod killed"
    oracle = outcome(run_dir)["checks"]["oracle"]
    assert code == 0 and oracle["valid"] is True, (printed, oracle)
    assert oracle["details"]["compared_records"] > 100, oracle["details"]
    return run_dir, dict(json.loads((run_dir / "history" / "meta.json").read_text())["app"])
