"""What the oracle judges of a run under at-least-once (docs/your-app.md, "Under
at-least-once"), and what it leaves unjudged, with the reason.

At-least-once processes every committed input record at least once: after a crash a
suffix of the input is processed again, on state that may already hold its effects, and
the output of both passes is committed. The exactly-once comparison (each key's sequence
equal to the reference's) does not hold of a correct app. A judgment is made here only
where it holds of every correct execution:

- a stateless topology (no state store, no stream-time punctuator): each processing of a
  record emits what the reference emits for it, so every record the reference produced is
  committed at least once (per key, the reference's values are a sub-multiset of the
  committed ones; extra copies are counted, and allowed);
- `compare.every_key` (the user's word that every record processed emits on the key the
  reference gives it): every key the reference produced is committed;
- `compare.grows` (the user's word that a key's value only grows with each record
  processed: a count, a sum of non-negative numbers): every key is committed, and its
  largest committed value is at least the reference's last. The largest, not the last in
  offset order: without transactions a pod cut off or paused may still deliver an update
  it made before its task moved, after its successor's newer ones.

The user's word is asked for, not guessed from the data or the topology's processor names:
a filter on an aggregate, or a suppression, may emit a key in the reference and never in
a correct cluster, and the harness must never flag correct software.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column, DataFrame, Row
from pyspark.sql import functions as F

from checker.frames import Frames
from checker.model import UNKNOWN, CheckResult, not_applicable
from checker.oracle.compare import (
    NULL,
    cluster_side,
    compared,
    key_examples,
    key_text,
    keyed,
    reference_side,
    value_counts,
)
from checker.oracle.reference import OracleSettings

SEQUENCE_NOT_JUDGED = ("each key's sequence of values: at-least-once processes a suffix of "
                       "the input again after a crash, on state that may hold its effects, "
                       "and commits what both passes emit")
INCLUDED = "every record the reference produced committed at least once"
EVERY_KEY = "every key the reference produced committed"
NOT_BELOW = "no key's largest committed value below the reference's last"
SHOWN_KEYS = 5


@dataclass(frozen=True)
class Judgments:
    """Which output topics get which judgment, and why the rest get none."""

    included: tuple[str, ...]  # every reference record committed at least once
    every_key: tuple[str, ...]  # every reference key committed
    grows: Mapping[str, str]  # topic -> number format: no key's largest value below
    not_judged: tuple[str, ...]

    @property
    def judged(self) -> list[str]:
        return [f"{what} ({', '.join(topics)})" for what, topics in (
            (INCLUDED, self.included), (EVERY_KEY, self.every_key),
            (NOT_BELOW, tuple(self.grows))) if topics]


def judgments(settings: OracleSettings) -> Judgments:
    """What the topology and the input spec's word allow under at-least-once (a topology
    with a stream-time punctuator is not judged at all: checker/checks/oracle.py)."""
    sinks = settings.sinks
    if not settings.keeps_state:
        return Judgments(sinks, (), {}, (SEQUENCE_NOT_JUDGED,))
    grows = {t: f for t, f in settings.grows.items() if t in sinks}
    every_key = tuple(t for t in sinks if t in grows or t in settings.every_key)
    state = (f"the topology keeps state ({', '.join(settings.stores)})" if settings.stores
             else "the topology's state stores were not described")
    silent = [t for t in sinks if t not in every_key]
    not_judged = [SEQUENCE_NOT_JUDGED]
    if silent:
        not_judged.append(f"{', '.join(silent)}: {state} and the input spec promises nothing "
                          "of its values (compare.grows, compare.every_key)")
    keys_only = [t for t in every_key if t not in grows]
    if keys_only:
        not_judged.append(f"the values of {', '.join(keys_only)} (compare.every_key: only its "
                          "keys are judged)")
    return Judgments((), every_key, grows, tuple(not_judged))


def number(value: Column, written_as: str) -> Column:
    """A value as a double, as `compare.grows` says it is written; null for a tombstone or a
    value that does not parse."""
    if written_as == "text":
        return F.trim(value.cast("string")).try_cast("double")
    if written_as == "long":
        return F.when(F.length(value) == 8, F.conv(F.hex(value), 16, -10).cast("double"))
    unsigned = F.conv(F.hex(value), 16, 10).cast("long")
    signed = F.when(unsigned >= 2**31, unsigned - 2**32).otherwise(unsigned)
    return F.when(F.length(value) == 4, signed.cast("double"))


def _numbers(side: DataFrame, grows: Mapping[str, str]) -> DataFrame:
    """`topic, kx, pos, num, raw` of the growing topics' records that are not tombstones
    (`num` null where the value does not read as the spec says)."""
    num: Column = F.lit(None).cast("double")
    for topic, written_as in grows.items():
        num = F.when(F.col("topic") == topic, number(F.col("value"), written_as)).otherwise(num)
    return (side.where(F.col("topic").isin(list(grows)) & F.col("value").isNotNull())
            .select("topic", F.coalesce(F.hex("key"), F.lit(NULL)).alias("kx"), "pos",
                    num.alias("num"), F.col("value").cast("string").alias("raw")))


def _unreadable(cluster: DataFrame, reference: DataFrame, grows: Mapping[str, str]
                ) -> str | None:
    """Why the growing topics' values cannot be compared as numbers, if they cannot: the
    spec's word on how they are written does not hold (not the app's fault, so unknown)."""
    if not grows:
        return None
    sides = [_numbers(side, grows).drop("pos") for side in (cluster, reference)]
    bad = sides[0].unionByName(sides[1]).where(F.col("num").isNull()).limit(1).collect()
    if not bad:
        return None
    row = bad[0]
    return (f"compare.grows says {row['topic']}'s values are numbers written as "
            f"{grows[row['topic']]}, but key {key_text(row['kx'])!r} has {row['raw']!r}")


def _anomalies(cluster: DataFrame, reference: DataFrame, j: Judgments,
               ignore: Sequence[str]) -> DataFrame:
    """One row per anomalous key: `topic, kx, kind, lost, extra, committed_max,
    expected_last`."""
    cols = ("topic", "kx", "kind", "lost", "extra", "committed_max", "expected_last")
    none = F.lit(None).cast("double")
    found = []
    if j.included:
        counts = value_counts(keyed(cluster.where(F.col("topic").isin(list(j.included))), ignore),
                              keyed(reference.where(F.col("topic").isin(list(j.included))),
                                    ignore))
        found.append(counts.where(F.col("lost") > 0)
                     .select("topic", "kx", F.lit("lost").alias("kind"), "lost", "extra",
                             none.alias("committed_max"), none.alias("expected_last")))
    if j.every_key:
        def keys(side: DataFrame) -> DataFrame:
            return (keyed(side.where(F.col("topic").isin(list(j.every_key))))
                    .groupBy("topic", "kx").agg(F.count("*").alias("n"),
                                                F.max_by("vx", "pos").alias("last")))

        # A key the reference ends with a tombstone may never be sent: made and deleted
        # between two flushes of the record cache.
        promised = keys(reference).where(F.col("last") != NULL)
        found.append(promised.join(keys(cluster), ["topic", "kx"], "left_anti")
                     .select("topic", "kx", F.lit("missing").alias("kind"),
                             F.col("n").alias("lost"), F.lit(0).cast("long").alias("extra"),
                             none.alias("committed_max"), none.alias("expected_last")))
    if j.grows:
        actual, expected = _numbers(cluster, j.grows), _numbers(reference, j.grows)
        largest = actual.groupBy("topic", "kx").agg(F.max("num").alias("committed_max"))
        last = expected.groupBy("topic", "kx").agg(
            F.max_by("num", "pos").alias("expected_last"))
        found.append(last.join(largest, ["topic", "kx"])
                     .where(F.col("committed_max") < F.col("expected_last"))
                     .select("topic", "kx", F.lit("below").alias("kind"),
                             F.lit(0).cast("long").alias("lost"),
                             F.lit(0).cast("long").alias("extra"),
                             "committed_max", "expected_last"))
    rows = found[0]
    for more in found[1:]:
        rows = rows.unionByName(more)
    return rows.select(*cols)


def _extra_records(cluster: DataFrame, reference: DataFrame, topics: Sequence[str],
                   ignore: Sequence[str]) -> int:
    """Records committed beyond the reference's (counted, and allowed)."""
    if not topics:
        return 0
    on = F.col("topic").isin(list(topics))
    total = value_counts(keyed(cluster.where(on), ignore), keyed(reference.where(on), ignore)
                         ).agg(F.sum("extra")).first()
    return int(total[0] or 0) if total else 0


def judge_at_least_once(frames: Frames, settings: OracleSettings) -> CheckResult:
    j = judgments(settings)
    if not j.judged:
        return not_applicable(f"at_least_once: {'; '.join(j.not_judged)}")
    ignore = settings.ignore_json_fields
    cluster = cluster_side(frames.app_output, settings.sinks)
    reference = reference_side(frames.reference)
    unreadable = _unreadable(cluster, reference, j.grows)
    if unreadable:
        return CheckResult(valid=UNKNOWN, error=unreadable)
    anomalies = _anomalies(cluster, reference, j, ignore)
    tally = anomalies.groupBy("kind").agg(F.count("*").alias("keys"),
                                          F.sum("lost").alias("lost")).collect()
    judged = [*j.included, *j.every_key]
    details: dict[str, Any] = {
        "guarantee": "at_least_once",
        "judged": j.judged, "not_judged": list(j.not_judged),
        "keys": {r["kind"]: int(r["keys"]) for r in tally},
        "lost_records": int(sum(r["lost"] for r in tally if r["kind"] == "lost")),
        # beyond the reference's: allowed under at-least-once
        "extra_records": _extra_records(cluster, reference, j.included, ignore),
        **compared(cluster.where(F.col("topic").isin(judged)), settings.sinks, ignore),
    }
    note = f"judged under at-least-once: {'; '.join(j.judged)}"
    if not tally:
        return CheckResult(valid=True, details=details, note=note)

    def fields(row: Row, _committed: object, _expected: object) -> dict[str, object]:
        below = ({"committed_max": row["committed_max"], "expected_last": row["expected_last"]}
                 if row["kind"] == "below" else {})
        return {"lost": int(row["lost"]), "extra": int(row["extra"]), **below}

    examples = key_examples(anomalies, frames.app_output, frames.reference, ignore, fields)
    count = details["lost_records"] + sum(int(r["keys"]) for r in tally if r["kind"] != "lost")
    return CheckResult(valid=False, count=count, examples=examples, details=details,
                       note=note)
