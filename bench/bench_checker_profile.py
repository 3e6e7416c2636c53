"""Where a warm check spends its time: per check, wall seconds, the JVM's CPU seconds and
the Spark jobs and stages it runs, on one in-process local Spark (the plan is the one a
Connect server runs).

    .venv/bin/python bench/bench_checker_profile.py [--size 1000000] [--run DIR]
                                                    [--passes 2] [--baseline REV]

The history is bench/checker_history.py's synthetic one (generated once under bench/out/)
or a run folder's. Pass 1 is cold (JIT, first reads); the last pass is the warm figure.
A check with many jobs re-reads what another already computed; a stage count far above
its job count is a plan with many shuffles. `--baseline REV` also imports the checker of
git revision REV (its checks and its session settings) and alternates the two, pass by
pass, on the same Spark: before and after under the same load. `--connect` runs each
pass as a nightly's run is checked instead: check_history on a session of one Spark
Connect server (wall, load and checks seconds; no job counts through Connect). The DuckDB
floor is printed beside it.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from checker_floor import duckdb_floor  # noqa: E402
from checker_history import OUT, ensure_history  # noqa: E402

CHECKER_MODULES = ("checker.check", "checker.checks", "checker.frames", "checker.meta",
                   "checker.session", "checker.spark_server")


def import_checker(root: Path) -> SimpleNamespace:
    """The checker package of the tree at `root`, imported beside any other: the modules
    it loads are taken out of sys.modules again, so the next import gets its own."""
    for name in [m for m in sys.modules if m == "checker" or m.startswith("checker.")]:
        del sys.modules[name]
    sys.path.insert(0, str(root))
    try:
        mods = {m.split(".")[-1]: importlib.import_module(m) for m in CHECKER_MODULES}
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m == "checker" or m.startswith("checker.")]:
            del sys.modules[name]
    return SimpleNamespace(**mods)


def baseline_tree(rev: str) -> Path:
    """`git archive REV` under bench/out/ (kept: the same REV is extracted once)."""
    sha = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", rev], check=True,
                         capture_output=True, text=True).stdout.strip()
    root = OUT.parent / f"baseline-{sha}"
    if not (root / "checker").is_dir():
        root.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(REPO), "archive", sha, "checker", "common",
                                  "workloads"], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
    return root


def session_settings(code: SimpleNamespace, history_bytes: int) -> dict[str, str]:
    """What that version's check_history sets on the session; a version from before
    session_settings_for set only the shuffle partitions and ran adaptive."""
    if hasattr(code.session, "session_settings_for"):
        return dict(code.session.session_settings_for(history_bytes))
    return {"spark.sql.shuffle.partitions": str(code.session.shuffle_partitions_for(
        history_bytes)), "spark.sql.adaptive.enabled": "true"}


def jvm_cpu(spark: Any) -> float:
    """CPU seconds of this process's children: the in-process Spark's JVM."""
    total = 0.0
    for p in psutil.Process().children(recursive=True):
        try:
            t = p.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += t.user + t.system
    return total


def profile_pass(spark: Any, history: Path, code: SimpleNamespace) -> dict[str, Any]:
    """check_history's steps (checker/check.py), each check in a Spark job group."""
    sc = spark.sparkContext
    tracker = sc.statusTracker()

    def jobs_of(group: str) -> tuple[int, int]:
        jobs = [tracker.getJobInfo(j) for j in tracker.getJobIdsForGroup(group)]
        return len(jobs), sum(len(j.stageIds) for j in jobs if j is not None)

    tag = f"p{time.monotonic_ns()}"
    t0 = time.perf_counter()
    cpu0 = jvm_cpu(spark)
    meta = code.meta.load_meta(history)
    for key, value in session_settings(code, code.check.history_bytes(history)).items():
        spark.conf.set(key, value)
    sc.setJobGroup(f"{tag}-load", "load")
    frames = code.frames.load_frames(spark, history)
    load_view(code, frames, meta)
    cpu = jvm_cpu(spark)
    rows: list[tuple[str, float, float, int, int, Any]] = [
        ("load view", time.perf_counter() - t0, cpu - cpu0, *jobs_of(f"{tag}-load"), "")]
    try:
        for name, check in code.checks.CHECKS.items():
            if name in meta.not_applicable:
                continue
            sc.setJobGroup(f"{tag}-{name}", name)
            t = time.perf_counter()
            result = check(spark, frames, meta)
            now = jvm_cpu(spark)
            rows.append((name, time.perf_counter() - t, now - cpu, *jobs_of(f"{tag}-{name}"),
                         result.valid))
            cpu = now
    finally:
        sc.setJobGroup(f"{tag}-end", "end")
        frames.unpersist()
    return {"wall": time.perf_counter() - t0, "cpu": jvm_cpu(spark) - cpu0, "rows": rows}


def load_view(code: SimpleNamespace, frames: Any, meta: Any) -> None:
    """Compute the events view as check_history does in the checker being profiled."""
    if hasattr(frames, "tally"):  # the tallies read the run's fault windows from 8fffcb4 on
        tallies = code.checks.event_tallies
        takes_frames = len(inspect.signature(tallies).parameters) > 1
        frames.tally(tallies(meta, frames) if takes_frames else tallies(meta))
    elif hasattr(code.checks, "event_tallies"):  # tallies taken while persisting the view
        frames.persist(code.checks.event_tallies())
    else:  # a checker from before the event tallies persisted the view alone
        frames.persist()


def connect_passes(history: Path, versions: dict[str, SimpleNamespace], passes: int) -> None:
    """check_history of each version on one Spark Connect server, alternating."""
    from pyspark.sql import SparkSession

    log = OUT.parent / "profile-spark-connect.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with versions["this tree"].spark_server.SparkConnectServer(log) as server:
        for n in range(1, passes + 1):
            for label, code in versions.items():
                spark = SparkSession.builder.remote(server.url).getOrCreate()
                # the server's default, which a checker from before session_settings_for
                # left alone (the other version may have turned it off in this session)
                spark.conf.set("spark.sql.adaptive.enabled", "true")
                t = time.perf_counter()
                doc = code.check.check_history(history, server.url, spark=spark)
                f = doc["figures"]
                print(f"pass {n}, {label}: wall {time.perf_counter() - t:.1f} s (load "
                      f"{f.get('load_s', 0):.2f}, checks {sum(f.get('check_s', {}).values()):.2f}"
                      f"), verdict {doc['verdict']}, load average {os.getloadavg()[0]:.1f}")
                print("  " + ", ".join(f"{k} {v:.2f}" for k, v in f.get("check_s", {}).items()),
                      flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1_000_000)
    ap.add_argument("--run", type=Path, default=None)
    ap.add_argument("--passes", type=int, default=2)
    ap.add_argument("--baseline", metavar="REV", default=None,
                    help="also profile the checker of this git revision, pass by pass")
    ap.add_argument("--connect", action="store_true",
                    help="check through one Spark Connect server, as a nightly does")
    args = ap.parse_args()
    history = (args.run / "history") if args.run else ensure_history(args.size, False) / "history"
    versions = {"this tree": import_checker(REPO)}
    if args.baseline:
        versions = {f"baseline {args.baseline}": import_checker(baseline_tree(args.baseline)),
                    **versions}
    if args.connect:
        connect_passes(history, versions, args.passes)
        print(f"DuckDB floor (lost/duplicate join): {duckdb_floor(history)[0]:.2f} s")
        return 0
    spark = versions["this tree"].session.start_spark(app_name="kchaos-bench-profile")
    last: dict[str, dict[str, Any]] = {}
    try:
        for n in range(1, args.passes + 1):
            for label, code in versions.items():
                result = last[label] = profile_pass(spark, history, code)
                print(f"pass {n}, {label}: wall {result['wall']:.1f} s, JVM CPU "
                      f"{result['cpu']:.1f} s, load average {os.getloadavg()[0]:.1f}")
                for name, seconds, cpu, jobs, stages, valid in result["rows"]:
                    print(f"  {name:18s} {seconds:7.2f} s {cpu:6.2f} s CPU {jobs:3d} jobs "
                          f"{stages:3d} stages  valid={valid}", flush=True)
    finally:
        spark.stop()
    if len(last) > 1:
        print("last pass (warm): " + "; ".join(
            f"{label} {r['wall']:.1f} s wall, {r['cpu']:.1f} s JVM CPU, "
            f"{sum(row[3] for row in r['rows'])} jobs" for label, r in last.items()))
    print(f"DuckDB floor (lost/duplicate join): {duckdb_floor(history)[0]:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
