"""Fixtures of the report tests: synthetic run folders (valid, invalid, crashed) in a
results folder, built from Python (synth_run.py)."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

# pytest runs with --import-mode=importlib, which puts no test folder on sys.path; the
# helpers beside this file are plain modules the tests import.
sys.path.insert(0, str(Path(__file__).parent))

from synth_run import Spec, make_run


@pytest.fixture
def results_dir(tmp_path: Path) -> Path:
    path = tmp_path / "results"
    path.mkdir()
    return path


@pytest.fixture
def valid_run(results_dir: Path) -> Path:
    return make_run(results_dir, "20251009T020000-all-7", Spec())


@pytest.fixture
def invalid_run(results_dir: Path) -> Path:
    spec = Spec(verdict="invalid", profile="KAFKA-20685", seed=3, bugs=("KAFKA-20685",),
                started_at=datetime(2025, 10, 9, 3, 0, tzinfo=UTC))
    return make_run(results_dir, "20251009T030000-KAFKA-20685-3", spec)


@pytest.fixture
def crashed_run(results_dir: Path) -> Path:
    """A run killed mid-way: no results, a torn history line, a corrupt plan."""
    spec = Spec(verdict="unknown", exit_code=255, missing=("results.json",),
                corrupt=("plan.json",), started_at=datetime(2025, 10, 9, 4, 0, tzinfo=UTC))
    run_dir = make_run(results_dir, "20251009T040000-all-7", spec)
    with (run_dir / "history.jsonl").open("a") as fh:
        fh.write('{"index": 99999, "time_ns": 17')
    return run_dir
