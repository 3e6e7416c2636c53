"""The fault-injection hook: a small JSON file the nemesis writes, the worker reads.

Format: `{"checkpoint_delay_ms": N}` (unknown keys ignored, missing file = no faults).
The worker re-reads the file whenever its mtime (or size) changes and sleeps N ms before
every checkpoint write, tracing `checkpoint-delay`. A torn or invalid file keeps the last
good values, so a half-written update by the nemesis can never crash the system under test.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path


class ControlFile:
    def __init__(self, path: Path | None) -> None:
        self._path = path
        self._stamp: tuple[int, int] | None = None
        self._delay_ms = 0
        self._lock = threading.Lock()

    def checkpoint_delay_ms(self) -> int:
        if self._path is None:
            return 0
        with self._lock:
            try:
                st = self._path.stat()
            except FileNotFoundError:
                self._stamp, self._delay_ms = None, 0
                return 0
            stamp = (st.st_mtime_ns, st.st_size)
            if stamp != self._stamp:
                try:
                    data = json.loads(self._path.read_text() or "{}")
                    self._delay_ms = max(0, int(data.get("checkpoint_delay_ms", 0)))
                    self._stamp = stamp
                except (ValueError, OSError, AttributeError, TypeError):
                    pass  # keep the last good value; retried on the next call
            return self._delay_ms
