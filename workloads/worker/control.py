"""The fault-injection hook: a small JSON file the nemesis writes, the worker reads.

Format: `{"checkpoint_delay_ms": N, "checkpoint_delay_reasons": ["close", ...]}` (unknown
keys ignored, missing file = no faults). The worker re-reads the file whenever its mtime
(or size) changes and sleeps N ms before every checkpoint write, or, with a non-empty
`checkpoint_delay_reasons`, only before writes for one of those reasons (`close`,
`suspend`, `standby-commit`, ...: the `reason` of the `checkpoint-write` trace event), tracing
`checkpoint-delay`. A torn or invalid file keeps the last good values, so a half-written
update by the nemesis can never crash the system under test.
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
        self._reasons: frozenset[str] = frozenset()  # empty: every write is delayed
        self._lock = threading.Lock()

    def checkpoint_delay_ms(self, reason: str) -> int:
        """How long a checkpoint write for `reason` sleeps first."""
        self._reload()
        if self._reasons and reason not in self._reasons:
            return 0
        return self._delay_ms

    def _reload(self) -> None:
        if self._path is None:
            return
        with self._lock:
            try:
                st = self._path.stat()
            except FileNotFoundError:
                self._stamp, self._delay_ms, self._reasons = None, 0, frozenset()
                return
            stamp = (st.st_mtime_ns, st.st_size)
            if stamp == self._stamp:
                return
            try:
                data = json.loads(self._path.read_text() or "{}")
                delay_ms = max(0, int(data.get("checkpoint_delay_ms", 0)))
                reasons = frozenset(str(r) for r in data.get("checkpoint_delay_reasons") or ())
            except (ValueError, OSError, AttributeError, TypeError):
                return  # keep the last good values; retried on the next call
            self._delay_ms, self._reasons, self._stamp = delay_ms, reasons, stamp
