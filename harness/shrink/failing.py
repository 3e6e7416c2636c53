"""A failing run as the start of a search over reruns (`kchaos shrink`, `kchaos bisect`):
what refuses it before anything runs (one line, 254), and the run itself as the first
rerun of its own candidate."""

from __future__ import annotations

import json
from pathlib import Path

from harness.errors import UsageError
from harness.shrink.classes import anomaly_classes, chosen_classes
from harness.shrink.search import RunResult


def check_reruns(times: int, min_hits: int) -> None:
    if times < 1 or min_hits < 1:
        raise UsageError("--times and --min-hits must be at least 1")
    if min_hits > times:
        raise UsageError(f"--min-hits {min_hits} > --times {times}: a candidate cannot hit "
                         "more often than it is rerun")


def require_run_folder(run_dir: Path, which: str) -> None:
    if not (run_dir / "run.json").is_file():
        raise UsageError(f"{run_dir} is not a kchaos run folder (no run.json): pass the "
                         f"`run folder:` {which} printed")


def target_classes_of(run_dir: Path, anomaly: str | None, search: str) -> tuple[str, ...]:
    """The anomaly classes a rerun must show: `--anomaly`, or the run's own."""
    if not (run_dir / "results.json").is_file():
        raise UsageError(f"{run_dir} was never judged (no results.json): run "
                         f"`kchaos check {run_dir}` first")
    found = anomaly_classes(run_dir)
    if not found:
        raise UsageError(f"{run_dir} found no anomaly: {search} needs a failing run "
                         "(verdict INVALID)")
    return chosen_classes(found, anomaly, run_dir.name)


def original_result(run_dir: Path) -> RunResult:
    """The failing run itself, counted as the first rerun of what it ran."""
    try:
        code = int(json.loads((run_dir / "run.json").read_text()).get("exit_code", 1))
    except (OSError, ValueError, TypeError, AttributeError):
        code = 1
    return RunResult(str(run_dir), anomaly_classes(run_dir), code, 0.0)
