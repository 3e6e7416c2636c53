"""The streams client (Kafka Streams' KafkaStreams): client state machine, the global
thread, N stream threads and the state-directory cleaner.

Client states: CREATED -> REBALANCING <-> RUNNING -> PENDING_SHUTDOWN -> NOT_RUNNING,
or -> ERROR when a thread dies (the process then exits non-zero).
"""

from __future__ import annotations

import faulthandler
import logging
import threading
import time

from workloads.worker.config import WorkerConfig
from workloads.worker.control import ControlFile
from workloads.worker.global_thread import GlobalStreamThread
from workloads.worker.statedir import StateDirectory
from workloads.worker.thread import StreamThread
from workloads.worker.topics import ensure_changelogs
from workloads.worker.trace import Tracer

log = logging.getLogger(__name__)
MAIN = "main"
# A stream thread's loop that has not turned for this long is stuck in a client call (a
# poll that never finds its coordinator again): the process exits and its restart policy
# brings it back. Bounded calls (clients.py) give up well before.
STALL_S = 45.0
# Exit code when the watchdog finds a stalled stream thread; the harness's supervisor
# (harness/platforms/supervised.py) reads it as cause "watchdog".
WATCHDOG_EXIT = 3


class StreamsApp:
    def __init__(self, cfg: WorkerConfig) -> None:
        self.cfg = cfg
        self.tracer = Tracer(cfg.trace_file, cfg.instance_id)
        self.control = ControlFile(cfg.control_file)
        self.sdir = StateDirectory(cfg.app_dir)
        self.state = "CREATED"
        self._state_lock = threading.Lock()
        self._wake = threading.Event()
        self.stop_requested = threading.Event()
        self.global_thread = GlobalStreamThread(cfg, self.tracer, self.control, self._wake.set)
        self.threads = [
            StreamThread(
                cfg, i, self.sdir, self.tracer, self.control, self.global_thread.version,
                self.global_thread.ready.is_set, self._on_thread_state,
            )
            for i in range(1, cfg.threads + 1)
        ]

    # -- state -------------------------------------------------------------------------

    def _set_state(self, to: str) -> None:
        with self._state_lock:
            if to == self.state or self.state in ("ERROR", "NOT_RUNNING"):
                return
            if self.state == "PENDING_SHUTDOWN" and to not in ("NOT_RUNNING", "ERROR"):
                return
            self.tracer.emit(MAIN, "client-state", **{"from": self.state, "to": to})
            log.info("client state %s -> %s", self.state, to)
            self.state = to

    def _on_thread_state(self) -> None:
        states = [t.state for t in self.threads]
        if "DEAD" in states and not self.stop_requested.is_set():
            self._wake.set()
        elif all(s == "RUNNING" for s in states):
            self._set_state("RUNNING")
        elif any(s in ("STARTING", "PARTITIONS_REVOKED", "PARTITIONS_ASSIGNED") for s in states):
            self._set_state("REBALANCING")

    def failed(self) -> BaseException | None:
        if self.global_thread.error is not None:
            return self.global_thread.error
        for t in self.threads:
            if t.error is not None:
                return t.error
        return None

    # -- run -------------------------------------------------------------------------

    def run(self) -> int:
        """Start, block until a stop request or a fatal error, close. Exit code."""
        self._set_state("REBALANCING")
        ensure_changelogs(self.cfg)
        self.global_thread.start()
        # Global state is restored before any stream thread starts (KafkaStreams.start).
        while not self.global_thread.initialized.wait(0.2):
            if self.stop_requested.is_set():
                break
        if self.global_thread.error is None and not self.stop_requested.is_set():
            for t in self.threads:
                t.start()
            cleaner = threading.Thread(target=self._cleaner, name="cleaner", daemon=True)
            cleaner.start()
        while not self.stop_requested.is_set() and self.failed() is None:
            self._wake.wait(0.5)
            self._wake.clear()
            if self._stalled():
                return WATCHDOG_EXIT
        err = self.failed()
        if err is not None:
            self.tracer.emit(MAIN, "fatal", error=f"{type(err).__name__}: {err}")
            self._set_state("ERROR")
            self._stop_threads()
            return 1
        self._set_state("PENDING_SHUTDOWN")
        self._stop_threads()
        err = self.failed()
        self._set_state("ERROR" if err else "NOT_RUNNING")
        return 1 if err else 0

    def _stalled(self) -> bool:
        """A stream thread whose loop stopped turning (a hang in a client library) must not
        pass for a slow one: dump every stack to the log and die, visibly."""
        limit = max(STALL_S, 3 * self.cfg.session_timeout_ms / 1000)
        now = time.monotonic()
        for t in self.threads:
            if t.is_alive() and t.state != "CREATED" and now - t.last_loop > limit:
                log.error("%s made no progress for %.0f s; dumping stacks", t.tname, limit)
                faulthandler.dump_traceback(all_threads=True)
                self.tracer.emit(MAIN, "fatal", error=f"{t.tname} stalled for {limit:.0f} s")
                self._set_state("ERROR")
                return True
        return False

    def stop_on_signal(self) -> None:
        """What SIGTERM and SIGINT do. A Python signal handler runs in the main thread
        between two bytecodes, possibly inside `_wake.wait()` or `_wake.clear()` while that
        thread holds the event's lock: `_wake.set()` there waits for itself forever (a
        scaled-in pod ignored SIGTERM until its SIGKILL 30 s later). So the handler only
        sets `stop_requested`, whose lock the main thread never takes; the main loop sees
        it within its 0.5 s wait."""
        self.stop_requested.set()

    def _stop_threads(self) -> None:
        for t in self.threads:
            t.stop_requested.set()
        for t in self.threads:
            if t.is_alive():
                t.join(timeout=60)
        self.global_thread.stop_requested.set()
        if self.global_thread.is_alive():
            self.global_thread.join(timeout=30)

    def _cleaner(self) -> None:
        """Delete obsolete task directories, only while the client is RUNNING."""
        interval = self.cfg.cleaner_interval_ms / 1000
        while not self.stop_requested.wait(interval):
            if self.state != "RUNNING":
                continue
            for c in self.sdir.clean_obsolete(self.cfg.cleaner_delay_ms):
                self.tracer.emit("cleaner", "cleaner-delete", task=c.task, age_s=c.age_s)
