"""`kchaos run` in the test's own process, refused as bad input must be: the one check the
tests of a refusal share (the subprocess form is tests/platform/cli_helpers.py's)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from harness.cli import main


def refused_run(results: Path, args: Sequence[str], capsys: pytest.CaptureFixture[str]) -> str:
    """`kchaos --results-dir RESULTS run ARGS`: exit 254, one line on stderr, no run folder
    in `results`; returns that line with its whitespace as single spaces (rich wraps a long
    line where the terminal is narrow)."""
    code = main(["--results-dir", str(results), "run", *args])
    err = capsys.readouterr().err
    assert code == 254, err
    assert len(err.strip().splitlines()) == 1, err
    assert not results.exists() or not any(results.iterdir()), list(results.iterdir())
    return " ".join(err.split())
