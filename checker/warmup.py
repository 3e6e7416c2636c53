"""A fresh Spark server's first check is slow: Spark plans, generates and compiles the code
of every query once, and the JVM interprets it before it is compiled. A nightly's shared
server meets that cost in the check of its first runs, when two of them end together. One
check of an empty ledger history, made while those runs are still under load, pays it
instead: the same queries, planned and compiled the same way, on no rows.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pyarrow.parquet as pq

from checker.check import check_history
from checker.schema import HISTORY_FILES, META_FILE
from common.guarantees import EXACTLY_ONCE_V2

# Enough of meta.json for the ledger's checks to run (none of them is "not applicable").
WARM_UP_META = {"guarantee": EXACTLY_ONCE_V2, "partitions": 1, "application_id": "warm-up",
                "drained": True, "drain_seconds": 0.0, "sut": "python"}


def write_empty_history(history_dir: Path) -> Path:
    """Every history file with its schema and no rows, and a ledger run's meta.json."""
    history_dir.mkdir(parents=True, exist_ok=True)
    for stem, schema in HISTORY_FILES.items():
        pq.write_table(schema.empty_table(), history_dir / f"{stem}.parquet")
    (history_dir / META_FILE).write_text(json.dumps(WARM_UP_META))
    return history_dir


def warm_up(spark_master: str, folder: Path) -> float:
    """Check an empty history on `spark_master`; the seconds it took. Its verdict means
    nothing and is not kept."""
    started = time.monotonic()
    check_history(write_empty_history(folder / "history"), spark_master)
    return round(time.monotonic() - started, 2)
