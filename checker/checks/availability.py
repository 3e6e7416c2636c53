"""unavailable: after healing, the group did not drain its input in time. Judged on progress
only: a pod that exited (and was restarted, or crash-looped) is not by itself unavailability;
dead pods are listed to explain a stall. Decided from the harness's run facts; the offsets
and traces only explain."""

from __future__ import annotations

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from checker.examples import TRACE_ORDER, row_dict, trace_dict
from checker.frames import Frames
from checker.meta import Meta
from checker.model import MAX_EXAMPLES, UNKNOWN, CheckResult

LAST_EVENTS = 5


def unavailable(spark: SparkSession, frames: Frames, meta: Meta) -> CheckResult:
    if meta.drained is None:
        return CheckResult(valid=UNKNOWN, error="meta.json does not say whether the run drained")
    examples: list[dict] = []
    if not meta.drained:
        lag = (
            frames.offsets.where(F.coalesce(F.col("committed"), F.lit(0)) < F.col("end"))
            .orderBy("partition")
            .collect()
        )
        examples.append(
            {
                "reason": "not-drained",
                "drain_seconds": meta.drain_seconds,
                "lagging_partitions": [row_dict(r) for r in lag],
            }
        )
    for pod in meta.dead_pods[: MAX_EXAMPLES - len(examples)]:
        last = (
            frames.traces.where(F.col("pod") == pod)
            .orderBy(*[F.col(c).desc() for c in TRACE_ORDER])
            .limit(LAST_EVENTS)
            .collect()
        )
        examples.append(
            {
                "reason": "dead-pod",
                "pod": pod,
                "last_events": [trace_dict(r) for r in reversed(last)],
            }
        )
    if meta.drained:
        return CheckResult(valid=True, count=0)
    return CheckResult(valid=False, count=1, examples=tuple(examples))
