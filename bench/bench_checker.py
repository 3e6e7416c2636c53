"""Checker speed, the old way and the new way side by side in one bench run, beside two
floors on the same Parquet files (bench/checker_floor.py).

Targets: synthetic ledger histories (bench/checker_history.py; 1M and 10M events by
default) and real run folders (`--run results/<run>`, copied under bench/out/ first). Each
target is checked:
  fresh   `python -m checker` in a fresh process starting its own local[*] JVM (as every
          run did before: a JVM per check);
  shared  the same command against one Spark Connect server started by the bench (as a
          nightly and the e2e tests do): cold, then --warm N
          times (Spark's JIT keeps warming over the first few checks of a server);
  cluster (with --standalone) against a local standalone master, its one worker given 1,
          then 2 cores;
and the floors: one query, the lost/duplicate join of committed input against committed
output, answered by DuckDB (the in-process columnar floor) and by the shared Spark server
(the floor of any checker that stays a Spark job), each beside the last warm check.
Printed: wall seconds split into Spark start, load and checks, the CPU seconds of the
client and of the JVM, and the load average at that moment: the machine is shared, so CPU
seconds are the steadier figure.

    .venv/bin/python bench/bench_checker.py [--sizes 1000000,10000000] [--run DIR ...]
                                            [--warm 3] [--standalone] [--regenerate]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from checker_floor import checker_counts, duckdb_floor, spark_floor  # noqa: E402
from checker_history import OUT, ensure_history  # noqa: E402

from checker.check import history_bytes  # noqa: E402
from checker.session import session_settings_for  # noqa: E402
from checker.spark_server import SparkConnectServer  # noqa: E402

sys.path.insert(0, str(REPO / "tests" / "checker"))
from spark_standalone import standalone_cluster  # noqa: E402


class TreeSampler:
    """Peak RSS and CPU seconds of a process and its children (the driver's JVM), sampled:
    the machine is shared, so CPU seconds tell more about the checker than wall time."""

    def __init__(self, pid: int) -> None:
        self.root = psutil.Process(pid)
        self.peak_rss = 0
        self.cpu: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        rss = 0
        for p in [self.root, *self.root.children(recursive=True)]:
            with contextlib.suppress(psutil.NoSuchProcess):
                rss += p.memory_info().rss
                t = p.cpu_times()
                self.cpu[p.pid] = t.user + t.system
        self.peak_rss = max(self.peak_rss, rss)

    def _run(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(psutil.NoSuchProcess):
                self._sample()
            self._stop.wait(0.2)

    def __enter__(self) -> TreeSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def run_check(run: Path, master: str | None, server_pid: int | None = None) -> Figures:
    """`python -m checker` in a fresh process; the figures of its results.json, plus CPU
    seconds of the client tree and, for a shared server, of the server's tree meanwhile."""
    cmd = [sys.executable, "-m", "checker", str(run)]
    if master:
        cmd += ["--spark-master", master]
    server = TreeSampler(server_pid) if server_pid else None
    if server:
        server._sample()
    before = sum(server.cpu.values()) if server else 0.0
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL)
    with TreeSampler(proc.pid) as sampler:
        code = proc.wait()
    wall = time.perf_counter() - t
    if code not in (0, 1, 2):
        raise RuntimeError(f"checker exited {code}")
    if server:
        server._sample()
    doc = json.loads((run / "results.json").read_text())
    return Figures(doc, wall, sum(sampler.cpu.values()),
                   (sum(server.cpu.values()) - before) if server else 0.0,
                   sampler.peak_rss, os.getloadavg()[0])


@dataclass(frozen=True)
class Figures:
    doc: dict[str, Any]
    wall_s: float
    client_cpu_s: float
    server_cpu_s: float
    peak_rss: int
    load: float

    def line(self, way: str) -> str:
        f = self.doc["figures"]
        checks = sum(f.get("check_s", {}).values())
        return (f"  {way:14} {self.wall_s:7.1f} s wall  (start {f.get('spark_start_s', 0):5.1f}"
                f"  load {f.get('load_s', 0):6.1f}  checks {checks:6.1f})  CPU client "
                f"{self.client_cpu_s:6.1f} s + server {self.server_cpu_s:6.1f} s  "
                f"verdict {self.doc['verdict']}  load avg {self.load:.1f}")


def copy_run(run: Path) -> Path:
    """A real run's history, copied: the bench rewrites results.json many times."""
    dest = OUT / f"run-{run.name}"
    if not (dest / "history").is_dir():
        shutil.copytree(run / "history", dest / "history")
    return dest


def spark_floor_passes(
    history: Path, url: str, passes: int
) -> tuple[list[float], tuple[int, int]]:
    """The floor query on the shared server, `passes` times, with the shuffle settings a
    check of this history sets: seconds of each pass, and the last pass's lost and
    duplicated counts."""
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.remote(url).getOrCreate()
    for key, value in session_settings_for(history_bytes(history)).items():
        spark.conf.set(key, value)
    answers = [spark_floor(spark, history) for _ in range(passes)]
    return [seconds for seconds, _, _ in answers], answers[-1][1:]


def bench_target(name: str, run: Path, server: Any, standalone: bool, warm_passes: int) -> None:
    history = run / "history"
    print(f"\n== {name} ({run}) on {os.cpu_count()} cores, load avg {os.getloadavg()[0]:.1f}",
          flush=True)
    fresh = run_check(run, None)
    print(fresh.line("fresh JVM"), flush=True)
    cold = run_check(run, server.url, server.proc.pid)
    print(cold.line("shared, cold"), flush=True)
    warm = cold
    for n in range(1, warm_passes + 1):
        warm = run_check(run, server.url, server.proc.pid)
        print(warm.line(f"shared, warm {n}"), flush=True)
    events = warm.doc["figures"].get("events", 0)
    floor_s, lost, dups = duckdb_floor(history)
    print(f"  {'duckdb floor':14} {floor_s:7.2f} s wall  (lost {lost}, duplicated {dups})")
    # As many passes as the check had on this server (cold, then warm): JIT alike.
    spark_s, spark_counts = spark_floor_passes(history, server.url, warm_passes + 1)
    print(f"  {'spark floor':14} {spark_s[-1]:7.2f} s wall  (the same query on the shared "
          f"server; passes {', '.join(f'{s:.2f}' for s in spark_s)})")
    check_s = warm.doc["figures"]["total_s"]
    print(f"  events {events:,}; peak RSS fresh {fresh.peak_rss / 2**20:,.0f} MiB; "
          f"warm/fresh wall {warm.wall_s / fresh.wall_s:.2f}; last warm check {check_s:.1f} s"
          f" = {check_s / floor_s:.1f} x the DuckDB floor = {check_s / spark_s[-1]:.1f} x the "
          f"Spark floor; Spark floor = {spark_s[-1] / floor_s:.1f} x the DuckDB floor",
          flush=True)
    ours = checker_counts(warm.doc)
    if not ours == spark_counts == (lost, dups):
        print(f"  COUNTS DIFFER (lost, duplicated): checker {ours}, DuckDB {(lost, dups)}, "
              f"Spark {spark_counts}")
    if warm.doc["verdict"] != fresh.doc["verdict"]:
        print(f"  VERDICTS DIFFER: fresh {fresh.doc['verdict']}, shared {warm.doc['verdict']}")
    if standalone:
        # One worker (this machine has 2 cores), its executor given 1 core, then 2.
        for cores in (1, 2):
            with standalone_cluster(OUT / f"standalone-{cores}", cores=cores) as master:
                print(run_check(run, master).line(f"cluster {cores} core"), flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000000,10000000", help="synthetic events; '' for none")
    ap.add_argument("--run", type=Path, action="append", default=[],
                    help="a real run folder (its history/ is copied under bench/out/)")
    ap.add_argument("--standalone", action="store_true",
                    help="also on a standalone cluster (1 worker; 1 then 2 cores)")
    ap.add_argument("--warm", type=int, default=3, metavar="N",
                    help="warm checks on the shared server after its cold one (the last is "
                         "the one compared with the floors)")
    ap.add_argument("--regenerate", action="store_true")
    args = ap.parse_args()
    targets = [(f"run {r.name}", copy_run(r)) for r in args.run]
    targets += [(f"{int(n):,} events", ensure_history(int(n), args.regenerate))
                for n in args.sizes.split(",") if n]
    with SparkConnectServer(OUT / "spark-connect.log") as server:
        for name, run in targets:
            bench_target(name, run, server, args.standalone, args.warm)
    return 0


if __name__ == "__main__":
    sys.exit(main())
