"""The run's history: Jepsen-style ops appended to `history.jsonl` as they happen."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HISTORY_FILE = "history.jsonl"


class History:
    """Thread-safe, line-buffered: what was recorded survives a crash of the harness."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / HISTORY_FILE
        self._lock = threading.Lock()
        self._index = 0
        self._file = open(self.path, "a", buffering=1)  # noqa: SIM115 - closed in close()

    def record(self, process: str, type_: str, f: str, value: dict[str, Any]) -> int:
        with self._lock:
            index = self._index
            self._index += 1
            op = {"index": index, "time_ns": time.time_ns(), "process": process,
                  "type": type_, "f": f, "value": value}
            self._file.write(json.dumps(op, separators=(",", ":")) + "\n")
            return index

    def close(self) -> None:
        with self._lock:
            self._file.close()


@dataclass
class LoadCounters:
    """The client's ops as the progress line counts them (the ledger's or an app's load)."""

    sent: int = 0
    acked: int = 0
    unknown: int = 0
