"""A single `kchaos run` checks on a Spark it started beside its load: by the check, the
server is up and its queries compiled, so the run does not pay a JVM's start after the
load. The real thing: a broker, two workers, a Spark Connect server; nothing left after."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from harness.procs import is_same_process, load_records

pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]


def _servers_on(port: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(proc.info["cmdline"] or ())
        if "SparkConnectServer" in cmdline and f"binding.port={port}" in cmdline:
            found.append(proc)
    return found


def test_a_run_checks_on_the_spark_it_warmed_up_beside_its_load(tmp_path: Path) -> None:
    results = tmp_path / "results"
    done = subprocess.run(
        [sys.executable, "-m", "harness", "--results-dir", str(results), "run",
         "--profile", "kill", "--seed", "1", "--time-limit", "20"],
        capture_output=True, text=True, cwd=tmp_path, timeout=900,
        env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    run_dir = next(results.glob("*-kill-s1"))
    figures = json.loads((run_dir / "results.json").read_text())["figures"]
    info = json.loads((run_dir / "run.json").read_text())
    assert figures["spark_master"] == info["check_spark"]["url"], figures
    assert figures["spark_master"].startswith("sc://127.0.0.1:"), figures
    assert "spark_fallback" not in figures, figures
    assert info["check_spark"]["failed"] is None
    assert info["check_spark"]["warm_up_s"] is not None  # warmed up before the check
    assert "Using incubator modules" not in done.stdout + done.stderr
    # Stopped with the run: not in the registry, not running.
    assert not [r for r in load_records(run_dir / "pids.json") if is_same_process(r)]
    assert not _servers_on(figures["spark_master"].rsplit(":", 1)[1])
