"""Worker traces and the run history (JSONL) into Parquet, line by line.

A pod killed mid-write can leave a torn last line; such lines are skipped and counted,
never fatal.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from checker.parquet_sink import ParquetSink
from checker.schema import OPS, TRACES
from common.files import jsonl_objects


def _lines(path: Path) -> Iterator[tuple[str, dict[str, Any] | None]]:
    for _, line, obj in jsonl_objects(path):
        yield line.strip(), obj


def _int(value: Any) -> int | None:
    try:
        return None if value is None else int(value)
    except (TypeError, ValueError):
        return None


def traces_to_parquet(run_dir: Path, out: Path) -> tuple[int, int]:
    """pods/*/trace.jsonl (and statedir.jsonl, what the harness saw in the pods' state
    directories) -> traces.parquet; returns (rows, skipped lines)."""
    skipped = 0
    paths = [*run_dir.glob("pods/*/trace.jsonl"), *run_dir.glob("pods/*/statedir.jsonl")]
    with ParquetSink(out, TRACES) as sink:
        for path in sorted(paths):
            for line, ev in _lines(path):
                if ev is None or "event" not in ev:
                    skipped += 1
                    continue
                task = ev.get("task")
                sink.add(
                    {
                        "pod": str(ev.get("pod") or path.parent.name),
                        "pid": _int(ev.get("pid")),
                        "ts_ns": _int(ev.get("ts_ns")),
                        "thread": None if ev.get("thread") is None else str(ev["thread"]),
                        "event": str(ev["event"]),
                        "task": None if task is None else str(task),
                        "data": line,
                    }
                )
    return sink.rows, skipped


def history_to_parquet(run_dir: Path, out: Path) -> tuple[int, int]:
    """history.jsonl -> ops.parquet; returns (rows, skipped lines)."""
    skipped = 0
    path = run_dir / "history.jsonl"
    with ParquetSink(out, OPS) as sink:
        if path.exists():
            for _, op in _lines(path):
                if op is None:
                    skipped += 1
                    continue
                sink.add(
                    {
                        "index": _int(op.get("index")),
                        "time_ns": _int(op.get("time_ns")),
                        "process": op.get("process"),
                        "type": op.get("type"),
                        "f": op.get("f"),
                        "value": json.dumps(op.get("value"), separators=(",", ":")),
                    }
                )
    return sink.rows, skipped
