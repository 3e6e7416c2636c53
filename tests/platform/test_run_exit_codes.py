"""The exit code `kchaos` ends with and the one run.json records agree, whatever ends
the run; `repro` composes its replays' codes as verdicts compose (false > unknown > true).

Pure logic: the phases are replaced by functions that return or raise at once."""

from __future__ import annotations

import argparse
import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from harness import cli
from harness.config.run import RunConfig
from harness.errors import (
    HarnessError,
    Interrupted,
    StopSignal,
    UsageError,
    exit_code_for_exception,
)
from harness.run import command
from harness.run.lifecycle import Run, RunOutcome


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setup: Any) -> Run:
    run = Run(RunConfig(profile="kill", seed=1, time_limit_s=30), tmp_path)
    monkeypatch.setattr(run, "_setup", setup)
    monkeypatch.setattr(run, "_report", lambda: None)
    return run


@pytest.mark.parametrize(("error", "code"), [
    (KeyboardInterrupt(), 130),
    (Interrupted(15), 143),
    (UsageError("bad"), 254),
    (HarnessError("broke"), 255),
    (RuntimeError("bug"), 255),
    (OSError(28, "No space left on device", "run.json"), 254),
])
def test_run_json_records_the_exit_code_of_the_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: BaseException, code: int
) -> None:
    def setup() -> str:
        raise error

    run = _run(tmp_path, monkeypatch, setup)
    with pytest.raises(type(error)) as caught:
        run.execute()
    assert exit_code_for_exception(caught.value) == code
    info = json.loads((run.run_dir / "run.json").read_text())
    # Before: 2 (unknown) for Ctrl-C, 255 for everything else.
    assert info["exit_code"] == code and info["verdict"] == "unknown"
    assert type(error).__name__ in info["error"]


def test_a_stop_signal_a_library_swallowed_still_ends_the_run_as_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """SIGTERM during kafka-python's bootstrap: the library retried past the Interrupted
    the handler raised and failed with KafkaTimeoutError; that run said "harness failed"
    and recorded 255. A real signal, through `kchaos`'s own handler."""

    class Swallowing(argparse.ArgumentParser):
        def parse_args(self, *_: Any, **__: Any) -> Any:  # type: ignore[override]
            return argparse.Namespace(handler=self.handle, results_dir=tmp_path)

        @staticmethod
        def handle(args: argparse.Namespace) -> int:
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(5)
            except KeyboardInterrupt:
                pass  # what a retry loop does with it
            raise RuntimeError("Unable to bootstrap from 127.0.0.1:9")

    monkeypatch.setattr(StopSignal, "received", None)  # restored at teardown: no leak
    monkeypatch.setattr(cli, "build_parser", Swallowing)
    assert cli.main([]) == 143
    assert "stopped by signal" in capsys.readouterr().err
    assert not (tmp_path / "kchaos-crash.txt").exists(), "no harness failure to report"
    # run.json records the same code as the process ends with
    run = _run(tmp_path, monkeypatch, lambda: (_ for _ in ()).throw(RuntimeError("bootstrap")))
    with pytest.raises(RuntimeError):
        run.execute()
    assert json.loads((run.run_dir / "run.json").read_text())["exit_code"] == 143


@pytest.mark.parametrize(("codes", "expected"), [([1, 2], 1), ([2, 0], 2), ([0, 0], 0)])
def test_repro_composes_replay_codes_like_verdicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, codes: list[int], expected: int
) -> None:
    replays = iter(codes)
    monkeypatch.setattr(command, "read_config_and_plan", lambda run_dir: (RunConfig(), None))
    monkeypatch.setattr(command, "require_tools", lambda config: None)

    def execute(config: RunConfig, where: Path, plan: Any) -> RunOutcome:
        code = next(replays)
        return RunOutcome(tmp_path, {0: True, 1: False, 2: "unknown"}[code], code)

    monkeypatch.setattr(command, "execute", execute)
    # Before: max(codes), so an anomaly found in one replay and unknown in the next was 2.
    assert command.repro(tmp_path, len(codes), None) == expected


def test_repro_checks_where_it_is_told(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    masters: list[str | None] = []
    monkeypatch.setattr(command, "read_config_and_plan", lambda run_dir: (RunConfig(), None))
    monkeypatch.setattr(command, "require_tools", lambda config: None)

    def execute(config: RunConfig, where: Path, plan: Any) -> RunOutcome:
        masters.append(config.spark_master)
        return RunOutcome(tmp_path, True, 0)

    monkeypatch.setattr(command, "execute", execute)
    command.repro(tmp_path, 1, None)
    command.repro(tmp_path, 1, None, "sc://127.0.0.1:15002")
    assert masters == [None, "sc://127.0.0.1:15002"]
