"""The accounts topic's bumps live through faults: a bump the brokers do not acknowledge
(all of them down under `broker`) is recorded as indeterminate, and the next one is tried.
Before, the thread died on the first KafkaTimeoutError and the global table stopped moving
for the rest of the run."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from kafka.errors import KafkaTimeoutError

from harness.history import History
from harness.run import accounts
from harness.run.accounts import AccountsTopic


class FlakyWriter:
    def __init__(self, stop: threading.Event) -> None:
        self.calls = 0
        self.stop = stop

    def bump_one(self) -> str:
        self.calls += 1
        if self.calls == 1:
            raise KafkaTimeoutError("Timeout after waiting for 30 secs")
        if self.calls == 3:
            self.stop.set()
        return "acct-00001"


def test_a_bump_that_times_out_is_recorded_and_the_bumps_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(accounts, "BUMP_PERIOD_S", 0.01)
    stop = threading.Event()
    topic = AccountsTopic.__new__(AccountsTopic)  # no producer: the writer is the fake's
    topic.history = History(tmp_path)
    topic._lock = threading.Lock()
    topic.writer = FlakyWriter(stop)  # type: ignore[assignment]
    worker = threading.Thread(target=topic.bump_periodically, args=(stop,), daemon=True)
    worker.start()
    worker.join(timeout=10)
    topic.history.close()
    assert not worker.is_alive()
    assert topic.writer.calls == 3  # type: ignore[attr-defined]
    ops = (tmp_path / "history.jsonl").read_text()
    assert '"type":"info","f":"publish"' in ops and "KafkaTimeoutError" in ops
