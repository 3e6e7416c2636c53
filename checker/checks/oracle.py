"""oracle: the committed output of every key is what the reference execution (Kafka's
TopologyTestDriver, fed the committed input) produced for it -- exactly-once judged without
knowing what the app does (checker/oracle/compare.py says how keys are compared).

Under at-least-once only what holds of every correct execution is judged
(checker/oracle/alos.py: every reference record of a stateless topology, the keys and the
growth the input spec promises), the rest said not judged. With the record cache on, a
stateful topology's keys are judged by their last value and the values they may take
(checker/oracle/cached.py).

Not applicable, with the reason: a run without a reference (a ledger run without
`--oracle`), an at-least-once run of a stateful topology whose input spec promises nothing
of its output, a topology the harness could not describe fully (dynamic or pattern
topics), one with a stream-time punctuator (the cluster punctuates after batches of its
own size), and one whose reference output depends on more than each task's order (the two
reference orders differ: state shared across tasks, wall-clock time, equal timestamps, or,
where the topology re-keys and one driver runs it, the order across partitions). Unknown: the
reference could not run, or the run stopped before the group had processed its input
(output still to come is not lost).
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from checker.frames import Frames
from checker.meta import Meta
from checker.model import CheckResult, not_applicable, unknown
from checker.oracle.alos import judge_at_least_once
from checker.oracle.cached import judge_cached
from checker.oracle.compare import (
    Sides,
    anomalous_keys,
    cluster_side,
    compared,
    key_examples,
    key_text,
    reference_side,
)
from checker.oracle.reference import OracleSettings

SHOWN_KEYS = 5  # keys named in an order-dependence reason


def punctuation_reason(processors: list[str]) -> str:
    return (f"the topology schedules a stream-time punctuator ({', '.join(processors)}): the "
            "cluster punctuates after a batch of a task's records whose size is its own "
            "(StreamThread's numIterations), TopologyTestDriver after every record, so what a "
            "punctuator emits depends on the cluster's timing, not on the input")


def order_dependence_reason(ran: dict[str, Any], keys: str) -> str:
    """Why the two reference orders may differ, by how the reference ran (`ran`: the
    launcher's summary of the first order; a run checked before per-task drivers has
    no `per_task`)."""
    if ran.get("per_task"):
        return ("the topology's output depends on more than the order of each task's records: "
                "the reference fed per task in two orders (the tasks in turn; all at once, "
                "wall-clock time advancing and equal timestamps the other way round) differs "
                f"(keys {keys}): state shared across tasks, wall-clock time, or the order of "
                "records with equal timestamps")
    if ran.get("one_driver_why"):
        return (f"{ran['one_driver_why']}, in an interleaving that is the cluster's timing: the "
                f"reference, one driver fed in two orders, differs (keys {keys}), so the output "
                "depends on the order across partitions (such as windows, suppression or joins "
                "closing by stream time behind the re-key) or on wall-clock time")
    return ("the topology's output depends on the order of records across partitions or on "
            f"wall-clock time: the reference fed in two orders differs (keys {keys})")


def oracle(spark: SparkSession, frames: Frames, meta: Meta) -> CheckResult:
    settings = OracleSettings.from_meta(meta.raw)
    if settings is None:
        return not_applicable("the run has no reference execution (give --oracle, or run "
                              "--sut app)")
    if settings.not_applicable:
        return not_applicable(settings.not_applicable)
    if meta.drained is False:
        return unknown("the group did not process all its input before the run stopped "
                       "(see unavailable): output still to come cannot be judged missing")
    summary = meta.raw.get("reference") or {}
    if summary.get("error"):
        return unknown(str(summary["error"]))
    ran = summary.get("reference") or {}
    punctuators = ran.get("stream_time_punctuators")
    if punctuators:
        return not_applicable(punctuation_reason(punctuators))
    ignore = settings.ignore_json_fields
    order_dependent = anomalous_keys(
        Sides(reference_side(frames.reference_alt), reference_side(frames.reference)), ignore
    ).limit(SHOWN_KEYS).collect()
    if order_dependent:
        keys = ", ".join(f"{r['topic']}/{key_text(r['kx'])}" for r in order_dependent)
        return not_applicable(order_dependence_reason(ran, keys))
    if not meta.exactly_once:
        return judge_at_least_once(frames, settings)
    if settings.record_cache_bytes and settings.keeps_state:
        return judge_cached(frames, settings)
    cluster = cluster_side(frames.app_output, settings.sinks)
    anomalies = anomalous_keys(Sides(cluster, reference_side(frames.reference)), ignore)
    tally = anomalies.groupBy("kind").agg(
        F.count("*").alias("keys"), F.sum("lost").alias("lost"), F.sum("extra").alias("extra")
    ).collect()
    by_kind = {r["kind"]: r for r in tally}
    details: dict[str, Any] = {
        "keys": {k: int(r["keys"]) for k, r in by_kind.items()},
        "lost_records": int(sum(r["lost"] for r in tally)),
        "extra_records": int(sum(r["extra"] for r in tally)),
        **compared(cluster, settings.sinks, ignore),
    }
    if not tally:
        return CheckResult(valid=True, details=details)
    examples = key_examples(anomalies, frames.app_output, frames.reference, ignore,
                            lambda row, _c, _e: {"lost": int(row["lost"]),
                                                 "extra": int(row["extra"])})
    count = details["lost_records"] + details["extra_records"] + details["keys"].get(
        "reordered", 0)
    return CheckResult(valid=False, count=count, examples=examples, details=details)
