"""The fault filesystem's cost and its power loss (prints figures; not a test).

    .venv/bin/python bench/bench_faultfs.py [--bootstrap H:P] [--events 10000]
                                            [--store-writes 20000]

Figures: RocksDB store writes/s (the worker's KeyValueStore: puts, a flush and a
checkpoint every 500 puts) on a plain folder and on the fault filesystem; the worker's
exactly-once throughput (1 pod x 2 threads) with its state.dir on each; and a power loss
of that pod: SIGKILL mid-drain, the filesystem's rollback and remount, and the restart
until the client is RUNNING again. Needs root, /dev/fuse and fusermount3.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.faultfs.mounting
from bench_worker import REPO, fill, kafka_in, run_worker, scratch_folder, wait_trace

from tests.faultfs.mounting import Mounted, fuse_missing, mount
from workloads.worker.checkpoint import write_checkpoint
from workloads.worker.store import KeyValueStore
from workloads.worker.trace import read_trace


def store_rate(directory: Path, n: int) -> float:
    store = KeyValueStore(directory / "store", 64 * 1024)
    store.open()
    started = time.monotonic()
    for i in range(n):
        store.put(f"k{i % 2000}", f"v{i}" * 8)
        if i % 500 == 499:
            store.flush()
            write_checkpoint(directory / ".checkpoint", {("changelog", 0): i})
    store.close()
    return n / (time.monotonic() - started)


def power_loss_figures(bootstrap: str, n: int, work: Path) -> tuple[float, float, dict]:
    """Start a pod on the fault fs, SIGKILL it mid-drain, roll back and remount, restart.
    Returns (rollback + remount s, restart -> RUNNING s, what was undone)."""
    m = mount(work / "pl" / "state", work / "pl" / "state.mnt")
    _rate, _state, info = run_worker(bootstrap, "exactly_once_v2", n, work, state=m.mnt)
    trace: Path = info["trace"]
    argv: list[str] = info["argv"]
    fill(bootstrap, argv[argv.index("--input-topic") + 1], n)  # work for the next start
    mark = len(read_trace(trace))
    proc = subprocess.Popen(argv, cwd=REPO, stderr=subprocess.DEVNULL)
    with contextlib.suppress(Exception):  # no flush seen in time: crash anyway
        wait_trace(trace, lambda e: e["event"] == "memtable-flush"
                   and read_trace(trace).index(e) >= mark, timeout=60)
    proc.kill()
    proc.wait()
    started = time.monotonic()
    undone = m.power_loss()["undone"]
    m = mount(m.backing, m.mnt)
    rollback_s = time.monotonic() - started
    mark = len(read_trace(trace))
    started = time.monotonic()
    proc = subprocess.Popen(info["argv"], cwd=REPO, stderr=subprocess.DEVNULL)
    try:
        wait_trace(trace, lambda e: e["event"] == "client-state" and e["to"] == "RUNNING"
                   and read_trace(trace).index(e) >= mark, timeout=180)
        running_s = time.monotonic() - started
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(120)
        m.proc.terminate()
        m.proc.wait(30)
    return rollback_s, running_s, undone


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap")
    ap.add_argument("--events", type=int, default=10000)
    ap.add_argument("--store-writes", type=int, default=20000)
    args = ap.parse_args()
    reason = fuse_missing()
    if reason:
        print(f"bench_faultfs: {reason}")
        return 254
    with scratch_folder("bench-faultfs-") as work, contextlib.ExitStack() as mounts:
        mounted: list[Mounted] = []
        mounts.callback(_unmount, mounted)
        plain = store_rate(work / "plain", args.store_writes)
        m = mount(work / "fs" / "state", work / "fs" / "state.mnt")
        mounted.append(m)
        fs = store_rate(m.mnt, args.store_writes)
        print(f"store writes/s (flush+checkpoint every 500): plain {plain:,.0f}, "
              f"fault fs {fs:,.0f} ({fs / plain:.2f}x)")
        with kafka_in(args.bootstrap, work) as bootstrap:
            n = args.events
            plain_eos, _s, _i = run_worker(bootstrap, "exactly_once_v2", n, work)
            w = mount(work / "w" / "state", work / "w" / "state.mnt")
            mounted.append(w)
            fs_eos, _s, _i = run_worker(bootstrap, "exactly_once_v2", n, work, state=w.mnt)
            print(f"worker exactly_once_v2 events/s ({n} events): plain {plain_eos:,.0f}, "
                  f"fault fs {fs_eos:,.0f} ({fs_eos / plain_eos:.2f}x)")
            rollback_s, running_s, undone = power_loss_figures(bootstrap, n, work)
            print(f"power loss: rollback + remount {rollback_s:.2f} s ({undone}); "
                  f"restart -> RUNNING {running_s:.1f} s")
    return 0


def _unmount(mounted: list[Mounted]) -> None:
    """Stop each fault filesystem and detach its mount (lazily: a process may hold it)."""
    for m in mounted:
        if m.proc.poll() is None:
            m.proc.terminate()
            m.proc.wait(30)
        subprocess.run(["fusermount3", "-u", "-z", str(m.mnt)], capture_output=True)


if __name__ == "__main__":
    sys.exit(main())
