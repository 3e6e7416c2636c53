"""`kchaos clean` kills a pod left paused where it stands: resuming it to deliver SIGTERM
would let it run (and commit) once more after its run ended; and given one run folder, it
leaves the other runs' processes alone (a nightly running several at once)."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import psutil

from harness.procs import ProcessRegistry, clean, run_folders

# A stand-in pod that leaves a mark if it ever runs its SIGTERM handler.
POD = """
import pathlib, signal, sys, time
mark = pathlib.Path(sys.argv[1])
signal.signal(signal.SIGTERM, lambda *_: (mark.write_text("ran after the run"), sys.exit(0)))
pathlib.Path(sys.argv[2]).write_text("up")
while True:
    time.sleep(0.1)
"""


def test_clean_kills_a_paused_process_without_resuming_it(tmp_path: Path) -> None:
    run_dir = tmp_path / "results" / "run-1"
    run_dir.mkdir(parents=True)
    mark, up = tmp_path / "mark", tmp_path / "up"
    registry = ProcessRegistry(run_dir)
    popen = registry.spawn("pod-pod-0", [sys.executable, "-c", POD, str(mark), str(up)],
                           run_dir / "pod.log")
    try:
        deadline = time.monotonic() + 30
        while not up.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(popen.pid, signal.SIGSTOP)
        while psutil.Process(popen.pid).status() != psutil.STATUS_STOPPED:
            time.sleep(0.01)
        stopped = clean(run_folders(tmp_path / "results"))
        assert [r.pid for r in stopped] == [popen.pid]
        # (clean reaps it itself, so its exit status is not ours to read)
        assert not psutil.pid_exists(popen.pid) or popen.poll() is not None
        time.sleep(0.5)
        assert not mark.exists()  # before: SIGCONT + SIGTERM, and the handler ran
    finally:
        if popen.poll() is None:
            popen.kill()
            popen.wait()


def test_clean_of_one_run_folder_leaves_the_other_runs_alone(tmp_path: Path) -> None:
    runs = [tmp_path / "results" / name for name in ("run-1", "run-2")]
    pods = []
    for run_dir in runs:
        run_dir.mkdir(parents=True)
        pods.append(ProcessRegistry(run_dir).spawn(
            "pod-pod-0", [sys.executable, "-c", "import time; time.sleep(600)"],
            run_dir / "pod.log"))
    try:
        assert [r.pid for r in clean([runs[0]])] == [pods[0].pid]
        assert pods[0].wait(timeout=10) is not None and pods[1].poll() is None
        assert [r.pid for r in clean(run_folders(tmp_path / "results"))] == [pods[1].pid]
    finally:
        for pod in pods:
            if pod.poll() is None:
                pod.kill()
                pod.wait()
