"""Every process the harness starts, recorded in `<run>/pids.json`, stopped by PID.

A harness that is SIGKILLed cannot clean up after itself; `kchaos clean` reads the
recorded PIDs (with each process's start time, so a recycled PID is never killed).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import psutil

from common.files import write_atomically
from common.waiting import wait_until

PIDS_FILE = "pids.json"


@dataclass(frozen=True)
class ProcessRecord:
    name: str
    pid: int
    create_time: float
    argv: tuple[str, ...]


def is_same_process(record: ProcessRecord) -> bool:
    """True if the PID still names the process we started (not a recycled PID)."""
    try:
        proc = psutil.Process(record.pid)
        return (
            abs(proc.create_time() - record.create_time) < 1.0
            and proc.status() != psutil.STATUS_ZOMBIE
        )
    except psutil.Error:
        return False


def stop_process(record: ProcessRecord, grace_s: float = 10.0) -> None:
    """SIGTERM, wait up to `grace_s`, then SIGKILL; resumes a SIGSTOPped process first."""
    if not is_same_process(record):
        return
    try:
        os.kill(record.pid, signal.SIGCONT)
        os.kill(record.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    wait_until(lambda: not is_same_process(record), grace_s, interval_s=0.1)
    kill_process(record)


def _is_stopped(record: ProcessRecord) -> bool:
    try:
        return is_same_process(record) and psutil.Process(record.pid).status() == (
            psutil.STATUS_STOPPED
        )
    except psutil.Error:
        return False


def kill_process(record: ProcessRecord) -> None:
    if is_same_process(record):
        try:
            os.kill(record.pid, signal.SIGKILL)
            psutil.Process(record.pid).wait(timeout=10)
        except (ProcessLookupError, psutil.Error):
            pass


class ProcessRegistry:
    """Starts processes and keeps `pids.json` in the run folder in step with them."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / PIDS_FILE
        self._lock = threading.Lock()
        self._records: dict[int, ProcessRecord] = {}
        self._popens: dict[int, subprocess.Popen[bytes]] = {}
        if self.path.exists():
            self._records = {r.pid: r for r in load_records(self.path)}

    def spawn(
        self,
        name: str,
        argv: Sequence[str],
        log_path: Path,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> subprocess.Popen[bytes]:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(log_path, "ab") as log:
            # A session of its own: Ctrl-C at the terminal reaches the harness only,
            # which then stops its children in order.
            popen = subprocess.Popen(
                list(argv),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=dict(env) if env is not None else None,
                cwd=cwd,
                start_new_session=True,
            )
        return self.adopt(name, popen)

    def adopt(self, name: str, popen: subprocess.Popen[bytes]) -> subprocess.Popen[bytes]:
        """Record a process started elsewhere, so that `stop_all` and `kchaos clean` stop
        it like the run's own."""
        record = ProcessRecord(
            name=name,
            pid=popen.pid,
            create_time=psutil.Process(popen.pid).create_time(),
            argv=tuple(str(a) for a in popen.args)
            if isinstance(popen.args, (list, tuple)) else (str(popen.args),),
        )
        with self._lock:
            self._records[popen.pid] = record
            self._popens[popen.pid] = popen
            self._save()
        return popen

    def record(self, pid: int) -> ProcessRecord | None:
        with self._lock:
            return self._records.get(pid)

    def forget(self, pid: int) -> None:
        """Drop a process that has exited (reaping it if it was ours)."""
        with self._lock:
            self._records.pop(pid, None)
            popen = self._popens.pop(pid, None)
            self._save()
        if popen is not None:
            popen.poll()

    def stop(self, pid: int, grace_s: float = 10.0) -> None:
        record = self.record(pid)
        if record is not None:
            stop_process(record, grace_s)
        self.forget(pid)

    def kill(self, pid: int) -> None:
        record = self.record(pid)
        if record is not None:
            kill_process(record)
        self.forget(pid)

    def stop_all(self, grace_s: float = 10.0, keep: Collection[str] = ()) -> None:
        """Every process recorded, but those named in `keep`."""
        # Newest first: workers before the brokers they talk to.
        with self._lock:
            records = sorted((r for r in self._records.values() if r.name not in keep),
                             key=lambda r: -r.create_time)
        for record in records:
            self.stop(record.pid, grace_s)

    def _save(self) -> None:
        payload = [asdict(r) for r in self._records.values()]
        write_atomically(self.path, json.dumps(payload, indent=1))


def load_records(path: Path) -> list[ProcessRecord]:
    """The records of one pids.json; a corrupt file yields nothing rather than a crash."""
    try:
        raw = json.loads(path.read_text())
        return [
            ProcessRecord(r["name"], int(r["pid"]), float(r["create_time"]), tuple(r["argv"]))
            for r in raw
        ]
    except (OSError, ValueError, KeyError, TypeError):
        return []


def run_folders(results_dir: Path) -> list[Path]:
    """Every folder directly under `results_dir`: where `kchaos clean` looks by default."""
    return sorted(p for p in results_dir.glob("*/") if p.is_dir())


def recorded_processes(folders: Iterable[Path]) -> Iterator[tuple[Path, ProcessRecord]]:
    """Every still-running process recorded in these run folders."""
    for pids_file in (f / PIDS_FILE for f in folders):
        for record in load_records(pids_file):
            if is_same_process(record):
                yield pids_file, record


def _lazy_unmount(mountpoint: str) -> None:
    if shutil.which("fusermount3") and os.path.ismount(mountpoint):
        subprocess.run(["fusermount3", "-u", "-z", mountpoint], capture_output=True)


def clean(folders: Iterable[Path]) -> list[ProcessRecord]:
    """Stop everything a crashed harness left behind in these run folders; returns what
    was stopped. (One run's folder alone: a nightly running several at once cleans after
    one without touching the others.)"""
    stopped: list[ProcessRecord] = []
    by_file: dict[Path, list[ProcessRecord]] = {}
    for pids_file, record in recorded_processes(folders):
        by_file.setdefault(pids_file, []).append(record)
    for pids_file, records in by_file.items():
        for record in sorted(records, key=lambda r: -r.create_time):
            # A pod left paused (SIGSTOP) is killed as it stands: resuming it to deliver
            # SIGTERM would let it run, and commit, once more after its run ended.
            if _is_stopped(record):
                kill_process(record)
            else:
                stop_process(record, grace_s=5.0)
            if record.name.startswith("faultfs-") and record.argv:
                _lazy_unmount(record.argv[-1])  # a fault filesystem leaves no dead mount
            stopped.append(record)
        write_atomically(pids_file, "[]")
    return stopped
