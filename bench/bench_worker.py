"""Worker throughput and restore speed (prints figures; not a test).

    .venv/bin/python bench/bench_worker.py [--bootstrap H:P] [--events 20000]

Without --bootstrap a single-node cluster is started (harness.kafka) and stopped after.
Figures: exactly-once events/s (1 pod x 2 threads), at-least-once events/s, the ratio to a
bare kafka-python transactional consume-produce loop on the same broker, and restore speed
(changelog records/s) after wiping the pod's state.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka.structs import OffsetAndMetadata

from workloads.ledger.contract import Event, account_name
from workloads.worker.trace import read_trace

REPO = Path(__file__).resolve().parents[1]
PARTITIONS = 4


def create(bootstrap: str, prefix: str) -> dict[str, str]:
    names = {k: f"{prefix}-{k}" for k in ("events", "output", "accounts")}
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics({
        names["events"]: {"num_partitions": PARTITIONS, "replication_factor": 1},
        names["output"]: {"num_partitions": PARTITIONS, "replication_factor": 1},
        names["accounts"]: {"num_partitions": 1, "replication_factor": 1},
    }, wait_for_metadata=True)
    admin.close()
    return names


def fill(bootstrap: str, topic: str, n: int) -> None:
    p = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=20)
    for i in range(n):
        a = account_name(i % 200)
        p.send(topic, key=a.encode(), value=Event(f"e-{i}", a, 1).encode())
    p.flush()
    p.close()


def committed_total(bootstrap: str, group: str) -> int:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        res = admin.list_group_offsets({group: None})
    finally:
        admin.close()
    return sum(om.offset for parts in res.values() for om in parts.values() if om.offset > 0)


def wait_drained(bootstrap: str, group: str, n: int, timeout: float = 600) -> float:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if committed_total(bootstrap, group) >= n:
            return time.time()  # wall clock, comparable with trace timestamps
        time.sleep(0.2)
    raise RuntimeError(f"group {group} did not drain {n} events")


def wait_trace(path: Path, pred, timeout: float = 120) -> dict:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for e in read_trace(path):
            if pred(e):
                return e
        time.sleep(0.1)
    raise RuntimeError(f"trace {path}: condition not met")


def run_worker(bootstrap: str, guarantee: str, n: int, work: Path,
               state: Path | None = None) -> tuple[float, Path, dict]:
    """Events/s of one pod draining `n` events; `state` (e.g. a fault filesystem mount)
    replaces the default state.dir under `work`."""
    prefix = f"bw{uuid.uuid4().hex[:6]}"
    names = create(bootstrap, prefix)
    fill(bootstrap, names["events"], n)
    trace = work / prefix / "trace.jsonl"
    state = state or work / prefix / "state"
    argv = [sys.executable, "-m", "workloads.worker", "--bootstrap", bootstrap,
            "--application-id", prefix, "--instance-id", "pod-1", "--state-dir", str(state),
            "--threads", "2", "--guarantee", guarantee, "--trace", str(trace),
            "--input-topic", names["events"], "--output-topic", names["output"],
            "--accounts-topic", names["accounts"]]
    proc = subprocess.Popen(argv, cwd=REPO, stderr=subprocess.DEVNULL)
    try:
        t0_ns = wait_trace(trace, lambda e: e["event"] == "task-running")["ts_ns"]
        t1 = wait_drained(bootstrap, prefix, n)
        rate = n / (t1 - t0_ns / 1e9)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(120)
    return rate, state, {"argv": argv, "trace": trace}


def restore_speed(info: dict, state: Path) -> float:
    """Wipe the pod's state, restart it, measure restore-start .. restore-end."""
    shutil.rmtree(state)
    trace: Path = info["trace"]
    mark = len(read_trace(trace))
    proc = subprocess.Popen(info["argv"], cwd=REPO, stderr=subprocess.DEVNULL)
    try:
        wait_trace(trace, lambda e: e["event"] == "client-state" and e["to"] == "RUNNING"
                   and read_trace(trace).index(e) >= mark)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(120)
    evs = read_trace(trace)[mark:]
    starts = [e["ts_ns"] for e in evs if e["event"] == "restore-start"]
    ends = [e for e in evs if e["event"] == "restore-end"]
    records = sum(e["restored"] for e in ends)
    secs = (max(e["ts_ns"] for e in ends) - min(starts)) / 1e9
    return records / secs if secs > 0 else float("nan")


def bare_loop(bootstrap: str, n: int) -> float:
    """The reference: one kafka-python transactional copy loop, commits every 500 ms."""
    prefix = f"bb{uuid.uuid4().hex[:6]}"
    names = create(bootstrap, prefix)
    fill(bootstrap, names["events"], n)
    c = KafkaConsumer(names["events"], bootstrap_servers=bootstrap, group_id=prefix,
                      enable_auto_commit=False, isolation_level="read_committed",
                      auto_offset_reset="earliest")
    p = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=prefix, acks="all",
                      enable_idempotence=True, linger_ms=5)
    p.init_transactions()
    done, start, positions = 0, None, {}
    last = time.monotonic()
    in_txn = False
    while done < n:
        for tp, recs in c.poll(timeout_ms=100).items():
            if start is None:
                start = time.monotonic()
            if not in_txn:
                p.begin_transaction()
                in_txn = True
            for r in recs:
                p.send(names["output"], key=r.key, value=r.value)
            positions[tp] = recs[-1].offset + 1
            done += len(recs)
        if in_txn and (time.monotonic() - last > 0.5 or done >= n):
            p.send_offsets_to_transaction(
                {tp: OffsetAndMetadata(o, "", -1) for tp, o in positions.items()},
                c.group_metadata())
            p.commit_transaction()
            in_txn, last = False, time.monotonic()
    elapsed = time.monotonic() - (start or time.monotonic())
    c.close()
    p.close()
    return n / elapsed


@contextlib.contextmanager
def scratch_folder(prefix: str) -> Iterator[Path]:
    """A folder for one bench's files, removed on leaving."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


@contextlib.contextmanager
def kafka_in(bootstrap: str | None, work: Path) -> Iterator[str]:
    """The given Kafka, or a one-node cluster started in `work` and stopped on leaving:
    its bootstrap."""
    if bootstrap is not None:
        yield bootstrap
        return
    from harness.kafka.cluster import KafkaCluster
    from harness.procs import ProcessRegistry

    registry = ProcessRegistry(work)
    try:
        cluster = KafkaCluster(work, registry, size=1)
        cluster.start()
        yield cluster.bootstrap
    finally:
        registry.stop_all()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap")
    ap.add_argument("--events", type=int, default=20000)
    args = ap.parse_args()
    with scratch_folder("bench-worker-") as work, kafka_in(args.bootstrap, work) as bootstrap:
        n = args.events
        eos, state, info = run_worker(bootstrap, "exactly_once_v2", n, work)
        print(f"worker exactly_once_v2, 1 pod x 2 threads: {eos:,.0f} events/s ({n} events)")
        alos, _s, _i = run_worker(bootstrap, "at_least_once", n, work)
        print(f"worker at_least_once, 1 pod x 2 threads:   {alos:,.0f} events/s")
        bare = bare_loop(bootstrap, n)
        print(f"bare kafka-python transactional copy loop: {bare:,.0f} events/s")
        print(f"ratio worker EOS / bare loop:              {eos / bare:.2f}")
        print(f"restore after wipe:                        {restore_speed(info, state):,.0f} "
              "changelog records/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
