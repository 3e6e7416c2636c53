"""Running `kchaos` as a new user would, from an empty working directory, and the shape
every bad-input answer must have: exit 254, one line that says what to do."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def kchaos(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        capture_output=True, text=True, timeout=timeout, env=environment, cwd=cwd,
    )


def assert_bad_input(result: subprocess.CompletedProcess[str], *says: str) -> str:
    """Exit 254, one line on stderr naming each of `says`, no traceback; returns the line."""
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 254, (result.returncode, result.stdout, result.stderr)
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    for word in says:
        assert word in lines[0], lines[0]
    return lines[0]


def files_under(folder: Path) -> list[Path]:
    return sorted(p.relative_to(folder) for p in folder.rglob("*")) if folder.exists() else []
