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
    .venv/bin/python bench/bench_kstreams.py protocols [--versions 4.4.0] [--times 5]
        per release (on brokers of the same release) and rebalance protocol (classic,
        streams: `--group-protocol`), the median over --times runs of one plan, pod-1
        SIGKILLed once 15 s into the load and restarted by the restart policy: from the
        SIGKILL to every task pod-1 held RUNNING again somewhere (the group processing
        again), from its restart to its client-state RUNNING, and from the pods' start to
        every pod RUNNING; with the stream threads that died (`fatal`). A protocol a
        release cannot take is a row saying why
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
    from harness.config.run import resolve
    from harness.run.command import execute
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


PROTOCOL_VERSIONS = ("4.4.0",)
KILLED = "pod-1"
KILL_AT_S = 15.0  # the group has formed and committed (faults.model's first-fault floor)


def _recovery(run_dir: Path) -> tuple[float | None, float | None, int]:
    """(SIGKILL to every task the killed pod held RUNNING again, anywhere; its restart to
    its client-state RUNNING; stream threads that died) of a one-kill run; None where the
    run never got there."""
    ops = _lines(run_dir / "history.jsonl")
    killed_at = next((o["time_ns"] for o in ops if o["process"] == "nemesis"
                      and o["f"] == "kill" and o["value"]["phase"] == "start"), None)
    traces = {pod.name: _lines(pod / "trace.jsonl") for pod in (run_dir / "pods").iterdir()
              if (pod / "trace.jsonl").exists()}
    deaths = sum(e.get("event") == "fatal" for events in traces.values() for e in events)
    if killed_at is None:
        return None, None, deaths
    held: dict[str, bool] = {}
    for e in traces.get(KILLED, []):
        if e["ts_ns"] < killed_at and e.get("event") in ("task-running", "task-closed"):
            held[e["task"]] = e["event"] == "task-running"
    again = [min((e["ts_ns"] for events in traces.values() for e in events
                  if e.get("event") == "task-running" and e.get("task") == task
                  and e["ts_ns"] > killed_at), default=None)
             for task, running in held.items() if running]
    processing = (None if not again or None in again
                  else (max(t for t in again if t is not None) - killed_at) / 1e9)
    restarted = next((o["time_ns"] for o in ops if o["f"] == "pod-restarted"
                      and o["value"]["target"] == KILLED and o["time_ns"] > killed_at), None)
    running = min((e["ts_ns"] for e in traces.get(KILLED, []) if e.get("event") == "client-state"
                   and e.get("to") == "RUNNING" and restarted is not None
                   and e["ts_ns"] > restarted), default=None)
    restart = None if running is None or restarted is None else (running - restarted) / 1e9
    return processing, restart, deaths


def _median(values: list[float | None]) -> str:
    got = [v for v in values if v is not None]
    missing = f" ({len(values) - len(got)} never)" if len(got) < len(values) else ""
    return f"{statistics.median(got):.1f}{missing}" if got else "never"


def bench_protocols(versions: list[str], times: int) -> None:
    from faults.model import Plan, Step, Trigger
    from harness.config.run import resolve
    from harness.errors import UsageError
    from harness.run.command import execute, require_tools

    table = Table(title=f"Rebalance protocols under one SIGKILL of {KILLED}, medians of "
                        f"{times} run(s)")
    for column in ("release", "protocol", "runs", "SIGKILL to processing s",
                   "restart to RUNNING s", "start to RUNNING s", "threads died", "verdicts"):
        table.add_column(column, justify="right")
    with tempfile.TemporaryDirectory(prefix="kchaos-bench-") as results:
        for version in versions:
            for protocol in ("classic", "streams"):
                processing, restart, start = [], [], []
                deaths, verdicts = 0, []
                try:
                    for seed in range(1, times + 1):
                        config = resolve({"sut": "kstreams", "kstreams_version": version,
                                          "kafka_version": version, "group_protocol": protocol,
                                          "profile": "kill", "seed": seed,
                                          "time_limit_s": 45.0}, draw_knobs=False)
                        require_tools(config)
                        plan = Plan(seed, "kill", (Step(0, "kill", KILLED,
                                                        Trigger(at_s=KILL_AT_S)),))
                        outcome = execute(config, Path(results), plan)
                        info = json.loads((outcome.run_dir / "run.json").read_text())
                        start.append(info["timings"]["setup_parts"].get("pods_s"))
                        got = _recovery(outcome.run_dir)
                        processing.append(got[0])
                        restart.append(got[1])
                        deaths += got[2]
                        verdicts.append("valid" if outcome.verdict is True else
                                        "invalid" if outcome.verdict is False else "unknown")
                except UsageError as refused:  # a protocol this release cannot take
                    table.add_row(version, protocol, "0", str(refused), "", "", "", "")
                    continue
                table.add_row(version, protocol, str(len(verdicts)), _median(processing),
                              _median(restart), _median(start), str(deaths),
                              ",".join(sorted(set(verdicts))))
    console.print(table)


def bench_throughput(rate: float, time_limit: float) -> None:
    import pyarrow.parquet as pq

    from harness.config.run import resolve
    from harness.run.command import execute

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
    pr = sub.add_parser("protocols")
    pr.add_argument("--versions", default=",".join(PROTOCOL_VERSIONS))
    pr.add_argument("--times", type=int, default=5)
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
    elif args.what == "protocols":
        bench_protocols(args.versions.split(","), args.times)
    else:
        bench_throughput(args.rate, args.time_limit)


if __name__ == "__main__":
    main()
