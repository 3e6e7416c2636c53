"""The state directory `<state.dir>/<application.id>/`: task directories, their in-memory
locks (one owner thread per task directory inside the process, as Kafka Streams'
StateDirectory), and the cleaner's selection of obsolete directories."""

from __future__ import annotations

import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from workloads.worker.checkpoint import make_dirs_durable

GLOBAL_DIR = "global"
CLEANER = "cleaner"


@dataclass(frozen=True)
class Cleaned:
    task: str
    age_s: float


class StateDirectory:
    def __init__(self, app_dir: Path) -> None:
        self.app_dir = app_dir
        make_dirs_durable(self.app_dir)
        self._owners: dict[str, str] = {}
        self._mutex = threading.Lock()

    def task_dir(self, task: str, create: bool = True) -> Path:
        d = self.app_dir / task
        if create:
            make_dirs_durable(d)
        return d

    def lock(self, task: str, owner: str) -> bool:
        """Take the task directory lock for `owner`; re-entrant for the same owner."""
        with self._mutex:
            held = self._owners.get(task)
            if held is not None and held != owner:
                return False
            self._owners[task] = owner
            return True

    def unlock(self, task: str, owner: str) -> None:
        with self._mutex:
            if self._owners.get(task) == owner:
                del self._owners[task]

    def owner(self, task: str) -> str | None:
        with self._mutex:
            return self._owners.get(task)

    def task_dirs(self) -> list[str]:
        if not self.app_dir.is_dir():
            return []
        return sorted(
            p.name for p in self.app_dir.iterdir() if p.is_dir() and p.name != GLOBAL_DIR
        )

    def clean_obsolete(self, delay_ms: int, now: float | None = None) -> list[Cleaned]:
        """Delete task directories that are unlocked and unmodified for longer than
        `delay_ms`. Each is locked by the cleaner while it is deleted, so no thread can
        take it half-deleted."""
        now = time.time() if now is None else now
        cleaned: list[Cleaned] = []
        for task in self.task_dirs():
            d = self.app_dir / task
            try:
                age = now - d.stat().st_mtime
            except FileNotFoundError:
                continue
            if age * 1000 < delay_ms or not self.lock(task, CLEANER):
                continue
            try:
                shutil.rmtree(d, ignore_errors=True)
                cleaned.append(Cleaned(task, round(age, 3)))
            finally:
                self.unlock(task, CLEANER)
        return cleaned
