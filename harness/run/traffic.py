"""The workload client behind the run: the ledger event client, its ops recorded in the
history and counted for the progress display."""

from __future__ import annotations

import threading
from typing import Any

from harness.history import History, LoadCounters
from workloads.ledger.client import ClientConfig, EventClient

PROCESS = "client-0"


class LoadClient:
    def __init__(
        self, bootstrap: str, history: History, seed: int, accounts: int,
        duplicate_fraction: float, rate: float,
    ) -> None:
        self.history = history
        self.counters = LoadCounters()
        self._lock = threading.Lock()
        config = ClientConfig(seed=seed, rate=rate, accounts=accounts,
                              dup_fraction=duplicate_fraction)
        self.client = EventClient(bootstrap, config, self._on_op)

    def _on_op(self, type_: str, f: str, value: dict[str, Any]) -> None:
        self.history.record(PROCESS, type_, f, value)
        with self._lock:
            if type_ == "invoke":
                self.counters.sent += 1
            elif type_ == "ok":
                self.counters.acked += 1
            else:
                self.counters.unknown += 1

    def run(self, duration_s: float, stop: threading.Event) -> None:
        self.client.run(duration_s=duration_s, stop=stop)

    def close(self, timeout_s: float = 30.0) -> None:
        """Wait for outstanding sends; unresolved ones stay without completion (indeterminate)."""
        try:
            self.client.close(timeout_s)
        except Exception as exc:  # a flush that times out must not lose the run
            self.history.record(PROCESS, "info", "close", {"error": type(exc).__name__})
