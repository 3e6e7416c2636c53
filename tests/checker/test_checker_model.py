"""Verdict composition, run facts and failure paths that need no Spark."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from checker.__main__ import main
from checker.check import check_history, incomplete_collection, results_document, run_checks
from checker.meta import DEFAULT_STALE_GLOBAL_BOUND_S, Meta
from checker.model import UNKNOWN, CheckResult, compose, compose_exit_codes, exit_code


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        ([], True),
        ([True, True], True),
        ([True, UNKNOWN], UNKNOWN),
        ([UNKNOWN, False, True], False),
        ([False], False),
    ],
)
def test_compose_false_beats_unknown_beats_true(verdicts: list, expected: object) -> None:
    assert compose(verdicts) == expected


@pytest.mark.parametrize(
    ("codes", "expected"),
    [
        ([], 0),
        ([0, 0], 0),
        ([1, 2], 1),  # an anomaly found in one replay is found: 1, not max() = 2
        ([2, 1, 0], 1),
        ([0, 2], 2),
        ([0, 255], 255),  # no verdict: the harness failure is what to look at
        ([255, 1], 1),
        ([130, 2], 130),
    ],
)
def test_exit_codes_compose_like_verdicts(codes: list[int], expected: int) -> None:
    assert compose_exit_codes(codes) == expected


def test_exit_code_of_each_verdict() -> None:
    assert [exit_code(v) for v in (True, False, UNKNOWN, None)] == [0, 1, 2, 2]


def test_meta_defaults_and_bound() -> None:
    meta = Meta.from_json({"guarantee": "exactly_once_v2", "drained": True})
    assert meta.exactly_once and meta.dead_pods == ()
    assert meta.stale_global_bound_s == DEFAULT_STALE_GLOBAL_BOUND_S
    assert Meta.from_json({"guarantee": "x", "stale_global_bound_s": 2}).stale_global_bound_s == 2


def test_a_check_that_raises_is_unknown_and_the_others_still_run() -> None:
    def boom(spark: object, frames: object, meta: object) -> CheckResult:
        raise RuntimeError("kaput")

    def fine(spark: object, frames: object, meta: object) -> CheckResult:
        return CheckResult(valid=True)

    results, seconds = run_checks(None, None, Meta("exactly_once_v2"), {"a": boom, "b": fine})  # type: ignore[arg-type]
    doc = results_document(results, {})
    assert doc["verdict"] == UNKNOWN
    assert doc["checks"]["a"]["valid"] == UNKNOWN and "kaput" in doc["checks"]["a"]["error"]
    assert doc["checks"]["b"]["valid"] is True
    assert set(seconds) == {"a", "b"}


def test_unreadable_history_is_unknown_not_a_crash(tmp_path: Path) -> None:
    doc = check_history(tmp_path)  # no meta.json, no parquet: Spark is never started
    assert doc["verdict"] == UNKNOWN
    assert all("meta.json" in c["error"] for c in doc["checks"].values())
    json.dumps(doc)


def test_cli_rejects_a_folder_without_history(tmp_path: Path) -> None:
    assert main([str(tmp_path)]) == 254
    assert main(["--no-such-flag"]) == 254


def test_incomplete_collection_makes_a_valid_verdict_unknown() -> None:
    meta = Meta.from_json(
        {"guarantee": "exactly_once_v2", "collection": {"incomplete": {"ledger-output": [1]}}}
    )
    results = {"a": CheckResult(valid=True), "b": CheckResult(valid=True)}
    doc = results_document(results, {}, incomplete_collection(meta))
    assert doc["verdict"] == UNKNOWN and "ledger-output" in doc["incomplete"]
    whole = Meta.from_json({"guarantee": "x", "collection": {"incomplete": {}}})
    assert incomplete_collection(whole) is None


def test_incomplete_collection_keeps_an_anomaly_found() -> None:
    # false > unknown > true: what was read already shows an anomaly; more records
    # cannot take it back.
    meta = Meta.from_json(
        {"guarantee": "exactly_once_v2", "collection": {"incomplete": {"ledger-output": [1]}}}
    )
    results = {"a": CheckResult(valid=True), "b": CheckResult(valid=False, count=3)}
    doc = results_document(results, {}, incomplete_collection(meta))
    assert doc["verdict"] is False and "ledger-output" in doc["incomplete"]
    assert doc["anomaly_counts"] == {"b": 3}


@pytest.mark.parametrize(
    ("collection", "says"),
    [
        ({"undecodable": {"output": 2}}, "undecodable"),
        ({"undecodable": {"changelog": 1, "traces": 3}}, "changelog"),
        ({"missing_topics": ["ledger-output"]}, "ledger-output"),
        ({"undecodable": {"ops": 1}}, "ops"),
    ],
)
def test_undecodable_records_or_a_missing_topic_are_never_valid(
    collection: dict[str, Any], says: str
) -> None:
    meta = Meta.from_json({"guarantee": "exactly_once_v2", "collection": collection})
    reason = incomplete_collection(meta)
    assert reason is not None and says in reason
    doc = results_document({"a": CheckResult(valid=True)}, {}, reason)
    assert doc["verdict"] == UNKNOWN


def test_torn_trace_lines_alone_leave_the_verdict_alone() -> None:
    # A pod killed mid-write tears its last trace line: that is expected, not a lost record.
    meta = Meta.from_json({"guarantee": "x", "collection": {"undecodable": {"traces": 2}}})
    assert incomplete_collection(meta) is None
