"""The accounts (global) topic as the run and the nemesis use it: the workload's writer,
with each write recorded as a history op so the checker knows what the topic held."""

from __future__ import annotations

import threading
from typing import Any

from kafka.errors import KafkaError

from harness.history import History
from harness.run.topics import delete_records_before, end_offsets
from workloads.ledger.accounts import AccountsWriter
from workloads.ledger.contract import ACCOUNTS_TOPIC

PROCESS = "accounts"
BUMP_PERIOD_S = 2.0


class AccountsTopic:
    """Implements `faults.context.GlobalTopic`."""

    def __init__(self, bootstrap: str, history: History, accounts: int, seed: int) -> None:
        self.bootstrap = bootstrap
        self.history = history
        self._lock = threading.Lock()  # the writer's producer is shared with the nemesis
        self.writer = AccountsWriter(bootstrap, accounts, seed, on_write=self._recorded)

    def _recorded(self, value: dict[str, Any]) -> None:
        self.history.record(PROCESS, "ok", "publish", value)

    def publish_all(self) -> int:
        with self._lock:
            self.writer.publish_all()
        return self.writer.accounts

    def bump_periodically(self, stop: threading.Event) -> None:
        """New versions of random accounts during the load, so joins have something to lag.
        A bump the brokers do not acknowledge in time (all of them down, under `broker`) is
        recorded as indeterminate and the next one tried: the thread lives through faults."""
        while not stop.wait(BUMP_PERIOD_S):
            with self._lock:
                try:
                    self.writer.bump_one()
                except KafkaError as exc:
                    self.history.record(PROCESS, "info", "publish",
                                        {"error": f"{type(exc).__name__}: {exc}"})

    def republish(self) -> int:
        return self.publish_all()

    def end_offset(self) -> int:
        return end_offsets(self.bootstrap, ACCOUNTS_TOPIC).get(0, 0)

    def delete_before(self, offset: int) -> None:
        delete_records_before(self.bootstrap, ACCOUNTS_TOPIC, 0, offset)

    def close(self) -> None:
        self.writer.close()
