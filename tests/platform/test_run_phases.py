"""The order of a run's phases, where it matters for time: the brokers stop while the
check (which reads only stored files) runs. Pure logic: the phases are replaced by
functions that record what they saw."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from harness.config.run import RunConfig
from harness.run.drain import DrainOutcome
from harness.run.lifecycle import Run

WAIT_S = 10.0


def test_the_brokers_stop_while_the_check_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stopping, checked = threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def tear_down() -> None:
        if stopping.is_set():
            return  # the final clean-up's second call
        stopping.set()
        seen["check ran meanwhile"] = checked.wait(WAIT_S)

    def check() -> bool:
        seen["brokers stopping meanwhile"] = stopping.wait(WAIT_S)
        checked.set()
        return True

    run = Run(RunConfig(profile="kill", seed=1, time_limit_s=30), tmp_path)
    for name, action in {
        "_setup": lambda: "127.0.0.1:9", "_load": lambda _: None, "_heal": lambda: None,
        "_drain": lambda _: DrainOutcome(True, 0.0, 60.0, 240.0), "_stop_workload": lambda: None,
        "_collect": lambda *_: None, "_tear_down_placement": tear_down,
        "_report": lambda: None,
    }.items():
        monkeypatch.setattr(run, name, action)
    monkeypatch.setattr(run.check, "judge", check)
    outcome = run.execute()
    # Before: the brokers stopped first, and each side waited for the other in vain.
    assert seen == {"brokers stopping meanwhile": True, "check ran meanwhile": True}
    assert outcome.verdict is True
    timings = json.loads((run.run_dir / "run.json").read_text())["timings"]
    assert {"stop-kafka_s", "check_s"} <= set(timings)
