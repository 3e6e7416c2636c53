"""The results folder: one sub-folder per run (layout in results/README.md)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from common.files import write_json_atomically
from harness.errors import HarnessError, UsageError

DEFAULT_RESULTS_DIR = Path("results")


def new_run_dir(results_dir: Path, label: str) -> Path:
    """Create `results/<timestamp>-<label>/`, unique even for runs started in one second."""
    try:
        results_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create results folder {results_dir}: {exc.strerror}") from exc
    stamp = time.strftime("%Y%m%dT%H%M%S")
    for n in range(1000):
        name = f"{stamp}-{label}" if n == 0 else f"{stamp}-{label}-{n}"
        path = results_dir / name
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue
        except OSError as exc:
            raise UsageError(
                f"cannot create a run folder in {results_dir}: {exc.strerror}; "
                "pass a writable --results-dir"
            ) from exc
    # Not the user's doing: a thousand runs of one label in one second is a harness bug.
    raise HarnessError(f"too many runs named {stamp}-{label} in {results_dir}")


def write_json(path: Path, payload: Any) -> None:
    """Write atomically so a reader never sees half a file."""
    write_json_atomically(path, payload)


def read_json(path: Path) -> Any:
    """Read a run file; a missing or corrupt one is bad input (exit 254), not a crash."""
    try:
        return json.loads(path.read_text())
    except FileNotFoundError as exc:
        raise UsageError(f"{path} is missing: is {path.parent} a kchaos run folder?") from exc
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path} is unreadable ({exc}): the run folder is damaged") from exc
