"""Where a warm check spends its time: per check, wall seconds and the Spark jobs and
stages it runs, on one in-process local Spark (the plan is the one a Connect server runs).

    .venv/bin/python bench/bench_checker_profile.py [--size 1000000] [--run DIR] [--passes 2]

The history is bench/checker_history.py's synthetic one (generated once under bench/out/)
or a run folder's. Pass 1 is cold (JIT, first reads); the last pass is the warm figure.
A check with many jobs re-reads what another already computed; a stage count far above
its job count is a plan with many shuffles. The DuckDB floor is printed beside it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from checker_history import ensure_history  # noqa: E402


def profile_pass(spark: Any, history: Path) -> dict[str, Any]:
    """check_history's steps (checker/check.py), each check in a Spark job group."""
    from checker.check import history_bytes
    from checker.checks import CHECKS
    from checker.frames import load_frames
    from checker.meta import load_meta
    from checker.session import shuffle_partitions_for

    sc = spark.sparkContext
    tracker = sc.statusTracker()

    def jobs_of(group: str) -> tuple[int, int]:
        jobs = [tracker.getJobInfo(j) for j in tracker.getJobIdsForGroup(group)]
        return len(jobs), sum(len(j.stageIds) for j in jobs if j is not None)

    tag = f"p{time.monotonic_ns()}"
    t0 = time.perf_counter()
    meta = load_meta(history)
    spark.conf.set("spark.sql.shuffle.partitions",
                   str(shuffle_partitions_for(history_bytes(history))))
    sc.setJobGroup(f"{tag}-load", "load")
    frames = load_frames(spark, history)
    frames.persist()
    rows: list[tuple[str, float, int, int, Any]] = [
        ("load + persist", time.perf_counter() - t0, *jobs_of(f"{tag}-load"), "")]
    try:
        for name, check in CHECKS.items():
            if name in meta.not_applicable:
                continue
            sc.setJobGroup(f"{tag}-{name}", name)
            t = time.perf_counter()
            result = check(spark, frames, meta)
            rows.append((name, time.perf_counter() - t, *jobs_of(f"{tag}-{name}"),
                         result.valid))
    finally:
        sc.setJobGroup(f"{tag}-end", "end")
        frames.unpersist()
    return {"wall": time.perf_counter() - t0, "rows": rows}


def duckdb_floor(history: Path) -> float:
    import duckdb

    con = duckdb.connect()
    t = time.perf_counter()
    con.execute(f"""
        WITH off AS (SELECT partition, coalesce(committed, 0) c FROM
                     read_parquet('{history}/offsets.parquet')),
        i AS (SELECT account, event_id FROM read_parquet('{history}/input.parquet') x
              JOIN off ON x.partition = off.partition WHERE x."offset" < off.c),
        o AS (SELECT account, event_id FROM read_parquet('{history}/output.parquet') y
              JOIN off ON y.in_partition = off.partition WHERE y.in_offset < off.c),
        ci AS (SELECT account, event_id, count(*) n FROM i GROUP BY ALL),
        co AS (SELECT account, event_id, count(*) n FROM o GROUP BY ALL)
        SELECT count(*) FILTER (WHERE co.n IS NULL), count(*) FILTER (WHERE co.n > 1)
        FROM ci LEFT JOIN co USING (account, event_id)""").fetchall()
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1_000_000)
    ap.add_argument("--run", type=Path, default=None)
    ap.add_argument("--passes", type=int, default=2)
    args = ap.parse_args()
    history = (args.run / "history") if args.run else ensure_history(args.size, False) / "history"
    from checker.session import start_spark

    spark = start_spark(app_name="kchaos-bench-profile")
    try:
        for n in range(1, args.passes + 1):
            result = profile_pass(spark, history)
            print(f"pass {n}: wall {result['wall']:.1f} s, "
                  f"load average {os.getloadavg()[0]:.1f}")
            for name, seconds, jobs, stages, valid in result["rows"]:
                print(f"  {name:18s} {seconds:7.2f} s  {jobs:3d} jobs {stages:3d} stages  "
                      f"valid={valid}", flush=True)
    finally:
        spark.stop()
    print(f"DuckDB floor (lost/duplicate join): {duckdb_floor(history):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
