"""Watching the pods' state directories from outside, for a system under test that does not
trace its checkpoint files itself (Kafka Streams).

Every POLL_S each pod's `<volume>/<application>/<task>/` is looked at: a `.checkpoint` that
appears or changes is a `checkpoint-write` (time: the file's mtime, when it was written),
one that disappears a `checkpoint-delete` (time: the task folder's mtime, which the unlink
set, if it is newer than the file was, else when it was seen gone); a new SST file under
the task is an `sst-file` (time: its mtime). Lines go to `pods/<pod>/statedir.jsonl` in
the trace format, thread `statedir-watch`, with the PID of the pod's process at the time
(or its last one while it is down), `source` "statedir". The checker reads them with the
pods' traces.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from faults.platform import Platform
from workloads.ledger.trace_contract import CHECKPOINT_DELETE, CHECKPOINT_WRITE, SST_FILE

POLL_S = 0.1
STATEDIR_FILE = "statedir.jsonl"
TASK_DIR = re.compile(r"^\d+_\d+$|^global$")


def parse_checkpoint(text: str) -> dict[str, int] | None:
    """Kafka Streams' `.checkpoint`: version, count, then `topic partition offset` lines."""
    lines = [ln for ln in text.split("\n") if ln.strip()]
    try:
        offsets = {}
        for line in lines[2:]:
            topic, partition, offset = line.split()
            offsets[f"{topic}-{int(partition)}"] = int(offset)
        return offsets
    except ValueError:
        return None  # caught half-written


@dataclass
class _PodView:
    checkpoints: dict[str, tuple[int, int]] = field(default_factory=dict)  # task -> mtime, size
    ssts: set[Path] = field(default_factory=set)
    pid: int | None = None


class StateDirWatcher:
    def __init__(self, platform: Platform, application_id: str) -> None:
        self.platform = platform
        self.application_id = application_id
        self._views: dict[str, _PodView] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="statedir-watch", daemon=True)
        self.events = 0

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stops after one last look (the checkpoints a clean close wrote)."""
        self._stop.set()
        self._thread.join(timeout=10)
        self.poll()

    def _loop(self) -> None:
        while not self._stop.wait(POLL_S):
            try:
                self.poll()
            except OSError:  # a racing rename or delete: look again next time
                continue

    def poll(self) -> None:
        for pod in self.platform.pods():
            view = self._views.setdefault(pod.name, _PodView())
            if pod.pid is not None:
                view.pid = pod.pid
            app_dir = self.platform.volume(pod.name) / self.application_id
            lines = self._look(pod.name, view, app_dir)
            if lines:
                path = self.platform.trace_path(pod.name).with_name(STATEDIR_FILE)
                with open(path, "a", encoding="utf-8") as out:
                    out.write("".join(json.dumps(line, separators=(",", ":")) + "\n"
                                      for line in lines))
                self.events += len(lines)

    def _look(self, pod: str, view: _PodView, app_dir: Path) -> list[dict[str, Any]]:
        now = time.time_ns()
        lines: list[dict[str, Any]] = []

        def line(ts_ns: int, event: str, task: str, **fields: Any) -> None:
            lines.append({"ts_ns": ts_ns, "pod": pod, "pid": view.pid,
                          "thread": "statedir-watch", "event": event, "task": task,
                          "source": "statedir", **fields})

        tasks = [d for d in _listdir(app_dir) if TASK_DIR.match(d.name)]
        seen: dict[str, tuple[int, int]] = {}
        for task_dir in tasks:
            task = task_dir.name
            stat = _stat(task_dir / ".checkpoint")
            if stat is not None:
                seen[task] = stat
                if view.checkpoints.get(task) != stat:
                    text = _read(task_dir / ".checkpoint")
                    line(stat[0], CHECKPOINT_WRITE, task, reason="observed",
                         offsets=parse_checkpoint(text) if text is not None else None)
            for sst in task_dir.rglob("*.sst"):
                if sst not in view.ssts and (sst_stat := _stat(sst)) is not None:
                    view.ssts.add(sst)
                    line(sst_stat[0], SST_FILE, task, store=sst.parent.name,
                         file=sst.name, bytes=sst_stat[1])
        for task, (mtime, _) in view.checkpoints.items():
            if task not in seen:
                folder = _stat(app_dir / task)
                when = folder[0] if folder is not None and folder[0] > mtime else now
                line(min(when, now), CHECKPOINT_DELETE, task, reason="observed")
        view.checkpoints = seen
        view.ssts = {p for p in view.ssts if p.exists()}
        return lines


def _listdir(folder: Path) -> list[Path]:
    try:
        return [p for p in folder.iterdir() if p.is_dir()]
    except OSError:
        return []


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None
