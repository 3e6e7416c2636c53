"""The live status line of `kchaos run` ends its line before the verdict, also where the
output is a file or a pipe (stderr and stdout then often go to one place: a CI log)."""

from __future__ import annotations

import io
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.console import Console

from harness.config.run import RunConfig
from harness.run import command
from harness.run.lifecycle import RunOutcome
from harness.run.progress import Progress


def test_the_verdict_starts_a_line_of_its_own_in_a_log(monkeypatch: pytest.MonkeyPatch) -> None:
    log = io.StringIO()  # 2>&1 into one file: not a terminal
    monkeypatch.setattr(command, "err", Console(file=log, force_terminal=False, width=200))
    monkeypatch.setattr(command, "out", Console(file=log, force_terminal=False, width=200))
    progress = Progress(faults_planned=1, pods=2)

    def execute(sink):  # type: ignore[no-untyped-def]
        progress.lag = 619
        sink(progress)
        return RunOutcome(Path("run"), True, 0)

    run = SimpleNamespace(progress=progress, execute=execute)
    command.execute_showing_progress(RunConfig(), run)  # type: ignore[arg-type]
    command.out.print("verdict VALID")
    lines = log.getvalue().splitlines()
    assert "lag 619" in lines[-2], lines
    assert lines[-1] == "verdict VALID", lines  # before: "...lag 619verdict VALID"
