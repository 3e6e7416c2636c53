"""Which anomaly classes count as "the same failure" when a plan is rerun: read from a run's
results.json by repro, shrink and bisect alike."""

from __future__ import annotations

import json
from pathlib import Path

from harness.errors import UsageError

# Judged on progress under load: a slow machine produces it without any bug. A shrink
# aims at it only when the run found nothing else.
LOAD_CLASSES = ("unavailable",)
# In a shrink's plan folder's run.json: the classes its repro aims at.
TARGET_KEY = "shrink_target"


def failing_counts(results: object) -> dict[str, int]:
    """The anomaly counts of the checks that judged the run invalid. A count the verdict
    allows (duplicate-output under at-least-once is counted, and valid) is not a failure
    to reproduce; a results.json without per-check verdicts falls back on its counts."""
    if not isinstance(results, dict):
        return {}
    checks = results.get("checks")
    if isinstance(checks, dict):
        return {name: max(int(r.get("count") or 0), 1) for name, r in checks.items()
                if isinstance(r, dict) and r.get("valid") is False}
    counts = results.get("anomaly_counts", {})
    if not isinstance(counts, dict):
        return {}
    return {name: n for name, n in counts.items() if isinstance(n, int) and n > 0}


def read_failing_counts(run_dir: Path) -> dict[str, int]:
    """`failing_counts` of run_dir/results.json (none if it is missing or damaged)."""
    try:
        return failing_counts(json.loads((run_dir / "results.json").read_text()))
    except (OSError, ValueError):
        return {}


def anomaly_classes(run_dir: Path) -> tuple[str, ...]:
    """The classes of the checks that failed the run, sorted."""
    return tuple(sorted(read_failing_counts(run_dir)))


def target_classes(found: tuple[str, ...]) -> tuple[str, ...]:
    """The classes a rerun must show one of: those the original found, less the load ones
    when there is anything else."""
    specific = tuple(c for c in found if c not in LOAD_CLASSES)
    return specific or found


def rate_text(hits: int, runs: int) -> str:
    return f"{hits}/{runs} ({100.0 * hits / runs:.0f}%)" if runs else "0/0"


def chosen_classes(found: tuple[str, ...], anomaly: str | None, run_name: str) -> tuple[str, ...]:
    """`--anomaly A[,B]` (each one the run found), or the run's own less the load ones."""
    if anomaly is None:
        return target_classes(found)
    chosen = tuple(a for a in anomaly.split(",") if a)
    unknown = [a for a in chosen if a not in found]
    if not chosen or unknown:
        raise UsageError(f"--anomaly {anomaly}: choose among what {run_name} found: "
                         f"{','.join(found)}")
    return chosen
