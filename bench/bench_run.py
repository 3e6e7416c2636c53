"""Where one `kchaos run` spends its time, and the harness overhead (wall - load) / load.

    .venv/bin/python bench/bench_run.py [--profile all] [--seed 1] [--time-limit 60]
                                        [--runs 1] [--shared-spark] [--out DIR]
                                        [--from-json A.json B.json ...]

Each run is the default `kchaos run` (profile `all`, 60 s, seed 1 unless told), timed
from start to verdict and report. Printed per run: the phases run.json records (setup and
its parts: SUT preparation, Kafka start (format, JVM to ready, from cluster.json), topics,
pods to RUNNING; load; heal; drain; stop; collect; check), the report, and the ratio.
Every run's figures go to `<out>/bench-run-<n>.json`; `--from-json` prints stored ones
side by side (a run before a change beside one after, each recorded by this bench).
With --shared-spark the check goes to one Spark Connect server started first (a nightly's
case: no JVM start in the run); its start is not counted. Without it, only run 1 is a
fresh `kchaos run`'s check: the runs share this process, and PySpark keeps the JVM it
started for run 1, so later runs start a session on a JVM already warm.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

console = Console()


def figures(run_dir: Path, wall_s: float, verdict: Any) -> dict[str, Any]:
    info = json.loads((run_dir / "run.json").read_text())
    timings = dict(info.get("timings", {}))
    cluster_path = run_dir / "cluster.json"
    cluster = json.loads(cluster_path.read_text()) if cluster_path.exists() else {}
    load = float(timings.get("load_s") or 0.0)
    phases = {k: v for k, v in timings.items() if isinstance(v, int | float)}
    counted = sum(phases.values())
    return {
        "run_dir": str(run_dir), "verdict": verdict, "wall_s": round(wall_s, 2),
        "phases": phases, "setup_parts": timings.get("setup_parts", {}),
        "kafka_start": cluster.get("start_seconds", {}),
        "report_s": round(wall_s - counted, 2),  # run.json is written before the report
        "ratio": round((wall_s - load) / load, 2) if load else None,
        "loadavg": os.getloadavg()[0], "kchaos": info.get("versions", {}).get("kchaos"),
    }


def rows(doc: dict[str, Any]) -> list[tuple[str, float | str]]:
    out: list[tuple[str, float | str]] = []
    for phase, seconds in doc["phases"].items():
        out.append((phase.removesuffix("_s"), seconds))
        if phase == "setup_s":
            for part, s in doc["setup_parts"].items():
                out.append((f"  {part.removesuffix('_s')}", s))
                if part == "kafka_s":
                    for sub, t in doc["kafka_start"].items():
                        out.append((f"    {sub.removesuffix('_s')}", t))
    out += [("report (+ rest)", doc["report_s"]), ("wall", doc["wall_s"]),
            ("(wall - load) / load", doc["ratio"] if doc["ratio"] is not None else "?"),
            ("load average (1 min)", round(doc["loadavg"], 2)), ("verdict", str(doc["verdict"]))]
    return out


def show(docs: list[tuple[str, dict[str, Any]]]) -> None:
    table = Table(title="one kchaos run, phase by phase (seconds)")
    table.add_column("phase")
    for name, _ in docs:
        table.add_column(name, justify="right")
    keyed = [dict(rows(doc)) for _, doc in docs]
    order: list[str] = []
    for _, doc in docs:
        order += [k for k, _ in rows(doc) if k not in order]
    for key in order:
        table.add_row(key, *[str(k.get(key, "-")) for k in keyed])
    console.print(table)


def run_once(args: argparse.Namespace, root: Path, spark_master: str | None) -> dict[str, Any]:
    from harness.config.run import resolve
    from harness.run.lifecycle import Run

    explicit: dict[str, Any] = {"profile": args.profile, "seed": args.seed,
                                "time_limit_s": args.time_limit}
    if spark_master is not None:
        explicit["spark_master"] = spark_master
    started = time.monotonic()
    outcome = Run(resolve(explicit), root).execute()
    return figures(outcome.run_dir, time.monotonic() - started, outcome.verdict)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="all")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--shared-spark", action="store_true")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--from-json", type=Path, nargs="+", default=None)
    args = parser.parse_args()
    if args.from_json:
        show([(p.stem, json.loads(p.read_text())) for p in args.from_json])
        return
    root = args.out or Path(tempfile.mkdtemp(prefix="kchaos-bench-run-"))
    root.mkdir(parents=True, exist_ok=True)
    console.print(f"kchaos run bench: run folders under {root}")
    docs: list[tuple[str, dict[str, Any]]] = []
    with contextlib.ExitStack() as stack:
        spark_master = None
        if args.shared_spark:
            from checker.spark_server import SparkConnectServer

            server = SparkConnectServer(root / "spark-connect.log", "local[*]")
            spark_master = stack.enter_context(server).url
        for n in range(args.runs):
            doc = run_once(args, root, spark_master)
            path = root / f"bench-run-{n}.json"
            path.write_text(json.dumps(doc, indent=1))
            docs.append((f"run {n + 1}", doc))
            console.print(f"figures: {path}")
    show(docs)


if __name__ == "__main__":
    main()
