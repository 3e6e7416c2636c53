"""stale-checkpoint where the stores keep their own offsets (Kafka Streams 4.3 on, KIP-1035):
the kstreams app's `store-offsets` lines, judged against the committed changelog
(checker/checks/store_offsets.py). Each test adds such lines, as the app writes them at a
task's RUNNING, to a small valid synthetic history; only the check itself runs (Spark).

A fine store holds the committed changelog replayed up to the offset it reports (or up to
a later offset); a stale one holds a write no commit covers (an aborted transaction's,
KAFKA-20685's consequence) or lacks records its offset covers (KAFKA-8187's shape).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from synth_history import APP, POD, T0_MS, History, Params, generate
from synth_variants import replayed

from checker.checks.checkpoints import stale_checkpoint
from checker.frames import load_frames
from checker.meta import Meta
from checker.model import CheckResult
from workloads.ledger.contract import DEDUP_STORE, changelog_topic, store_digest

pytestmark = pytest.mark.spark

PARTITION = 0
TASK = f"0_{PARTITION}"
PID = 4343  # the pod's restarted process: no other line of the history has it
RUNNING_NS = T0_MS * 1_000_000 + 9_000_000_000


def base() -> History:
    """One partition, a few dozen events: the dedup changelog has tombstones and gaps."""
    history = generate(Params(seed=2, partitions=1, events=40))
    return replace(history, meta={**history.meta, "sut": "kstreams"})


def dedup_log(history: History) -> list[dict[str, Any]]:
    return sorted((r for r in history.changelog
                   if r["store"] == DEDUP_STORE and r["partition"] == PARTITION),
                  key=lambda r: r["offset"])


def dedup_at(history: History, upto: int) -> dict[str, str]:
    """The dedup store as the committed changelog leaves it at offset `upto` (inclusive)."""
    return replayed(dedup_log(history), upto)


def store_offsets(offset: int | None, held: dict[str, str]) -> dict[str, Any]:
    """The app's line for the dedup store of task 0_0 when it turned RUNNING."""
    fields = {"task": TASK, "store": DEDUP_STORE,
              "changelog": f"{changelog_topic(APP, DEDUP_STORE)}-{PARTITION}",
              "offset": offset, "digest": store_digest(held.items()), "entries": len(held)}
    data = {"ts_ns": RUNNING_NS, "pod": POD, "pid": PID, "thread": "StreamThread-1",
            "event": "store-offsets", **fields}
    return {"pod": POD, "pid": PID, "ts_ns": RUNNING_NS, "thread": "StreamThread-1",
            "event": "store-offsets", "task": TASK, "data": json.dumps(data)}


def judge(spark: SparkSession, tmp_path: Path, history: History,
          lines: list[dict[str, Any]]) -> CheckResult:
    broken = replace(history, traces=[*history.traces, *lines])
    frames = load_frames(spark, broken.write(tmp_path / "history"))
    return stale_checkpoint(spark, frames, Meta.from_json(broken.meta))


def middle(history: History) -> int:
    """An offset of the dedup changelog half way through, with records after it."""
    log = dedup_log(history)
    return int(log[len(log) // 2]["offset"])


def test_store_matching_the_committed_changelog_at_its_offset_is_valid(
    spark: SparkSession, tmp_path: Path
) -> None:
    history = base()
    at = middle(history)
    got = judge(spark, tmp_path, history, [store_offsets(at, dedup_at(history, at))])
    assert (got.valid, got.count) == (True, 0), got
    assert got.details == {"store_offsets_judged": 1}


def test_store_ahead_of_its_offset_on_committed_data_is_valid(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A committed prefix that reaches past the offset the store reports: restoration from
    offset + 1 re-applies those records harmlessly."""
    history = base()
    at = middle(history)
    later = int(dedup_log(history)[-1]["offset"])
    assert dedup_at(history, later) != dedup_at(history, at)
    got = judge(spark, tmp_path, history, [store_offsets(at, dedup_at(history, later))])
    assert (got.valid, got.count) == (True, 0), got


def test_store_holding_an_uncommitted_write_is_flagged(
    spark: SparkSession, tmp_path: Path
) -> None:
    """KAFKA-20685's consequence: the store kept a write of an aborted transaction (an
    event id no committed record has) and reports the offset of the last commit."""
    history = base()
    at = middle(history)
    held = {**dedup_at(history, at), "e-aborted": f"{PARTITION}:999"}
    got = judge(spark, tmp_path, history, [store_offsets(at, held)])
    assert (got.valid, got.count) == (False, 1), got
    (example,) = got.examples
    assert (example["kind"], example["pod"], example["pid"], example["task"],
            example["store"], example["checkpoint"]) == (
        "store-offsets-mismatch", POD, PID, TASK, DEDUP_STORE, at)
    assert example["digest"] == store_digest(held.items())
    assert example["replayed"] == store_digest(dedup_at(history, at).items())
    assert got.details == {"digest_mismatch": 0, "checkpoint_while_running": 0,
                           "store_offsets_mismatch": 1, "store_offsets_judged": 1}


def test_store_behind_its_offset_is_flagged(spark: SparkSession, tmp_path: Path) -> None:
    """KAFKA-8187's shape: the offset covers records the store does not hold (and later
    records do not write those keys again)."""
    history = base()
    at = middle(history)
    held = dedup_at(history, at)
    # An event id (not a short-lived `tmp-` key, whose tombstone may follow at once).
    lost = next(r["key"] for r in reversed(dedup_log(history))
                if r["offset"] <= at and r["key"].startswith("e-") and r["key"] in held)
    got = judge(spark, tmp_path, history,
                [store_offsets(at, {k: v for k, v in held.items() if k != lost})])
    assert (got.valid, got.count) == (False, 1), got
    assert got.examples[0]["kind"] == "store-offsets-mismatch"


def test_store_reporting_no_offset_is_not_judged(spark: SparkSession, tmp_path: Path) -> None:
    """No offset (`committedOffset` null): nothing was trusted, so nothing to judge."""
    history = base()
    got = judge(spark, tmp_path, history, [store_offsets(None, {"e-aborted": "0:999"})])
    assert (got.valid, got.count) == (True, 0), got
    assert got.details == {"store_offsets_judged": 0}


def test_not_judged_under_at_least_once(spark: SparkSession, tmp_path: Path) -> None:
    history = base()
    alos = replace(history, meta={**history.meta, "guarantee": "at_least_once"})
    got = judge(spark, tmp_path, alos, [store_offsets(middle(history), {"x": "y"})])
    assert got.valid is True and got.note == "not applicable under 'at_least_once'"
