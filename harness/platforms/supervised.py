"""Pods behave like Kubernetes pods: a pod whose process exits is restarted after a back-off
(restartPolicy Always, with CrashLoopBackOff's doubling delay), on any platform.

`SupervisedPlatform` wraps a `Platform` and speaks the same interface, so the nemesis and the
run lifecycle use it unchanged and the docker platform needs no code of its own. Every exit
and restart goes into the history with its cause:
- `nemesis-kill`: a kill fault (SIGKILL). The pod comes back by the restart policy, or
  earlier if the plan's heal starts it (a start cancels the pending restart);
- `nemesis-stop`: a stop, move or scale-in; held down until somebody starts it again, the
  way a pod deleted on purpose is not a crash;
- `watchdog`: the worker found a stream thread stalled in its Kafka client and exited;
- `crashed`: any other exit (code, or the signal that ended it).
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faults.platform import Platform, Pod

# The worker's exit code when its watchdog finds a stalled stream thread
# (workloads/worker/app.py; the worker does not import the harness, so it is repeated there).
WATCHDOG_EXIT = 3
TICK_S = 0.5  # a docker poll asks the engine about every container

Record = Callable[[str, str, str, dict[str, Any]], object]  # History.record


@dataclass(frozen=True)
class RestartPolicy:
    """`always` (the default) or `never`; back-off doubles from `backoff_s` up to
    `max_backoff_s` and starts over once a pod has run `reset_after_s` without exiting."""

    mode: str = "always"
    backoff_s: float = 1.0
    max_backoff_s: float = 10.0
    reset_after_s: float = 10.0

    @property
    def restarts(self) -> bool:
        return self.mode == "always"


def exit_cause(code: int) -> dict[str, Any]:
    """What an exit code says: Popen gives -N for signal N, a container 128+N."""
    if code == WATCHDOG_EXIT:
        return {"cause": "watchdog", "exit_code": code}
    signum = -code if code < 0 else code - 128 if code > 128 else None
    fact: dict[str, Any] = {"cause": "crashed", "exit_code": code}
    if signum is not None:
        with contextlib.suppress(ValueError):  # a code above 128 that is no signal
            fact["signal"] = signal.Signals(signum).name
    return fact


@dataclass
class _Watch:
    """The supervisor's view of one pod."""

    held: bool = False  # stopped on purpose: no restart until somebody starts it
    restart_at: float | None = None
    backoff_s: float = 0.0
    started_at: float = 0.0
    restarts: int = 0


class SupervisedPlatform:
    """A `Platform` whose pods are restarted after they exit (see the module doc)."""

    def __init__(self, inner: Platform, policy: RestartPolicy, record: Record,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.inner = inner
        self.name = inner.name
        self.policy = policy
        self.record = record
        self.clock = clock
        self._watch: dict[str, _Watch] = {}
        self._exits: list[tuple[str, int]] = []
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- the supervisor loop ----------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="supervisor", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(TICK_S):
            try:
                self.tick()
            except Exception as exc:  # one failed restart must not end supervision
                self.record("harness", "info", "supervisor-error",
                            {"error": f"{type(exc).__name__}: {exc}"})

    def tick(self) -> None:
        """Notice exits, restart pods whose back-off is over."""
        now = self.clock()
        with self._lock:
            for name, code in self.inner.poll():
                self._exits.append((name, code))
                self.record("harness", "info", "pod-exited", {"target": name, **exit_cause(code)})
                self._schedule(name, now)
            due = [n for n, w in self._watch.items()
                   if w.restart_at is not None and now >= w.restart_at and not w.held]
            for name in due:
                watch = self._watch[name]
                watch.restart_at = None
                watch.restarts += 1
                self.inner.start_pod(name)
                watch.started_at = self.clock()
                self.record("harness", "info", "pod-restarted",
                            {"target": name, "restarts": watch.restarts,
                             "backoff_s": round(watch.backoff_s, 2)})

    def _schedule(self, name: str, now: float) -> None:
        watch = self._watch.setdefault(name, _Watch())
        if not self.policy.restarts or watch.held:
            return
        if now - watch.started_at >= self.policy.reset_after_s:
            watch.backoff_s = self.policy.backoff_s
        else:
            watch.backoff_s = min(max(watch.backoff_s * 2, self.policy.backoff_s),
                                  self.policy.max_backoff_s)
        watch.restart_at = now + watch.backoff_s

    def restart_count(self) -> int:
        with self._lock:
            return sum(w.restarts for w in self._watch.values())

    # -- what the nemesis and the run do ------------------------------------------------------

    def add_pod(self, name: str, node: str) -> Pod:
        with self._lock:
            self._watch[name] = _Watch(started_at=self.clock())
        return self.inner.add_pod(name, node)

    def start_pod(self, name: str) -> None:
        with self._lock:
            watch = self._watch.setdefault(name, _Watch())
            watch.held, watch.restart_at = False, None
            running = self.inner.pod(name).running
            self.inner.start_pod(name)
            if not running:
                watch.started_at = self.clock()

    def kill_pod(self, name: str) -> None:
        with self._lock:
            was_running = self.inner.pod(name).running
            self.inner.kill_pod(name)
            if was_running:
                self.record("harness", "info", "pod-exited",
                            {"target": name, "cause": "nemesis-kill", "signal": "SIGKILL"})
                self._schedule(name, self.clock())

    def stop_pod(self, name: str, grace_s: float = 30.0) -> None:
        self._hold(name, "nemesis-stop")
        self.inner.stop_pod(name, grace_s)

    def move_pod(self, name: str, node: str, keep_volume: bool) -> None:
        self._hold(name, "nemesis-stop")
        self.inner.move_pod(name, node, keep_volume)  # starts it again on the new node
        with self._lock:
            watch = self._watch[name]
            watch.held, watch.started_at = False, self.clock()

    def remove_pod(self, name: str) -> None:
        self._hold(name, "nemesis-stop")
        self.inner.remove_pod(name)
        with self._lock:
            self._watch.pop(name, None)

    def _hold(self, name: str, cause: str) -> None:
        with self._lock:
            watch = self._watch.setdefault(name, _Watch())
            watch.held, watch.restart_at = True, None
            if self.inner.pod(name).running:
                self.record("harness", "info", "pod-exited", {"target": name, "cause": cause})

    def poll(self) -> list[tuple[str, int]]:
        """Exits seen by the supervisor since the last call (it polls the platform)."""
        with self._lock:
            exits, self._exits = self._exits, []
            return exits

    def stop(self) -> None:
        """End supervision: no pod is restarted after this."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=30)
        with self._lock:
            for watch in self._watch.values():
                watch.held, watch.restart_at = True, None

    def teardown(self) -> None:
        """Supervision ends first: clean-up never restarts a pod just to stop it."""
        self.stop()
        self.inner.teardown()

    # -- the rest of the interface, as the wrapped platform has it ------------------------------

    def nodes(self) -> list[str]:
        return self.inner.nodes()

    def pods(self) -> list[Pod]:
        return self.inner.pods()

    def pod(self, name: str) -> Pod:
        return self.inner.pod(name)

    def pause_pod(self, name: str) -> None:
        self.inner.pause_pod(name)

    def resume_pod(self, name: str) -> None:
        self.inner.resume_pod(name)

    def volume(self, name: str) -> Path:
        return self.inner.volume(name)

    def trace_path(self, name: str) -> Path:
        return self.inner.trace_path(name)

    def control_path(self, name: str) -> Path:
        return self.inner.control_path(name)
