"""window-lost-history and window-wrong (checker/checks/windowed.py) on small histories: the
records a correct app sends (windowed_model.py, Kafka Streams' window and session
semantics) are valid under either guarantee, late records included; a window or session
that went back is lost history; one counted twice, merged across a gap, or made of no
committed input is wrong under exactly-once and counted but allowed under at-least-once.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession
from windowed_model import In, run

from checker.checks.windowed import window_lost_history, window_wrong
from checker.frames import Frames, derive, spark_ddl
from checker.meta import Meta
from checker.model import CheckResult
from checker.schema import HISTORY_FILES
from workloads.ledger.windowed import WindowSpec

pytestmark = pytest.mark.spark

SPEC = WindowSpec(retention_ms=30_000, segment_ms=5000)
T0 = 1_800_000_000_000
EOS = "exactly_once_v2"
ALOS = "at_least_once"


def steady(n: int = 40, accounts: int = 3, partitions: int = 2) -> list[In]:
    """Records every 100 ms, in timestamp order, accounts round-robin (one partition an
    account: 300 ms apart, within the session gap), with a pause of 1.5 s in the middle:
    sessions grow, then split there."""
    out: list[In] = []
    offsets = [0] * partitions
    for i in range(n):
        account = i % accounts
        p = account % partitions
        ts = T0 + i * 100 + (1500 if i >= n // 2 else 0)
        out.append(In(p, offsets[p], ts, f"acct-{account}", 1 + i % 7))
        offsets[p] += 1
    return out


def frames_of(spark: SparkSession, records: list[In], windows: list[dict[str, Any]],
              sessions: list[dict[str, Any]], committed: dict[int, int] | None = None
              ) -> Frames:
    ends: dict[int, int] = {}
    for r in records:
        ends[r.partition] = max(ends.get(r.partition, 0), r.offset + 1)
    rows = {
        "input": [{"partition": r.partition, "offset": r.offset, "timestamp_ms": r.timestamp_ms,
                   "event_id": f"e{r.partition}-{r.offset}", "account": r.account,
                   "amount": r.amount} for r in records],
        "offsets": [{"partition": p, "committed": (committed or ends).get(p), "end": e}
                    for p, e in ends.items()],
        "windows": windows,
        "sessions": sessions,
    }
    raw = {stem: spark.createDataFrame(rows.get(stem, []), spark_ddl(schema))
           for stem, schema in HISTORY_FILES.items()}
    return derive(raw)


def judge(spark: SparkSession, frames: Frames, guarantee: str = EOS
          ) -> tuple[CheckResult, CheckResult]:
    meta = Meta(guarantee=guarantee, raw={"windows": SPEC.to_json()})
    return (window_lost_history(spark, frames, meta), window_wrong(spark, frames, meta))


def test_correct_outputs_are_valid_under_both_guarantees(spark: SparkSession) -> None:
    records = steady()
    windows, sessions = run(SPEC, records)
    assert any(s["removed"] for s in sessions), "the input must make sessions merge"
    frames = frames_of(spark, records, windows, sessions)
    for guarantee in (EOS, ALOS):
        lost, wrong = judge(spark, frames, guarantee)
        assert (lost.valid, wrong.valid, lost.count, wrong.count) == (True, True, 0, 0)


def test_a_window_that_went_back_is_lost_history(spark: SparkSession) -> None:
    records = steady()
    windows, sessions = run(SPEC, records)
    # The store restored without an update: every later update of that window lacks it.
    victim = windows[10]
    key = (victim["account"], victim["start"])
    later = [w for w in windows if (w["account"], w["start"]) == key
             and w["offset"] >= victim["offset"]]
    broken = [w for w in windows if w not in later] + [
        {**w, "count": w["count"] - 1, "sum": w["sum"] - 1} for w in later]
    for guarantee in (EOS, ALOS):
        lost, wrong = judge(spark, frames_of(spark, records, broken, sessions), guarantee)
        assert lost.valid is False and lost.details["windows"] == 1
        assert lost.examples[0]["reason"] == "below" and lost.examples[0]["start"] == key[1]
        assert wrong.count == 0


def test_a_window_counted_twice_is_wrong_under_exactly_once_only(spark: SparkSession) -> None:
    records = steady()
    windows, sessions = run(SPEC, records)
    last = max(windows, key=lambda w: w["offset"])
    doubled = [*windows, {**last, "offset": last["offset"] + 100, "count": last["count"] + 1,
                          "sum": last["sum"] + 3}]
    frames = frames_of(spark, records, doubled, sessions)
    lost, wrong = judge(spark, frames, EOS)
    assert lost.valid is True and wrong.valid is False and wrong.examples[0]["reason"] == "above"
    lost, wrong = judge(spark, frames, ALOS)
    assert wrong.valid is True and wrong.count == 1 and wrong.note is not None


def test_sessions_merged_across_a_gap_are_wrong(spark: SparkSession) -> None:
    records = steady()
    windows, sessions = run(SPEC, records)
    # One account's two sessions (before and after the pause) reported as one.
    mine = [s for s in sessions if s["account"] == "acct-0"]
    live = {(s["start"], s["end"]): s for s in mine}
    for s in mine:
        if s["removed"]:
            live.pop((s["start"], s["end"]), None)
    first, second = sorted(live.values(), key=lambda s: s["start"])[:2]
    merged = {**second, "offset": second["offset"] + 100, "start": first["start"],
              "count": first["count"] + second["count"], "sum": first["sum"] + second["sum"]}
    withdrawn = [{**s, "offset": second["offset"] + 90 + i, "count": None, "sum": None,
                  "removed": True} for i, s in enumerate((first, second))]
    frames = frames_of(spark, records, windows, [*sessions, *withdrawn, merged])
    _, wrong = judge(spark, frames, EOS)
    assert wrong.valid is False
    assert {e["reason"] for e in wrong.examples} == {"merged"}
    assert wrong.details["sessions"] == 2  # both sessions it swallowed


def test_a_withdrawal_lost_leaves_a_stale_session_wrong_under_exactly_once_only(
    spark: SparkSession,
) -> None:
    """At-least-once can keep a merge's changelog record and lose the output that withdrew
    the session it replaced: the earlier version stays live beside the right one."""
    records = steady()
    windows, sessions = run(SPEC, records)
    withdrawal = next(s for s in sessions if s["removed"])
    kept = [s for s in sessions if s is not withdrawal]
    frames = frames_of(spark, records, windows, kept)
    lost, wrong = judge(spark, frames, EOS)
    assert lost.valid is True and wrong.valid is False
    assert [e["reason"] for e in wrong.examples] == ["stale"]
    lost, wrong = judge(spark, frames, ALOS)
    assert (lost.valid, wrong.valid, wrong.count) == (True, True, 1)


def test_a_session_that_lost_its_start_is_lost_history(spark: SparkSession) -> None:
    records = steady()
    windows, sessions = run(SPEC, records)
    # The account's sessions restored empty before its last record: a session of that
    # record alone replaces the one it should have extended.
    last = max(records, key=lambda r: (r.timestamp_ms))
    alone = {"partition": last.partition, "offset": 10_000, "timestamp_ms": last.timestamp_ms,
             "account": last.account, "removed": False, "start": last.timestamp_ms,
             "end": last.timestamp_ms, "count": 1, "sum": last.amount}
    kept = [s for s in sessions if not (s["account"] == last.account
                                        and s["end"] == last.timestamp_ms)]
    frames = frames_of(spark, records, windows, [*kept, alone])
    lost, _ = judge(spark, frames, ALOS)
    assert lost.valid is False and lost.examples[0]["reason"] == "partial"


def test_only_input_below_the_committed_offsets_is_counted(spark: SparkSession) -> None:
    """Exactly-once: what a group committed is what its outputs reflect; the records past
    the committed offset of a partition count nowhere."""
    records = steady()
    cut = {0: 5, 1: 5}
    windows, sessions = run(SPEC, [r for r in records if r.offset < cut[r.partition]])
    lost, wrong = judge(spark, frames_of(spark, records, windows, sessions, cut), EOS)
    assert (lost.valid, wrong.valid) == (True, True)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jitter=st.lists(st.integers(min_value=-3000, max_value=400), min_size=20, max_size=40))
def test_late_records_never_make_correct_outputs_red(spark: SparkSession, jitter: list[int]
                                                     ) -> None:
    """Records out of timestamp order by up to 3 s (more than the grace): whatever Kafka
    Streams let into a window or session, the checks take it as correct."""
    records = [In(r.partition, r.offset, r.timestamp_ms + j, r.account, r.amount)
               for r, j in zip(steady(len(jitter)), jitter, strict=True)]
    windows, sessions = run(SPEC, records)
    lost, wrong = judge(spark, frames_of(spark, records, windows, sessions), EOS)
    assert (lost.valid, wrong.valid) == (True, True), (lost.examples, wrong.examples)


def test_not_applicable_without_windows(spark: SparkSession) -> None:
    frames = frames_of(spark, steady(), [], [])
    result = window_lost_history(spark, frames, Meta(guarantee=EOS))
    assert result.not_applicable is not None and "keeps no windows" in result.not_applicable
