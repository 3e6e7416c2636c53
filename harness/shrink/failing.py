"""A failing run as the start of a search over reruns (`kchaos shrink`, `kchaos bisect`):
what refuses it before anything runs (one line, 254), and the run itself as the first
rerun of its own candidate."""

from __future__ import annotations

import json
from pathlib import Path

from harness.anomalies import anomaly_classes, chosen_classes
from harness.errors import UsageError
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


def target_classes_of(run_dir: Path, anomaly: str | None, search: str,
                      from_valid: bool = False) -> tuple[str, ...]:
    """The anomaly classes a rerun must show: `--anomaly`, or the run's own. With
    `from_valid`, a valid run is a start too (a search toward where a bug begins): then
    `--anomaly` names what to look for."""
    if not (run_dir / "results.json").is_file():
        raise UsageError(f"{run_dir} was never judged (no results.json): run "
                         f"`kchaos check {run_dir}` first")
    found = anomaly_classes(run_dir)
    if found:
        return chosen_classes(found, anomaly, run_dir.name)
    if not from_valid:
        raise UsageError(f"{run_dir} found no anomaly: {search} needs a failing run "
                         "(verdict INVALID)")
    if anomaly is None:
        raise UsageError(f"{run_dir} found no anomaly: to {search} from a valid run toward "
                         "the release where an anomaly begins, name it with --anomaly "
                         "A[,B] (e.g. --anomaly dedup-skip,lost-history)")
    return named_classes(anomaly)


def named_classes(anomaly: str) -> tuple[str, ...]:
    """`--anomaly A[,B]` for a run that found none: each a check's name."""
    from checker.checks import APP_CHECKS, CHECKS

    known = sorted({*CHECKS, *APP_CHECKS})
    chosen = tuple(a for a in anomaly.split(",") if a)
    unknown = [a for a in chosen if a not in known]
    if not chosen or unknown:
        raise UsageError(f"--anomaly {anomaly}: name checks, among {', '.join(known)}")
    return chosen


def original_result(run_dir: Path) -> RunResult:
    """The failing run itself, counted as the first rerun of what it ran."""
    try:
        code = int(json.loads((run_dir / "run.json").read_text()).get("exit_code", 1))
    except (OSError, ValueError, TypeError, AttributeError):
        code = 1
    return RunResult(str(run_dir), anomaly_classes(run_dir), code, 0.0)
