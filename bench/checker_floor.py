"""The floor a checker is compared with: one query, the lost/duplicate join of committed
input against committed output per (account, event id), run by DuckDB in-process and by
the Spark the checker uses, on the same Parquet files.

DuckDB is the in-process columnar floor; Spark running the very same SQL is the floor of
any checker that stays a Spark job. The gap between the two floors is the engines', the
gap between Spark's floor and the checker is the checker's own work (every check, not one
join). The floor's answer is also two of the checker's counts found another way: committed
events without output (dedup-skip + lost-event) and with more than one (duplicate-output).
Run as a script, it sets DuckDB's answer beside each judged run's results.json:

    .venv/bin/python bench/checker_floor.py results/<run> [<run> ...]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

TABLES = ("input", "output", "offsets")

# `offset` is a keyword: quoted with the engine's own quote ({q}).
FLOOR_SQL = """
WITH off AS (SELECT partition, coalesce(committed, 0) AS c FROM offsets),
i AS (SELECT x.account, x.event_id FROM input x JOIN off ON x.partition = off.partition
      WHERE x.{q}offset{q} < off.c),
o AS (SELECT y.account, y.event_id FROM output y JOIN off ON y.in_partition = off.partition
      WHERE y.in_offset < off.c),
ci AS (SELECT account, event_id, count(*) AS n FROM i GROUP BY account, event_id),
co AS (SELECT account, event_id, count(*) AS n FROM o GROUP BY account, event_id)
SELECT count_if(co.n IS NULL) AS lost, count_if(co.n > 1) AS duplicated
FROM ci LEFT JOIN co ON ci.account = co.account AND ci.event_id = co.event_id
"""


def _files(history: Path, table: str) -> str:
    path = history / f"{table}.parquet"
    return f"{path}/*.parquet" if path.is_dir() else str(path)


def duckdb_floor(history: Path, threads: int = 2) -> tuple[float, int, int]:
    """Seconds, lost and duplicated events, by DuckDB on `threads` threads."""
    import duckdb

    con = duckdb.connect()
    con.execute(f"SET threads = {threads}")
    t = time.perf_counter()
    for table in TABLES:
        files = _files(history, table)
        con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{files}')")
    row = con.execute(FLOOR_SQL.format(q='"')).fetchone()
    assert row is not None
    return time.perf_counter() - t, int(row[0]), int(row[1])


def spark_floor(spark: Any, history: Path) -> tuple[float, int, int]:
    """Seconds, lost and duplicated events, by `spark` (in-process or a Connect session;
    its shuffle settings are the caller's)."""
    t = time.perf_counter()
    for table in TABLES:
        spark.read.parquet(str(history / f"{table}.parquet")).createOrReplaceTempView(table)
    row = spark.sql(FLOOR_SQL.format(q="`")).collect()[0]
    return time.perf_counter() - t, int(row["lost"]), int(row["duplicated"])


def checker_counts(results: dict[str, Any]) -> tuple[int, int]:
    """The checker's (lost, duplicated) in the floor's terms, from a results.json."""
    found = results.get("anomaly_counts", {})
    return (found.get("dedup-skip", 0) + found.get("lost-event", 0),
            found.get("duplicate-output", 0))


def main(runs: list[str]) -> int:
    differ = 0
    for run in map(Path, runs):
        results = json.loads((run / "results.json").read_text())
        seconds, lost, dups = duckdb_floor(run / "history")
        ours = checker_counts(results)
        same = ours == (lost, dups)
        differ += not same
        print(f"{run.name:50} DuckDB (lost, duplicated) {(lost, dups)!s:14} checker "
              f"{ours!s:14} {'agree' if same else 'DIFFER'}  ({seconds:.2f} s)")
    print(f"{len(runs) - differ} of {len(runs)} runs agree")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
