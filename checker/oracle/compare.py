"""Compare, per output topic and key, what the cluster committed with what the reference
produced from the same committed input.

Exactly-once for a deterministic topology means: the committed output of each key is the
sequence one fault-free, in-order execution of the committed input produces. Keys are
compared apart (the cluster interleaves keys as it likes); within a key the sequence must
be equal. A key that differs is classified by the multiset difference of its values:

- lost: values the reference produced and the cluster did not commit;
- duplicate: values the cluster committed beyond the reference's;
- changed: both at once (a value differs: stale or wrong state);
- reordered: the same values in another order.

Keys and values are compared as bytes (hex here, so that a null key or value is a value of
its own), or, with `ignore_json_fields`, as JSON objects without those fields (values a
topology takes from outside the input: a partition, an offset, a global table's version).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, Row
from pyspark.sql import functions as F

from checker.model import MAX_EXAMPLES

NULL = "null"  # hex() gives [0-9A-F]: no key or value hexes to this
KINDS = ("lost", "duplicate", "changed", "reordered")
SHOWN_VALUES = 20  # records of each side shown per anomalous key ...
SHOWN_BEFORE = 5  # ... starting this many before the first difference
MAX_KEY_RECORDS = 100_000


@dataclass(frozen=True)
class Sides:
    """The two sides of a comparison, each with `topic, key, value` and an order column
    `pos` (any orderable type) that orders a key's records."""

    actual: DataFrame
    expected: DataFrame


def comparable_value(ignore_json_fields: Sequence[str]) -> Column:
    """A value's comparable form: its hex, or its JSON fields but the ignored ones, sorted
    by name (a value that is not a JSON object stays itself)."""
    if not ignore_json_fields:
        return F.coalesce(F.hex("value"), F.lit(NULL))
    text = F.col("value").cast("string")
    ignored = F.array(*[F.lit(name) for name in ignore_json_fields])
    fields = F.map_filter(F.from_json(text, "map<string,string>"),
                          lambda k, _: ~F.array_contains(ignored, k))
    normalized = F.to_json(F.map_from_entries(F.array_sort(F.map_entries(fields))))
    return F.coalesce(normalized, F.hex("value"), F.lit(NULL))


def keyed(frame: DataFrame, ignore_json_fields: Sequence[str] = ()) -> DataFrame:
    """`topic, kx, vx, pos`: a side's keys and values in their comparable forms."""
    return frame.select(
        "topic",
        F.coalesce(F.hex("key"), F.lit(NULL)).alias("kx"),
        comparable_value(ignore_json_fields).alias("vx"),
        "pos",
    )


def value_counts(actual: DataFrame, expected: DataFrame) -> DataFrame:
    """Per (topic, key) of either keyed side, the multiset difference of its values: `lost`
    (records of the expected side the actual lacks) and `extra` (the other way)."""
    return (
        actual.groupBy("topic", "kx", "vx").agg(F.count("*").alias("a"))
        .join(expected.groupBy("topic", "kx", "vx").agg(F.count("*").alias("e")),
              ["topic", "kx", "vx"], "full")
        .select("topic", "kx",
                F.greatest(F.coalesce("e", F.lit(0)) - F.coalesce("a", F.lit(0)),
                           F.lit(0)).alias("lost"),
                F.greatest(F.coalesce("a", F.lit(0)) - F.coalesce("e", F.lit(0)),
                           F.lit(0)).alias("extra"))
        .groupBy("topic", "kx").agg(F.sum("lost").alias("lost"), F.sum("extra").alias("extra"))
    )


def anomalous_keys(sides: Sides, ignore_json_fields: Sequence[str] = ()) -> DataFrame:
    """One row per (topic, key) whose sequences differ: `kx` (the key's hex or "null"),
    `kind`, `lost` and `extra` (record counts)."""
    actual = keyed(sides.actual, ignore_json_fields)
    expected = keyed(sides.expected, ignore_json_fields)
    counts = value_counts(actual, expected)

    def sequence(frame: DataFrame, name: str) -> DataFrame:
        ordered = F.array_sort(F.collect_list(F.struct("pos", "vx")))
        return frame.groupBy("topic", "kx").agg(F.transform(ordered, lambda s: s["vx"]).alias(name))

    same_order = (
        sequence(actual, "a_seq").join(sequence(expected, "e_seq"), ["topic", "kx"], "full")
        .select("topic", "kx", F.coalesce(F.col("a_seq") == F.col("e_seq"), F.lit(False))
                .alias("same"))
    )
    kind = (F.when((F.col("lost") > 0) & (F.col("extra") > 0), "changed")
            .when(F.col("lost") > 0, "lost")
            .when(F.col("extra") > 0, "duplicate")
            .otherwise("reordered"))
    return (
        counts.join(same_order, ["topic", "kx"])
        .where(~F.col("same"))
        .select("topic", "kx", kind.alias("kind"), "lost", "extra")
    )


def cluster_side(app_output: DataFrame, topics: Sequence[str]) -> DataFrame:
    """The committed output of `topics`, a key's records in (partition, offset) order."""
    return (app_output.where(F.col("topic").isin(list(topics)))
            .withColumn("pos", F.struct("partition", "offset")))


def reference_side(reference: DataFrame) -> DataFrame:
    return reference.withColumn("pos", F.col("seq"))


def key_records(frame: DataFrame, topic: str, kx: str, order: Sequence[str],
                extra: Sequence[str], ignore_json_fields: Sequence[str] = ()
                ) -> list[dict[str, object]]:
    """A key's records on one side, in order (at most MAX_KEY_RECORDS), values as text and
    `cmp`, the value's comparable form."""
    key_match = (F.hex("key") == kx) if kx != NULL else F.col("key").isNull()
    rows = (frame.where((F.col("topic") == topic) & key_match)
            .orderBy(*order).limit(MAX_KEY_RECORDS)
            .select(*extra, F.col("value").cast("string").alias("value"),
                    comparable_value(ignore_json_fields).alias("cmp")).collect())
    return [row.asDict() for row in rows]


def key_sides(app_output: DataFrame, reference: DataFrame, topic: str, kx: str,
              ignore_json_fields: Sequence[str] = ()
              ) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """A key's committed records (with partition and offset) and the reference's (with seq
    and input_index), each in its order: an example's two sides."""
    committed = key_records(app_output, topic, kx, ("partition", "offset"),
                            ("partition", "offset"), ignore_json_fields)
    expected = key_records(reference, topic, kx, ("seq",), ("seq", "input_index"),
                           ignore_json_fields)
    return committed, expected


def compared(cluster: DataFrame, sinks: Sequence[str], ignore_json_fields: Sequence[str]
             ) -> dict[str, object]:
    """What every comparison's details say of what it compared."""
    said: dict[str, object] = {"compared_records": cluster.count(), "sinks": list(sinks)}
    if ignore_json_fields:
        said["ignored_json_fields"] = list(ignore_json_fields)
    return said


def key_examples(anomalies: DataFrame, app_output: DataFrame, reference: DataFrame,
                 ignore_json_fields: Sequence[str],
                 fields: Callable[[Row, list[dict[str, object]], list[dict[str, object]]],
                                  dict[str, object]]) -> tuple[dict[str, object], ...]:
    """The first MAX_EXAMPLES anomalous keys (rows with `topic, kx, kind`) as examples: the
    kind and key, the `fields` a comparison adds from the row and the two sides, and both
    sides from a little before where they first differ."""
    examples = []
    for row in anomalies.orderBy("kind", "topic", "kx").limit(MAX_EXAMPLES).collect():
        committed, expected = key_sides(app_output, reference, row["topic"], row["kx"],
                                        ignore_json_fields)
        examples.append({"kind": row["kind"], "topic": row["topic"], "key": key_text(row["kx"]),
                         **fields(row, committed, expected),
                         **around_first_difference(committed, expected)})
    return tuple(examples)


def around_first_difference(committed: list[dict[str, object]],
                            expected: list[dict[str, object]]) -> dict[str, object]:
    """Both sides of a key from a little before where they first differ, SHOWN_VALUES each."""
    pairs = zip(committed, expected, strict=False)
    first = next((i for i, (a, e) in enumerate(pairs) if a["cmp"] != e["cmp"]),
                 min(len(committed), len(expected)))
    start = max(0, first - SHOWN_BEFORE)

    def window(records: list[dict[str, object]]) -> list[dict[str, object]]:
        return [{k: v for k, v in r.items() if k != "cmp"}
                for r in records[start:start + SHOWN_VALUES]]

    return {"first_difference": first, "shown_from": start,
            "committed": window(committed), "expected": window(expected)}


def key_text(kx: str) -> str | None:
    if kx == NULL:
        return None
    return bytes.fromhex(kx).decode("utf-8", errors="replace")
