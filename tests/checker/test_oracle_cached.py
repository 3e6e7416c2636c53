"""The oracle of an exactly-once app with the record cache on, on synthetic histories: a
key's updates collapsed between flushes are valid; a key whose last committed value is not
the reference's last, a value the reference never produced for the key, and a key never
committed are found. A topology with no store has nothing to cache: compared update by
update as before."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from test_oracle_compare import TOPIC, write_history

from checker.check import check_history
from checker.oracle.cached import LAST_IS_LAST, ONE_OF_THE_REFERENCE
from checker.oracle.reference import OracleSettings

pytestmark = pytest.mark.spark
CACHED = OracleSettings(classpath=(), app_class="x.App", sinks=(TOPIC,), stores=("s",),
                        record_cache_bytes=10485760)
REFERENCE = [("a", 1), ("a", 2), ("a", 3), ("a", 4), ("b", 1), ("b", 2)]


def judge(spark: SparkSession, committed: list[tuple], oracle: OracleSettings = CACHED,
          reference: list[tuple] = REFERENCE) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kchaos-cached-") as tmp:
        doc = check_history(write_history(Path(tmp), committed, reference, oracle=oracle),
                            spark=spark)
        result: dict[str, Any] = doc["checks"]["oracle"]
        return result


def test_updates_collapsed_between_flushes_are_valid(spark: SparkSession) -> None:
    result = judge(spark, [("a", 2), ("b", 2), ("a", 4)])
    assert result["valid"] is True, result
    details = result["details"]
    assert details["judged"] == [f"{ONE_OF_THE_REFERENCE} ({TOPIC})", f"{LAST_IS_LAST} ({TOPIC})"]
    assert details["record_cache_bytes"] == 10485760 and "collapses" in details["not_judged"][0]


@pytest.mark.parametrize(("committed", "kinds"), [
    ([("a", 2), ("a", 3), ("b", 2)], {"last": 1}),  # a's last flush never committed
    ([("a", 2), ("a", 7), ("a", 4), ("b", 2)], {"changed": 1}),  # a value no input made
    ([("a", 4)], {"lost": 1}),  # b never committed
])
def test_what_a_cached_app_promises_is_judged(spark: SparkSession, committed: list[tuple],
                                              kinds: dict[str, int]) -> None:
    result = judge(spark, committed)
    assert result["valid"] is False and result["details"]["keys"] == kinds, result
    [example] = result["examples"]
    assert example["expected_last"] in ("4", "2")


def test_a_key_made_and_deleted_between_flushes_may_never_be_sent(
        spark: SparkSession) -> None:
    merged = [*REFERENCE, ("s", 1), ("s", None)]  # a session merged into a longer one
    result = judge(spark, [("a", 4), ("b", 2)], reference=merged)
    assert result["valid"] is True, result


def test_a_topology_with_no_store_is_compared_update_by_update(spark: SparkSession) -> None:
    stateless = OracleSettings(classpath=(), app_class="x.App", sinks=(TOPIC,), stores=(),
                               record_cache_bytes=10485760)
    result = judge(spark, [("a", 2), ("b", 2), ("a", 4)], stateless)
    assert result["valid"] is False and result["details"]["keys"] == {"lost": 2}, result
