"""The worker's stop signal handler never waits for a lock: Python runs a signal handler in
the main thread between two bytecodes, so a handler that needs a lock the main thread may
hold at that moment (the event its loop waits on) waits for itself forever. A scaled-in pod
did exactly that in CI: it ignored SIGTERM until the SIGKILL 30 s later, and the run's
scale-in came too late to matter."""

from __future__ import annotations

import threading
from pathlib import Path

from workloads.worker.app import StreamsApp
from workloads.worker.config import parse_args


def test_stop_on_signal_needs_no_lock_the_main_thread_waits_on(tmp_path: Path) -> None:
    cfg = parse_args(["--bootstrap", "127.0.0.1:9", "--state-dir", str(tmp_path / "state"),
                      "--trace", str(tmp_path / "trace.jsonl")])
    app = StreamsApp(cfg)
    # The main thread's waits: the global store's initialization, then the client's loop.
    held = [app.global_thread.initialized._cond, app._wake._cond]
    for lock in held:
        lock.acquire()
    try:
        handler = threading.Thread(target=app.stop_on_signal, daemon=True)
        handler.start()
        handler.join(timeout=10)
        blocked = handler.is_alive()
    finally:
        for lock in held:
            lock.release()
    assert not blocked, "the stop handler waited for a lock the main thread holds"
    assert app.stop_requested.is_set()
