"""unavailable: after healing, the group stopped making progress before it had drained its
input. Judged on progress only: a pod that exited (and was restarted, or crash-looped) is
not by itself unavailability; dead pods are listed to explain a stall. A group that needed
longer than the drain's budget while its lag kept falling is slow, not unavailable (the
drain went on for it: harness/run/drain.py); one still catching up at the drain's bound is
unknown. Decided from the harness's run facts (meta `drained`, `drain`); the offsets and
traces only explain."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from checker.examples import TRACE_ORDER, row_dict, trace_dict
from checker.frames import Frames
from checker.meta import Meta
from checker.model import MAX_EXAMPLES, UNKNOWN, CheckResult

LAST_EVENTS = 5


def _slow_note(drain: Mapping[str, Any]) -> str:
    return (f"slow: {drain.get('lag_at_budget')} input records still to commit at the drain's "
            f"budget of {drain.get('budget_s')} s, its lag falling until it drained in "
            f"{drain.get('seconds')} s (bound {drain.get('bound_s')} s)")


def unavailable(spark: SparkSession, frames: Frames, meta: Meta) -> CheckResult:
    if meta.drained is None:
        return CheckResult(valid=UNKNOWN, error="meta.json does not say whether the run drained")
    raw_drain = meta.raw.get("drain")
    drain: Mapping[str, Any] = raw_drain if isinstance(raw_drain, Mapping) else {}
    verdict = drain.get("verdict")  # absent in run folders from before the drain said it
    details = {k: drain[k] for k in ("verdict", "seconds", "budget_s", "bound_s",
                                     "lag_at_budget", "last_lag") if k in drain}
    examples: list[dict] = []
    if not meta.drained:
        lag = (
            frames.offsets.where(F.coalesce(F.col("committed"), F.lit(0)) < F.col("end"))
            .orderBy("partition")
            .collect()
        )
        examples.append(
            {
                "reason": verdict or "not-drained",
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
        return CheckResult(valid=True, count=0, details=details,
                           note=_slow_note(drain) if verdict == "slow" else None)
    if verdict == "still-draining":
        return CheckResult(valid=UNKNOWN, count=1, examples=tuple(examples), details=details,
                           note=(f"still draining at the drain's bound of {drain.get('bound_s')} "
                                 f"s, its lag falling ({drain.get('last_lag')} records left): "
                                 "slow, not known to be stalled"))
    return CheckResult(valid=False, count=1, examples=tuple(examples), details=details)
