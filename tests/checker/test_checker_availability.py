"""unavailable (checker/checks/availability.py) reads how the drain ended: a group that
drained past its budget while its lag fell is valid with a note that it was slow; one still
catching up at the drain's bound is unknown; one whose lag stopped falling is unavailable.
Run folders from before the drain said how it ended are judged as before."""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql import SparkSession

from checker.checks.availability import unavailable
from checker.frames import Frames, derive, spark_ddl
from checker.meta import Meta
from checker.model import UNKNOWN
from checker.schema import HISTORY_FILES

pytestmark = pytest.mark.spark


def lagging(spark: SparkSession) -> Frames:
    rows: dict[str, list[dict[str, Any]]] = {
        "offsets": [{"partition": 0, "committed": 700, "end": 1000},
                    {"partition": 1, "committed": 1000, "end": 1000}]}
    return derive({stem: spark.createDataFrame(rows.get(stem, []), spark_ddl(schema))
                   for stem, schema in HISTORY_FILES.items()})


def meta(drained: bool, **drain: Any) -> Meta:
    doc: dict[str, Any] = {"guarantee": "exactly_once_v2", "drained": drained}
    if drain:
        doc["drain"] = {"seconds": 90.0, "budget_s": 60.0, "bound_s": 240.0, **drain}
    return Meta.from_json(doc)


def test_how_the_drain_ended_decides(spark: SparkSession) -> None:
    frames = lagging(spark)
    slow = unavailable(spark, frames, meta(True, verdict="slow", lag_at_budget=300))
    assert slow.valid is True and slow.note is not None and "slow" in slow.note
    assert slow.details["lag_at_budget"] == 300

    still = unavailable(spark, frames, meta(False, verdict="still-draining", last_lag=300,
                                            seconds=240.0))
    assert still.valid == UNKNOWN and still.note is not None
    assert still.examples[0]["lagging_partitions"][0]["partition"] == 0

    stalled = unavailable(spark, frames, meta(False, verdict="stalled", last_lag=300))
    assert stalled.valid is False and stalled.examples[0]["reason"] == "stalled"

    before = unavailable(spark, frames, meta(False))  # a run folder from before
    assert before.valid is False and before.examples[0]["reason"] == "not-drained"
    assert unavailable(spark, frames, meta(True)).valid is True
