"""The oracle under at-least-once, on synthetic histories: what a correct app commits
under it (a replayed suffix, its outputs twice, counts that went past the reference's, a
stale update delivered late) is valid; a record of a stateless topology never committed, a
promised key missing and a growing count left below the reference's are found."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from test_oracle_compare import TOPIC, write_history

from checker.check import check_history
from checker.oracle.alos import EVERY_KEY, INCLUDED, NOT_BELOW, number
from checker.oracle.reference import OracleSettings

pytestmark = pytest.mark.spark
ALOS = "at_least_once"
STATELESS = OracleSettings(classpath=(), app_class="x.App", sinks=(TOPIC,), stores=())


def stateful(**promises: Any) -> OracleSettings:
    return OracleSettings(classpath=(), app_class="x.App", sinks=(TOPIC,), stores=("s",),
                          **promises)


def judge(spark: SparkSession, committed: list[tuple], reference: list[tuple],
          oracle: OracleSettings) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kchaos-alos-") as tmp:
        doc = check_history(write_history(Path(tmp), committed, reference, guarantee=ALOS,
                                          oracle=oracle), spark=spark)
        result: dict[str, Any] = doc["checks"]["oracle"]
        return result


def keyed(key: str, values: list[int]) -> list[tuple]:
    return [(key, v) for v in values]


def test_a_stateless_topology_may_commit_a_replayed_suffix_twice(spark: SparkSession) -> None:
    reference = [*keyed("a", [10, 11, 12]), *keyed("b", [7])]
    committed = [*keyed("a", [10, 11, 12, 11, 12]), *keyed("b", [7, 7])]
    result = judge(spark, committed, reference, STATELESS)
    assert result["valid"] is True, result
    details = result["details"]
    assert details["extra_records"] == 3 and details["keys"] == {}
    assert details["judged"] == [f"{INCLUDED} ({TOPIC})"]
    assert "sequence of values" in details["not_judged"][0]


def test_a_stateless_topology_that_restarts_its_hidden_counts_is_caught(
        spark: SparkSession) -> None:
    """The in-memory counter's shape: its counts start again from 1 after a crash, so the
    reference's 6, 7 and 8 are never committed."""
    result = judge(spark, keyed("a", [1, 2, 3, 4, 5, 1, 2, 3]), keyed("a", list(range(1, 9))),
                   STATELESS)
    assert result["valid"] is False and result["count"] == 3, result
    [example] = result["examples"]
    assert (example["kind"], example["key"], example["lost"]) == ("lost", "a", 3)
    assert [r["value"] for r in example["committed"]][-3:] == ["1", "2", "3"]


def test_a_growing_count_may_go_past_the_reference_and_be_delivered_late(
        spark: SparkSession) -> None:
    """Counted twice after a replay (a: up to 5 where the reference ends at 3), and a stale
    update landing after newer ones (b: its last committed value 1, its largest 2)."""
    reference = [*keyed("a", [1, 2, 3]), *keyed("b", [1, 2])]
    committed = [*keyed("a", [1, 2, 3, 3, 4, 5]), *keyed("b", [1, 2, 1])]
    result = judge(spark, committed, reference, stateful(grows={TOPIC: "text"}))
    assert result["valid"] is True, result
    assert result["details"]["judged"] == [f"{EVERY_KEY} ({TOPIC})", f"{NOT_BELOW} ({TOPIC})"]


def test_a_count_below_the_reference_and_a_missing_key_are_caught(spark: SparkSession) -> None:
    reference = [*keyed("a", [1, 2, 3, 4]), *keyed("b", [1]), *keyed("c", [1])]
    committed = [*keyed("a", [1, 2, 1, 2]), *keyed("c", [1])]
    result = judge(spark, committed, reference, stateful(grows={TOPIC: "text"}))
    assert result["valid"] is False and result["count"] == 2, result
    assert result["details"]["keys"] == {"below": 1, "missing": 1}
    below = next(e for e in result["examples"] if e["kind"] == "below")
    assert (below["key"], below["committed_max"], below["expected_last"]) == ("a", 2.0, 4.0)
    assert next(e for e in result["examples"] if e["kind"] == "missing")["key"] == "b"


def test_every_key_judges_the_keys_only(spark: SparkSession) -> None:
    reference = [*keyed("a", [5, 6]), *keyed("b", [1])]
    promised = stateful(every_key=(TOPIC,))
    changed = judge(spark, [*keyed("a", [9]), *keyed("b", [9])], reference, promised)
    assert changed["valid"] is True, changed
    assert any("only its keys" in n for n in changed["details"]["not_judged"])
    missing = judge(spark, keyed("a", [5, 6]), reference, promised)
    assert missing["valid"] is False and missing["details"]["keys"] == {"missing": 1}, missing


def test_a_key_the_reference_deletes_may_never_be_committed(spark: SparkSession) -> None:
    """Made and deleted between two flushes of the record cache, it is never sent."""
    reference = [*keyed("a", [1]), ("a", None), *keyed("b", [1])]
    result = judge(spark, keyed("b", [1]), reference, stateful(every_key=(TOPIC,)))
    assert result["valid"] is True, result


def test_values_that_are_not_the_promised_numbers_are_unknown(spark: SparkSession) -> None:
    result = judge(spark, [("a", "one")], [("a", 1)], stateful(grows={TOPIC: "text"}))
    assert result["valid"] == "unknown" and "'one'" in result["error"], result


@pytest.mark.parametrize(("written_as", "value", "read"), [
    ("text", b" 42 ", 42.0), ("text", b"2.5", 2.5), ("text", b"x", None),
    ("long", (7).to_bytes(8, "big"), 7.0), ("long", (-3).to_bytes(8, "big", signed=True), -3.0),
    ("long", b"1234", None),
    ("integer", (9).to_bytes(4, "big"), 9.0),
    ("integer", (-2).to_bytes(4, "big", signed=True), -2.0),
])
def test_numbers_are_read_as_the_spec_says_they_are_written(
        spark: SparkSession, written_as: str, value: bytes, read: float | None) -> None:
    frame = spark.createDataFrame([(value,)], "value BINARY")
    [row] = frame.select(number(F.col("value"), written_as).alias("n")).collect()
    assert row["n"] == read
