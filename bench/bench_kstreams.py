"""Figures of the Kafka Streams system under test (`--sut kstreams`).

    .venv/bin/python bench/bench_kstreams.py build [--version 4.1.2]
        app build time: cold (empty kchaos cache, Maven's local repository as it is) and
        warm (cached)
    .venv/bin/python bench/bench_kstreams.py runs RESULTS_DIR [RESULTS_DIR ...]
        per folder of runs (one version + setting each): runs, runs with each anomaly class,
        detection rate, and start-to-RUNNING after each SIGKILL (restart to the restarted
        pod's client-state RUNNING)
    .venv/bin/python bench/bench_kstreams.py start [--versions 2.1.1,2.2.2,...] [--times 3]
        per release: a fault-free run's start to RUNNING (the pods' processes started to
        every pod's client-state RUNNING: JVM, topology, rebalance, restore of nothing),
        median and range over --times runs; the app build is cached first, not counted
    .venv/bin/python bench/bench_kstreams.py throughput [--rate 600] [--time-limit 20]
        profile `none`, one pod, two threads, exactly_once_v2, for the Python worker and the
        Kafka Streams app: outputs per second of load, drain time, input-to-output latency
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

console = Console(width=180)
CLASSES = ("stale-checkpoint", "dedup-skip", "lost-event", "wrong-balance", "lost-history",
           "duplicate-output", "unavailable")


def bench_build(version: str) -> None:
    from harness.sut import kstreams

    table = Table(title=f"Kafka Streams {version} app build")
    table.add_column("cache")
    table.add_column("seconds", justify="right")
    with tempfile.TemporaryDirectory(prefix="kchaos-bench-cache-") as cache:
        before = os.environ.get("KCHAOS_CACHE")
        os.environ["KCHAOS_CACHE"] = cache
        try:
            started = time.monotonic()
            kstreams.build(version)
            table.add_row("cold (empty kchaos cache)", f"{time.monotonic() - started:.1f}")
            started = time.monotonic()
            kstreams.build(version)
            table.add_row("warm (cached)", f"{time.monotonic() - started:.2f}")
        finally:
            if before is None:
                os.environ.pop("KCHAOS_CACHE", None)
            else:
                os.environ["KCHAOS_CACHE"] = before
    console.print(table)


def _lines(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue  # a torn last line
    return out


def kill_to_running(run_dir: Path) -> list[float]:
    """Seconds from each SIGKILLed pod's restart to its next client-state RUNNING (a restart
    killed again before it got there is left out: its time is no start-up time)."""
    ops = _lines(run_dir / "history.jsonl")
    kills = [(o["value"]["target"], o["value"]["phase"], o["time_ns"]) for o in ops
             if o["process"] == "nemesis" and o["f"] == "kill"]
    seconds = []
    for pod, phase, at in kills:
        if phase != "end":
            continue
        trace = run_dir / "pods" / pod / "trace.jsonl"
        running = [e["ts_ns"] for e in _lines(trace) if e.get("event") == "client-state"
                   and e.get("to") == "RUNNING" and e["ts_ns"] > at] if trace.exists() else []
        next_kill = min((t for p, ph, t in kills if p == pod and ph == "start" and t > at),
                        default=None)
        if running and (next_kill is None or min(running) < next_kill):
            seconds.append((min(running) - at) / 1e9)
    return seconds


def bench_runs(folders: list[Path]) -> None:
    table = Table(title="KAFKA-20685 profile on --sut kstreams")
    for column in ("runs (folder)", "runs", *CLASSES, "invalid", "kill->RUNNING s (median)"):
        table.add_column(column, justify="right")
    for folder in folders:
        runs = [d for d in sorted(folder.iterdir()) if (d / "results.json").exists()]
        counts = dict.fromkeys(CLASSES, 0)
        invalid = 0
        restarts: list[float] = []
        for run in runs:
            doc = json.loads((run / "results.json").read_text())
            invalid += doc.get("verdict") is False
            for name in doc.get("anomaly_counts", {}):
                if name in counts:
                    counts[name] += 1
            restarts += kill_to_running(run)
        median = f"{statistics.median(restarts):.1f} ({len(restarts)})" if restarts else "-"
        table.add_row(folder.name, str(len(runs)), *(str(counts[c]) for c in CLASSES),
                      f"{invalid}/{len(runs)}", median)
    console.print(table)


START_VERSIONS = ("2.1.1", "2.2.2", "3.6.2", "3.7.0", "4.1.2", "4.2.2")


def bench_start(versions: list[str], times: int) -> None:
    from harness.run.command import execute
    from harness.run.config import resolve
    from harness.sut import kstreams

    table = Table(title="Kafka Streams start to RUNNING, fault-free runs (profile none)")
    for column in ("release", "generation", "pods x threads", "runs", "median s", "min s",
                   "max s"):
        table.add_column(column, justify="right")
    with tempfile.TemporaryDirectory(prefix="kchaos-bench-") as results:
        for version in versions:
            kstreams.build(version)  # cached: the build is not the start
            seconds, shape = [], ""
            for seed in range(1, times + 1):
                config = resolve({"sut": "kstreams", "kstreams_version": version,
                                  "profile": "none", "seed": seed, "time_limit_s": 10.0})
                shape = f"{config.pods} x {config.threads}"
                outcome = execute(config, Path(results))
                info = json.loads((outcome.run_dir / "run.json").read_text())
                seconds.append(float(info["timings"]["setup_parts"]["pods_s"]))
            table.add_row(version, kstreams.generation(version).name, shape, str(len(seconds)),
                          f"{statistics.median(seconds):.1f}", f"{min(seconds):.1f}",
                          f"{max(seconds):.1f}")
    console.print(table)


def bench_throughput(rate: float, time_limit: float) -> None:
    import pyarrow.parquet as pq

    from harness.run.command import execute
    from harness.run.config import resolve

    table = Table(title=f"EOS throughput, profile none, {rate:.0f} events/s offered")
    for column in ("sut", "outputs", "outputs/s of load", "drain s", "latency p50 ms",
                   "latency p99 ms", "verdict"):
        table.add_column(column, justify="right")
    with tempfile.TemporaryDirectory(prefix="kchaos-bench-") as results:
        for sut in ("python", "kstreams"):
            config = resolve({"sut": sut, "profile": "none", "pods": 1, "threads": 2,
                              "rate": rate, "time_limit_s": time_limit})
            outcome = execute(config, Path(results))
            info = json.loads((outcome.run_dir / "run.json").read_text())
            history = outcome.run_dir / "history"
            inputs = pq.read_table(history / "input.parquet").to_pylist()
            outputs = pq.read_table(history / "output.parquet").to_pylist()
            sent = {(r["partition"], r["offset"]): r["timestamp_ms"] for r in inputs}
            latency = sorted(o["timestamp_ms"] - sent[(o["in_partition"], o["in_offset"])]
                             for o in outputs if (o["in_partition"], o["in_offset"]) in sent)
            timings = info.get("timings", {})
            p50 = latency[len(latency) // 2] if latency else None
            p99 = latency[int(len(latency) * 0.99)] if latency else None
            table.add_row(sut, str(len(outputs)),
                          f"{len(outputs) / max(timings.get('load_s', time_limit), 1):.0f}",
                          str(timings.get("drain_s")), str(p50), str(p99), str(outcome.verdict))
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    b = sub.add_parser("build")
    b.add_argument("--version", default=None)
    r = sub.add_parser("runs")
    r.add_argument("folders", nargs="+", type=Path)
    st = sub.add_parser("start")
    st.add_argument("--versions", default=",".join(START_VERSIONS))
    st.add_argument("--times", type=int, default=3)
    t = sub.add_parser("throughput")
    t.add_argument("--rate", type=float, default=600.0)
    t.add_argument("--time-limit", type=float, default=20.0)
    args = parser.parse_args()
    if args.what == "build":
        from harness.sut.kstreams import default_version

        bench_build(args.version or default_version())
    elif args.what == "runs":
        bench_runs(args.folders)
    elif args.what == "start":
        bench_start(args.versions.split(","), args.times)
    else:
        bench_throughput(args.rate, args.time_limit)


if __name__ == "__main__":
    main()
