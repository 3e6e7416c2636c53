"""Fixtures for worker tests: unique topics per test and worker pods as subprocesses.

Every pod is started here and killed by PID in the fixture's finally, so no test leaves a
process behind. The broker comes from the session fixture in tests/conftest.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from workloads.worker.trace import read_trace

# Tests run with --import-mode=importlib: the helper module beside this file is put on the
# path explicitly (as tests/checker does).
sys.path.insert(0, str(Path(__file__).parent))
from worker_io import Producer, Topics, create_topics, outputs

REPO = Path(__file__).resolve().parents[2]
SESSION_TIMEOUT_MS = 3000  # the test broker allows 1 s; short failovers keep tests fast


class Pod:
    def __init__(self, bootstrap: str, topics: Topics, base: Path, name: str,
                 threads: int = 1, guarantee: str = "exactly_once_v2",
                 bugs: tuple[str, ...] = (), standbys: int = 0, extra: tuple[str, ...] = ()):
        self.bootstrap, self.topics, self.name = bootstrap, topics, name
        self.dir = base / name
        self.dir.mkdir(parents=True, exist_ok=True)
        self.state_dir = self.dir / "state"
        self.trace = self.dir / "trace.jsonl"
        self.control = self.dir / "control.json"
        self.log = self.dir / "worker.log"
        self.args = [
            sys.executable, "-m", "workloads.worker", "--bootstrap", bootstrap,
            "--instance-id", name, "--state-dir", str(self.state_dir),
            "--threads", str(threads), "--standbys", str(standbys), "--guarantee", guarantee,
            "--trace", str(self.trace), "--control-file", str(self.control),
            "--session-timeout-ms", str(SESSION_TIMEOUT_MS), *topics.worker_args(), *extra,
        ]
        if bugs:
            self.args += ["--bugs", ",".join(bugs)]
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def app_dir(self) -> Path:
        return self.state_dir / self.topics.app

    def start(self) -> Pod:
        self.mark = len(self.events())
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(self.args, cwd=REPO, stdout=log, stderr=log)
        return self

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout: float = 60) -> int:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def kill(self) -> None:
        if self.alive():
            assert self.proc is not None
            self.proc.kill()
            self.proc.wait(30)

    def restart_after_kill(self) -> None:
        """SIGKILL (no clean close: nothing flushed, no checkpoint written), then the same
        pod started again on its state directory, RUNNING."""
        self.kill()
        self.start()
        self.wait_running()

    def set_checkpoint_delay(self, ms: int) -> None:
        tmp = self.control.with_suffix(".tmp")
        tmp.write_text(json.dumps({"checkpoint_delay_ms": ms}))
        os.replace(tmp, self.control)

    def events(self, since_start: bool = False) -> list[dict[str, Any]]:
        evs = read_trace(self.trace)
        return evs[self.mark:] if since_start else evs

    def wait_for(self, pred: Callable[[dict[str, Any]], bool], timeout: float = 60,
                 what: str = "event", since_start: bool = True) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for e in self.events(since_start):
                if pred(e):
                    return e
            if not self.alive():
                break
            time.sleep(0.1)
        tail = self.log.read_text()[-3000:] if self.log.exists() else ""
        raise AssertionError(f"{self.name}: no {what} (alive={self.alive()})\n{tail}")

    def wait_running(self, timeout: float = 60) -> None:
        self.wait_for(lambda e: e["event"] == "client-state" and e["to"] == "RUNNING",
                      timeout, "client RUNNING")

    def committed_offset(self) -> int:
        """The highest input offset of partition 0 the pod has committed since its start
        (its `commit` and `txn-commit` traces)."""
        return max((int(e["offsets"].get("0", 0)) for e in self.events(since_start=True)
                    if e["event"] in ("commit", "txn-commit")), default=0)

    @contextlib.contextmanager
    def paused_mid_burst(self, producer: Producer, accounts: list[str], burst: int
                         ) -> Iterator[None]:
        """The pod paused (SIGSTOP) once it has committed the first records of a burst of
        input, so that it holds records it fetched, or processed, and did not commit; it
        runs again on leaving (a zombie once another pod took its task meanwhile)."""
        producer.events(accounts, burst, prefix="burst")
        wait_until(lambda: self.committed_offset() >= 100, 90,
                   f"{self.name}'s first commits of the burst")
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)
        try:
            yield
        finally:
            self.proc.send_signal(signal.SIGCONT)


def wait_until(fn: Callable[[], Any], timeout: float = 60, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def drain(bootstrap: str, topics: Topics, n: int) -> Any:
    """Wait (90 s at most) until the output topic holds `n` records."""
    return wait_until(lambda: len(outputs(bootstrap, topics)) >= n, 90, f"{n} outputs")


@pytest.fixture
def topics_factory(kafka_bootstrap: str) -> Callable[[int], Topics]:
    def make(partitions: int = 1) -> Topics:
        return create_topics(kafka_bootstrap, f"w{uuid.uuid4().hex[:8]}", partitions)

    return make


@pytest.fixture
def pods(kafka_bootstrap: str, tmp_path: Path) -> Iterator[Callable[..., Pod]]:
    made: list[Pod] = []

    def make(topics: Topics, name: str, **kw: Any) -> Pod:
        pod = Pod(kafka_bootstrap, topics, tmp_path, name, **kw)
        made.append(pod)
        return pod

    try:
        yield make
    finally:
        for pod in made:
            pod.kill()


@pytest.fixture
def producer_factory(kafka_bootstrap: str) -> Iterator[Callable[[Topics], Producer]]:
    made: list[Producer] = []

    def make(topics: Topics) -> Producer:
        p = Producer(kafka_bootstrap, topics)
        made.append(p)
        return p

    try:
        yield make
    finally:
        for p in made:
            p.close()


@pytest.fixture
def one_partition(topics_factory: Callable[[int], Topics],
                  producer_factory: Callable[[Topics], Producer]) -> tuple[Topics, Producer]:
    """A test's own topics, one partition each, and a producer of events into them."""
    topics = topics_factory(1)
    return topics, producer_factory(topics)
