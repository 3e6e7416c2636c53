"""Runs per hour of a nightly: `kchaos nightly` on bench/matrix_throughput.yaml (eight
60 s runs of one steady cell, 2 at a time), from this checkout or another one, then the
nightly's own figures: runs, wall time, runs/hour, the share of the wall time the
machine spent in load phases (sum of load_s / (jobs x wall)), how busy its CPUs were
around the whole command (/proc/stat: 1 - idle / total), and where that CPU went: the
CPU seconds of every process started meanwhile, by part (brokers, pods, the harness's own
`kchaos` processes, the Spark server, ...), sampled every SAMPLE_S (a process's last
SAMPLE_S before it exits is not seen).

    .venv/bin/python bench/bench_nightly_throughput.py [--source DIR] [--matrix FILE]

`--source` is another checkout of kchaos (e.g. `git worktree add /tmp/before <rev>`): its
harness runs with this virtualenv's packages, its results in its own `results/`. Compare
two revisions on an otherwise idle machine; the nightly's runs share the 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

import psutil
from rich.console import Console
from rich.table import Table

from harness.nightly import load_matrix
from harness.report.nightlies import read_nightly

HERE = Path(__file__).resolve().parent
MATRIX = HERE / "matrix_throughput.yaml"
SAMPLE_S = 0.5
# The parts of a nightly, by a word of each process's command line (first match wins).
PARTS = (("kafka.Kafka", "brokers (JVM)"), ("org.apache.spark", "Spark server (JVM)"),
         ("workloads.worker", "pods (worker)"), ("faults.faultfs", "fault filesystem"),
         ("netdelay", "packet delayer"), ("-m harness", "harness (kchaos run, nightly)"))


JAVA_CLASS = re.compile(r"^[a-z][a-z0-9_]*(\.[A-Za-z0-9_$]+)+$")


def part_of(cmdline: list[str]) -> str:
    """The part a process belongs to; anything else by its program (and a JVM's main
    class), so that "other" says what it is."""
    joined = " ".join(cmdline)
    known = next((name for word, name in PARTS if word in joined), None)
    if known is not None or not cmdline:
        return known or "other"
    program = Path(cmdline[0]).name
    main = next((arg for arg in cmdline[1:] if JAVA_CLASS.match(arg)), "")
    return f"other: {program} {main}".rstrip()


class CpuByPart(threading.Thread):
    """CPU seconds (user + system) of the processes started after it, by part."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.since = time.time()
        self.stop = threading.Event()
        self.seen: dict[tuple[int, float], tuple[str, float]] = {}

    def run(self) -> None:
        while not self.stop.wait(SAMPLE_S):
            for proc in psutil.process_iter(["pid", "create_time", "cmdline", "cpu_times"]):
                info = proc.info
                if not info["cpu_times"] or info["create_time"] < self.since:
                    continue
                cpu = info["cpu_times"].user + info["cpu_times"].system
                key = (info["pid"], info["create_time"])
                # A known part wins over "other": an exited, unreaped process (a zombie)
                # has no command line left but still its CPU times, and a launcher script
                # exec()s into the JVM it starts.
                part = part_of(info["cmdline"] or [])
                earlier = self.seen.get(key, ("other", 0.0))[0]
                if part.startswith("other") and not earlier.startswith("other"):
                    part = earlier
                self.seen[key] = (part, cpu)

    def totals(self) -> dict[str, float]:
        out: dict[str, float] = defaultdict(float)
        for part, cpu in self.seen.values():
            out[part] += cpu
        return dict(out)


def newest_nightly(results: Path) -> Path:
    folders = [p for p in results.glob("nightly-*") if (p / "nightly.json").is_file()]
    if not folders:
        sys.exit(f"no nightly folder with nightly.json in {results}")
    return max(folders, key=lambda p: p.stat().st_mtime)


def figures(nightly_dir: Path, jobs: int) -> dict[str, float]:
    n = read_nightly(nightly_dir)
    load = 0.0
    for run in n.runs:
        if run.summary is None:
            continue
        try:
            timings = json.loads((run.summary.run_dir / "run.json").read_text())["timings"]
        except (OSError, ValueError, KeyError):
            continue
        load += float(timings.get("load_s") or 0.0)
    wall = n.wall_s
    return {"runs": len(n.runs), "wall_s": wall, "runs_per_hour": n.runs_per_hour or 0.0,
            "load_share": load / (jobs * wall) if wall else 0.0}


def cpu_times() -> tuple[int, int]:
    """(idle incl. iowait, total) jiffies of all CPUs since boot."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    return fields[3] + fields[4], sum(fields)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=HERE.parent,
                        help="the kchaos checkout to run (default: this one)")
    parser.add_argument("--matrix", type=Path, default=MATRIX)
    args = parser.parse_args()
    source = args.source.resolve()
    env = {**os.environ, "PYTHONPATH": str(source)}
    idle_before, total_before = cpu_times()
    sampler = CpuByPart()
    sampler.start()
    subprocess.run([sys.executable, "-m", "harness", "nightly", "--matrix",
                    str(args.matrix.resolve()), "--budget", "1h"],
                   cwd=source, env=env, check=False)
    idle_after, total_after = cpu_times()
    sampler.stop.set()
    sampler.join()
    nightly_dir = newest_nightly(source / "results")
    result = figures(nightly_dir, load_matrix(args.matrix).jobs or 1)
    busy = 1 - (idle_after - idle_before) / max(1, total_after - total_before)
    table = Table(title=f"{nightly_dir} ({source})")
    for column in ("runs", "wall", "runs/hour", "load share", "CPU busy"):
        table.add_column(column, justify="right")
    table.add_row(f"{result['runs']:.0f}", f"{result['wall_s']:.0f} s",
                  f"{result['runs_per_hour']:.1f}", f"{result['load_share']:.2f}",
                  f"{busy:.0%}")
    console = Console(width=120)
    console.print(table)
    parts = Table(title="CPU seconds by part (processes started during the nightly)")
    for column in ("part", "CPU s", "per run", "share"):
        parts.add_column(column, justify="left" if column == "part" else "right")
    totals = sampler.totals()
    whole = sum(totals.values()) or 1.0
    runs = max(1, int(result["runs"]))
    for part, cpu in sorted(totals.items(), key=lambda kv: -kv[1]):
        parts.add_row(part, f"{cpu:.0f}", f"{cpu / runs:.1f}", f"{cpu / whole:.0%}")
    console.print(parts)


if __name__ == "__main__":
    main()
