"""Where a run's time goes, and how long recovery takes after each fault kind.

    .venv/bin/python bench/bench_faults.py [--kinds kill,stop,...] [--default-run]
                                           [--platforms local,docker] [--shared-spark]

For each fault kind: one short run on the fixed worker (a 3-broker cluster for the broker
faults) whose plan is that single fault at t=6 s; printed are the time from the fault's
end (heal) until every pod is RUNNING again, and the drain time (committed offsets reach
the input's end) after the load stops.
With --platforms local,docker: each kind on each platform, side by side in one table (a
kind a platform cannot apply, netem on docker, is shown as n/a). The network kinds run
local brokers and pods in the run's own network (as root: harness/platforms/local_network.py).
With --default-run: the default 60 s run (profile `all`), phase by phase.
With --shared-spark: one Spark Connect server checks every run (the figures do not
depend on the check; it only saves a JVM start per run).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from faults.model import Plan, Step, Trigger
from harness.config.platforms import PLATFORMS
from harness.config.run import resolve
from harness.run.lifecycle import Run

SINGLE_FAULTS: dict[str, Step] = {
    "kill": Step(0, "kill", "pod-0", Trigger(6.0), heal_after_s=2.0),
    "stop": Step(0, "stop", "pod-0", Trigger(6.0), heal_after_s=2.0),
    "pause": Step(0, "pause", "pod-0", Trigger(6.0), heal_after_s=10.0),
    "move-with-volume": Step(0, "move", "pod-0", Trigger(6.0), {"keep_volume": True}),
    "move-empty": Step(0, "move", "pod-0", Trigger(6.0), {"keep_volume": False}),
    "scale-out": Step(0, "scale-out", "pod-2", Trigger(6.0), heal_after_s=6.0),
    "delay-checkpoint": Step(0, "delay-checkpoint", "pod-0", Trigger(6.0), {"ms": 3000},
                             heal_after_s=6.0),
    "truncate-global": Step(0, "truncate-global", "pod-0", Trigger(6.0)),
    "kill-broker": Step(0, "kill-broker", "broker-2", Trigger(6.0), heal_after_s=4.0),
    "stop-broker": Step(0, "stop-broker", "broker-2", Trigger(6.0), heal_after_s=4.0),
    "partition": Step(0, "partition", "pod-0", Trigger(6.0), heal_after_s=6.0),
    # Past the session timeout: pod-0 is a member no more and rejoins after the heal.
    "partition-12s": Step(0, "partition", "pod-0", Trigger(6.0), heal_after_s=12.0),
    "partition-broker": Step(0, "partition", "broker-1", Trigger(6.0), heal_after_s=6.0),
    "netem": Step(0, "netem", "pod-0", Trigger(6.0), {"delay_ms": 200, "loss_pct": 5},
                  heal_after_s=6.0),
    # On the fault filesystem (fuse3): the heal is the restart after the rollback + remount.
    "power-loss": Step(0, "power-loss", "pod-0", Trigger(6.0), heal_after_s=2.0),
    "io-delay": Step(0, "io-delay", "pod-0", Trigger(6.0), {"ms": 1500}, heal_after_s=6.0),
    "io-error": Step(0, "io-error", "pod-0", Trigger(6.0), heal_after_s=3.0),
}
BROKER_FAULTS = ("kill-broker", "stop-broker")  # these need a 3-node cluster
console = Console()


def recovery_seconds(run_dir: Path) -> float | None:
    """From the fault's end op to the last pod trace event saying RUNNING after it."""
    ops = [json.loads(line) for line in (run_dir / "history.jsonl").read_text().splitlines()]
    ends = [o["time_ns"] for o in ops if o["process"] == "nemesis" and o["value"]["phase"] == "end"]
    if not ends:
        return None
    healed = ends[0]
    running = []
    for trace in (run_dir / "pods").glob("*/trace.jsonl"):
        times = [e["ts_ns"] for e in map(json.loads, trace.read_text().splitlines())
                 if e.get("event") == "client-state" and e.get("to") == "RUNNING"
                 and e["ts_ns"] >= healed]
        if times:
            running.append(min(times))
    # None: no pod went RUNNING after the heal (none had left it, or none came back)
    return round((max(running) - healed) / 1e9, 2) if running else None


def one(kind: str, step: Step, root: Path, platform: str = "local",
        spark_master: str | None = None) -> dict[str, Any]:
    brokers = 3 if kind in BROKER_FAULTS else 1
    config = resolve({"profile": "kill", "time_limit_s": 20.0, "seed": 7, "brokers": brokers,
                      "platform": platform, "spark_master": spark_master})
    outcome = Run(config, root, Plan(7, f"bench-{kind}", (step,))).execute()
    info = json.loads((outcome.run_dir / "run.json").read_text())
    return {"kind": kind, "verdict": outcome.verdict,
            "recovery_s": recovery_seconds(outcome.run_dir),
            "drain_s": info["timings"].get("drain_s"), "timings": info["timings"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kinds", default=",".join(SINGLE_FAULTS))
    parser.add_argument("--default-run", action="store_true")
    parser.add_argument("--platforms", default="local")
    parser.add_argument("--shared-spark", action="store_true")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="kchaos-bench-faults-"))
    console.print(f"kchaos fault bench: run folders under {root}")
    with contextlib.ExitStack() as stack:
        spark_master = None
        if args.shared_spark:
            from checker.spark_server import SparkConnectServer

            server = SparkConnectServer(root / "spark-connect.log", "local[*]")
            spark_master = stack.enter_context(server).url
        bench(args, root, spark_master)


def bench(args: argparse.Namespace, root: Path, spark_master: str | None) -> None:
    if args.default_run:
        started = time.monotonic()
        outcome = Run(resolve({}), root).execute()
        wall = time.monotonic() - started
        timings = json.loads((outcome.run_dir / "run.json").read_text())["timings"]
        table = Table(title=f"default run (60 s, profile all): {wall:.0f} s start to verdict")
        table.add_column("phase")
        table.add_column("seconds", justify="right")
        for phase, seconds in timings.items():
            if isinstance(seconds, int | float):  # (setup_parts: bench/bench_run.py)
                table.add_row(phase.removesuffix("_s"), f"{seconds:.1f}")
        console.print(table)
        console.print(f"verdict: {outcome.verdict}")
    table = Table(title="recovery after one fault (1 pod of 2 hit, 2 threads, 100 events/s)")
    for column in ("fault", "platform", "verdict", "heal -> all RUNNING (s)",
                   "drain after load (s)", "setup (s)"):
        table.add_column(column)
    for kind in args.kinds.split(","):
        for platform in args.platforms.split(","):
            if SINGLE_FAULTS[kind].fault in PLATFORMS[platform].unsupported_faults:
                table.add_row(kind, platform, "n/a", "n/a", "n/a", "n/a")
                continue
            row = one(kind, SINGLE_FAULTS[kind], root, platform, spark_master)
            recovery = "-" if row["recovery_s"] is None else str(row["recovery_s"])
            table.add_row(kind, platform, str(row["verdict"]), recovery, str(row["drain_s"]),
                          str(row["timings"].get("setup_s")))
            console.print(f"{kind} on {platform}: {row}")
    console.print(table)
    console.print("-: no pod went RUNNING after the heal (none left RUNNING, or none came back)")


if __name__ == "__main__":
    main()
