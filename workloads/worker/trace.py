"""JSONL trace events (the contract is workloads/ledger/trace_contract.py;
tests/test_trace_contract.py checks that what this worker emits is declared there).

One line per event, appended with a single `write(2)` on an O_APPEND descriptor so lines
from several threads, and from successive runs of the same pod, never interleave.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any


class Tracer:
    def __init__(self, path: Path | None, pod: str) -> None:
        self._pod = pod
        self._pid = os.getpid()
        self._fd: int | None = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def emit(self, thread: str, event: str, **fields: Any) -> None:
        rec = {
            "ts_ns": time.time_ns(),
            "pod": self._pod,
            "pid": self._pid,
            "thread": thread,
            "event": event,
            **fields,
        }
        line = json.dumps(rec, separators=(",", ":"), default=str) + "\n"
        if self._fd is not None:
            os.write(self._fd, line.encode())
        else:
            sys.stderr.write(line)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def read_trace(path: Path) -> list[dict[str, Any]]:
    """All events of a trace file (tests and tools); a torn last line is ignored."""
    events: list[dict[str, Any]] = []
    if not path.exists():
        return events
    for line in path.read_text().splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return events
