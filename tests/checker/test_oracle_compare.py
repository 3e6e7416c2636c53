"""The oracle's per-key comparison on synthetic histories: a committed output equal per key
to the reference's is valid however keys interleave; a record lost, repeated, changed or
moved within its key is found, classified, and shown with its records."""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import DataFrame, SparkSession

from checker.check import check_history
from checker.oracle.compare import NULL, Sides, anomalous_keys, around_first_difference
from checker.oracle.reference import SUMMARY_FILE, OracleSettings
from checker.schema import META_FILE, REFERENCE, TOPIC_RECORDS

pytestmark = pytest.mark.spark
TOPIC = "out"
# key -> its values in order (the reference's output)
sequences = st.dictionaries(
    st.sampled_from(["a", "b", "c", "d", None]),
    st.lists(st.integers(0, 5), min_size=1, max_size=6),
    min_size=1, max_size=4,
)
MUTATIONS = ("none", "lost", "duplicate", "changed", "reordered")


def interleave(per_key: dict[str | None, list[int]], rng: random.Random) -> list[tuple]:
    """All records, each key's in its order, keys interleaved at random."""
    queues = {k: list(v) for k, v in per_key.items()}
    out = []
    while queues:
        key = rng.choice(sorted(queues, key=str))
        out.append((key, queues[key].pop(0)))
        if not queues[key]:
            del queues[key]
    return out


def mutate(per_key: dict[str | None, list[int]], mutation: str,
           rng: random.Random) -> tuple[dict[str | None, list[int]], set[tuple[str, str]]]:
    """The committed output: the reference's with one mutation; returns it and the anomaly
    it makes (none: no mutation, or none applies, as reordering a key of equal values)."""
    out = {k: list(v) for k, v in per_key.items()}
    key = rng.choice(sorted(out, key=str))
    values = out[key]
    if mutation == "lost":
        del values[rng.randrange(len(values))]
    elif mutation == "duplicate":
        i = rng.randrange(len(values))
        values.insert(i, values[i])
    elif mutation == "changed":
        i = rng.randrange(len(values))
        values[i] += 100
    elif mutation == "reordered":
        pairs = [(i, j) for i in range(len(values)) for j in range(i + 1, len(values))
                 if values[i] != values[j]]
        if not pairs:
            return out, set()
        i, j = rng.choice(pairs)
        values[i], values[j] = values[j], values[i]
    else:
        return out, set()
    if not values:
        del out[key]
    return out, {(kx(key), mutation)}


def frame(spark: SparkSession, records: list[tuple]) -> DataFrame:
    rows = [(TOPIC, None if k is None else k.encode(), str(v).encode(), i)
            for i, (k, v) in enumerate(records)]
    return spark.createDataFrame(rows, "topic STRING, key BINARY, value BINARY, pos BIGINT")


def kx(key: str | None) -> str:
    return NULL if key is None else key.encode().hex().upper()


@settings(max_examples=25, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(per_key=sequences, mutation=st.sampled_from(MUTATIONS), seed=st.integers(0, 2**16))
def test_one_mutation_is_found_and_classified(spark: SparkSession, per_key: dict,
                                              mutation: str, seed: int) -> None:
    rng = random.Random(seed)
    committed, anomaly = mutate(per_key, mutation, rng)
    sides = Sides(frame(spark, interleave(committed, rng)),
                  frame(spark, interleave(per_key, rng)))
    found = {(r["kx"], r["kind"]) for r in anomalous_keys(sides).collect()}
    assert found == anomaly


def test_counts_of_lost_and_extra_records(spark: SparkSession) -> None:
    expected = [("k", 1), ("k", 2), ("k", 3), ("j", 1)]
    committed = [("k", 1), ("k", 2), ("k", 2), ("k", 3), ("j", 1), ("j", 1), ("j", 1)]
    rows = anomalous_keys(Sides(frame(spark, committed), frame(spark, expected))).collect()
    assert {(r["kx"], r["kind"], r["lost"], r["extra"]) for r in rows} == {
        (kx("k"), "duplicate", 0, 1), (kx("j"), "duplicate", 0, 2)}


def test_ignored_json_fields_do_not_count(spark: SparkSession) -> None:
    def json_frame(values: list[dict[str, Any]]) -> DataFrame:
        rows = [(TOPIC, b"k", json.dumps(v).encode(), i) for i, v in enumerate(values)]
        return spark.createDataFrame(rows, "topic STRING, key BINARY, value BINARY, pos BIGINT")

    cluster = json_frame([{"balance": 5, "offset": 17}, {"balance": 7, "offset": 18}])
    reference = json_frame([{"offset": 0, "balance": 5}, {"balance": 7, "offset": 1}])
    assert anomalous_keys(Sides(cluster, reference)).count() == 1
    assert anomalous_keys(Sides(cluster, reference), ["offset"]).count() == 0
    wrong = json_frame([{"balance": 5, "offset": 0}, {"balance": 8, "offset": 1}])
    assert [r["kind"] for r in anomalous_keys(Sides(wrong, reference), ["offset"]).collect()] \
        == ["changed"]


# -- the check, on a history folder ------------------------------------------------------

def value(v: object) -> bytes | None:
    """A record's value as stored: None is a tombstone."""
    return None if v is None else str(v).encode()


def write_history(root: Path, committed: list[tuple], reference: list[tuple],
                  alt: list[tuple] | None = None, guarantee: str = "exactly_once_v2",
                  drained: bool = True, ran: dict[str, Any] | None = None,
                  oracle: OracleSettings | None = None) -> Path:
    hist = root / "history"
    hist.mkdir()
    out_rows = [{"topic": TOPIC, "partition": 0, "offset": i, "timestamp_ms": i,
                 "key": k.encode(), "value": value(v)} for i, (k, v) in enumerate(committed)]
    pq.write_table(pa.Table.from_pylist(out_rows, TOPIC_RECORDS), hist / "app_output.parquet")
    for name, records in (("reference", reference), ("reference_alt", alt or reference)):
        rows = [{"topic": TOPIC, "seq": i, "input_index": i, "timestamp_ms": i,
                 "key": k.encode(), "value": value(v)} for i, (k, v) in enumerate(records)]
        pq.write_table(pa.Table.from_pylist(rows, REFERENCE), hist / f"{name}.parquet")
    (hist / SUMMARY_FILE).write_text(json.dumps({"reference": {"records_in": 1, **(ran or {})}}))
    settings_ = oracle or OracleSettings(classpath=(), app_class="x.App", sinks=(TOPIC,))
    meta = {"workload": "app", "guarantee": guarantee, "drained": drained,
            "oracle": settings_.to_json(), "collection": {}}
    (hist / META_FILE).write_text(json.dumps(meta))
    return hist


def judge(spark: SparkSession, *args: Any, **kwargs: Any) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kchaos-oracle-") as tmp:
        doc = check_history(write_history(Path(tmp), *args, **kwargs), spark=spark)
        return doc["checks"]["oracle"]


def test_the_check_is_valid_when_each_key_matches(spark: SparkSession) -> None:
    result = judge(spark, [("a", 1), ("b", 1), ("a", 2)], [("a", 1), ("a", 2), ("b", 1)])
    assert result["valid"] is True, result


def test_the_check_shows_a_lost_record_with_both_sides(spark: SparkSession) -> None:
    result = judge(spark, [("a", 1), ("b", 1)], [("a", 1), ("a", 2), ("b", 1)])
    assert result["valid"] is False and result["count"] == 1
    [example] = result["examples"]
    assert (example["kind"], example["key"]) == ("lost", "a")
    assert [r["value"] for r in example["committed"]] == ["1"]
    assert [r["value"] for r in example["expected"]] == ["1", "2"]


def test_order_dependent_reference_is_not_applicable(spark: SparkSession) -> None:
    result = judge(spark, [("a", 1)], [("a", 1)], alt=[("a", 2)])
    assert result["valid"] is None and "order of records" in result["not_applicable"]


@pytest.mark.parametrize(("ran", "says"), [
    ({"per_task": True}, "more than the order of each task's records"),
    ({"per_task": False, "one_driver_why": "the topology re-keys through topic t-repartition"},
     "the topology re-keys through topic t-repartition, in an interleaving"),
])
def test_the_reason_says_how_the_reference_ran(spark: SparkSession, ran: dict[str, Any],
                                               says: str) -> None:
    result = judge(spark, [("a", 1)], [("a", 1)], alt=[("a", 2)], ran=ran)
    assert result["valid"] is None and says in result["not_applicable"], result
    assert f"{TOPIC}/a" in result["not_applicable"]


def test_a_stream_time_punctuator_is_not_judged(spark: SparkSession) -> None:
    """Even where both reference orders agree: the cluster punctuates after batches of its
    own size, the reference after every record."""
    result = judge(spark, [("a", 1)], [("a", 1)], ran={"per_task": True,
                                                      "stream_time_punctuators": ["emit"]})
    assert result["valid"] is None and "stream-time punctuator (emit)" in result["not_applicable"]
    judged = judge(spark, [("a", 1)], [("a", 1)], ran={"per_task": True,
                                                      "stream_time_punctuators": []})
    assert judged["valid"] is True, judged


def test_an_undrained_run_is_unknown_not_lost(spark: SparkSession) -> None:
    result = judge(spark, [("a", 1)], [("a", 1), ("a", 2)], drained=False)
    assert result["valid"] == "unknown" and "did not process all its input" in result["error"]


def test_at_least_once_of_a_stateful_topology_that_promises_nothing_is_not_applicable(
        spark: SparkSession) -> None:
    stateful = OracleSettings(classpath=(), app_class="x.App", sinks=(TOPIC,), stores=("s",))
    result = judge(spark, [("a", 1), ("a", 1)], [("a", 1)], guarantee="at_least_once",
                   oracle=stateful)
    assert result["valid"] is None and "at_least_once" in result["not_applicable"]
    assert "keeps state (s)" in result["not_applicable"], result


def test_an_example_shows_both_sides_from_just_before_the_first_difference() -> None:
    def side(values: list[int]) -> list[dict[str, object]]:
        return [{"seq": i, "value": str(v), "cmp": str(v)} for i, v in enumerate(values)]

    shown = around_first_difference(side([*range(1, 31), 1, 2]), side(list(range(1, 41))))
    assert (shown["first_difference"], shown["shown_from"]) == (30, 25)
    assert [r["value"] for r in shown["committed"]] == ["26", "27", "28", "29", "30", "1", "2"]
    assert [r["value"] for r in shown["expected"]][:6] == ["26", "27", "28", "29", "30", "31"]
    assert all("cmp" not in r for r in shown["expected"])
