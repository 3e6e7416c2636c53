"""stale-global's bound runs from the end of the last fault that could keep a pod's
global consumer from fetching: a join of an old account value right after a 40 s cut is
Kafka Streams' documented behaviour (its stream threads do not wait for the global
thread), a global thread still behind a bound after the heal is not. Found by the matrix
cell `partition` seed 1 on 4.4.0 (stale-global 50, every row a pod's backlog joined ~5 s
after its cut healed)."""

from __future__ import annotations

import json
import random
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from synth_history import History, generate
from synth_inject import INJECTORS
from test_checker_properties import PINNED, PINNED_PICK

from checker.check import check_history
from checker.checks.global_table import NEVER_HEALED_MS, interruptions
from common.fault_traits import BEFORE_PLANS_CARRIED_TRAITS, Trait

pytestmark = pytest.mark.spark


def nemesis(f: str, step: int, phase: str, at_ms: int) -> tuple[str, int, str]:
    return (f, at_ms * 1_000_000, json.dumps({"target": "pod-0", "phase": phase, "step": step}))


def test_windows_pair_each_steps_start_and_end_and_keep_the_unhealed() -> None:
    ops = [nemesis("partition", 0, "start", 100), nemesis("pause", 1, "start", 150),
           nemesis("partition", 0, "end", 300), nemesis("kill", 2, "start", 120),
           nemesis("truncate-global", 3, "start", 130)]
    interrupting = BEFORE_PLANS_CARRIED_TRAITS.kinds_with(Trait.INTERRUPTS_GLOBAL)
    assert interruptions(ops, interrupting) == [(100, 300), (150, NEVER_HEALED_MS)]


def with_cut(history: History, start_ms: int, end_ms: int) -> History:
    rows: list[dict[str, Any]] = []
    for step_phase, at_ms in (("start", start_ms), ("end", end_ms)):
        f, time_ns, value = nemesis("partition", 0, step_phase, at_ms)
        rows.append({"index": len(history.ops) + len(rows), "time_ns": time_ns,
                     "process": "nemesis", "type": "info", "f": f, "value": value})
    return replace(history, ops=[*history.ops, *rows])


def stale_count(spark: SparkSession, history: History) -> int:
    with tempfile.TemporaryDirectory(prefix="kchaos-stale-") as tmp:
        doc = check_history(history.write(Path(tmp) / "history"), spark=spark)
    return int(doc["checks"]["stale-global"]["count"])


def test_a_join_judged_from_the_end_of_the_cut_before_it(spark: SparkSession) -> None:
    injected = INJECTORS["stale-global"](generate(PINNED), random.Random(PINNED_PICK))
    assert injected is not None
    history, expected = injected
    (position,) = expected.keys
    sent = next(r["timestamp_ms"] for r in history.input
                if (r["partition"], r["offset"]) == position)
    bound_ms = int(history.meta["stale_global_bound_s"] * 1000)
    # (without a cut it is stale: test_checker_properties' pinned example of the injector)
    # healed just before the send: the global consumer has the bound from there
    assert stale_count(spark, with_cut(history, 0, sent - 1)) == 0
    # in force at the send: when it was processed is unknown, so it is not judged
    assert stale_count(spark, with_cut(history, sent - 10, sent + 10)) == 0
    # healed more than the bound before the send: stale as without it
    assert stale_count(spark, with_cut(history, 0, sent - bound_ms - 1)) == 1
