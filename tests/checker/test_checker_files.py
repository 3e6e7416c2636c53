"""Bounded-batch Parquet writing and JSONL conversion (no Kafka, no Spark)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from checker.jsonl import history_to_parquet, traces_to_parquet
from checker.parquet_sink import ParquetSink
from checker.schema import OFFSETS


def test_sink_writes_in_batches_and_renames_on_success(tmp_path: Path) -> None:
    out = tmp_path / "offsets.parquet"
    with ParquetSink(out, OFFSETS, batch_rows=3) as sink:
        for p in range(10):
            sink.add({"partition": p, "committed": None if p == 0 else p, "end": p})
        assert len(sink._buffer) < 3  # never more than a batch in memory
    meta = pq.ParquetFile(out).metadata
    assert meta.num_rows == 10 and meta.num_row_groups == 4
    assert not out.with_name(out.name + ".tmp").exists()


def test_sink_leaves_no_file_when_the_writer_fails(tmp_path: Path) -> None:
    out = tmp_path / "offsets.parquet"
    with pytest.raises(RuntimeError), ParquetSink(out, OFFSETS) as sink:
        sink.add({"partition": 0, "committed": 1, "end": 1})
        raise RuntimeError("broker went away")
    assert not out.exists() and not list(tmp_path.iterdir())


def test_jsonl_skips_torn_lines_and_keeps_the_raw_line(tmp_path: Path) -> None:
    pod = tmp_path / "pods" / "p1"
    pod.mkdir(parents=True)
    good = {
        "ts_ns": 9,
        "pod": "p1",
        "pid": 3,
        "thread": "main",
        "event": "wipe",
        "task": "0_1",
        "reason": "no checkpoint",
    }
    (pod / "trace.jsonl").write_text(json.dumps(good) + '\n\n[1]\n{"torn')
    (tmp_path / "history.jsonl").write_text(
        json.dumps(
            {
                "index": 0,
                "time_ns": 1,
                "process": "nemesis",
                "type": "info",
                "f": "kill",
                "value": {"target": "p1"},
            }
        )
        + "\n"
    )
    assert traces_to_parquet(tmp_path, tmp_path / "t.parquet") == (1, 2)
    (row,) = pq.read_table(tmp_path / "t.parquet").to_pylist()
    assert row["task"] == "0_1" and json.loads(row["data"]) == good
    assert history_to_parquet(tmp_path, tmp_path / "o.parquet") == (1, 0)
    (op,) = pq.read_table(tmp_path / "o.parquet").to_pylist()
    assert json.loads(op["value"]) == {"target": "p1"}
