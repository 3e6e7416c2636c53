"""Collect a run's committed history into `history/` (results/README.md).

Reads input, output, changelog and accounts topics read_committed to their end offsets at
collection time (for the oracle, an app's input and output topics as raw records), the
group's committed offsets, the worker traces and the run history, and writes one Parquet
file each plus `meta.json`. Records stream through bounded batches
(ParquetSink): collecting millions of records never holds them in Python memory.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kafka import KafkaAdminClient
from kafka.consumer.fetcher import ConsumerRecord

from checker.jsonl import history_to_parquet, traces_to_parquet
from checker.kafka_read import TopicRead, read_topic
from checker.parquet_sink import ParquetSink
from checker.records import (
    account_row,
    changelog_row,
    input_row,
    output_row,
    raw_row,
    windowed_row,
)
from checker.schema import (
    ACCOUNTS,
    CHANGELOG,
    INPUT,
    META_FILE,
    OFFSETS,
    OUTPUT,
    TOPIC_RECORDS,
    WINDOWED,
)
from workloads.ledger.contract import (
    ACCOUNTS_TOPIC,
    INPUT_TOPIC,
    OUTPUT_TOPIC,
    STORES,
    changelog_topic,
)
from workloads.ledger.windowed import SESSIONS_TOPIC, WINDOWS_TOPIC


@dataclass(frozen=True)
class CollectFigures:
    seconds: float
    records: dict[str, int]  # file stem -> rows written
    undecodable: dict[str, int]  # file stem -> records or lines skipped
    incomplete: dict[str, list[int]]  # topic -> partitions not read to their end
    missing_topics: list[str]


@dataclass(frozen=True)
class TopicNames:
    """The ledger topics to read; tests override them to stay apart on a shared broker."""

    input: str = INPUT_TOPIC
    output: str = OUTPUT_TOPIC
    accounts: str = ACCOUNTS_TOPIC
    windowed: bool = False  # the windows' and sessions' outputs too (the Kafka Streams app's)


@dataclass(frozen=True)
class RawTopics:
    """Topics collected as raw records for the oracle (any app's, or the ledger app's)."""

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]


Sources = list[tuple[str, Callable[[ConsumerRecord], dict | None]]]


def ledger_files(topics: TopicNames, application_id: str) -> list[tuple[str, Any, Sources]]:
    windowed: list[tuple[str, Any, Sources]] = [
        ("windows", WINDOWED, [(WINDOWS_TOPIC, windowed_row)]),
        ("sessions", WINDOWED, [(SESSIONS_TOPIC, windowed_row)]),
    ]
    return [
        ("input", INPUT, [(topics.input, input_row)]),
        ("output", OUTPUT, [(topics.output, output_row)]),
        (
            "changelog",
            CHANGELOG,
            [
                (changelog_topic(application_id, s), functools.partial(changelog_row, s))
                for s in STORES
            ],
        ),
        ("accounts", ACCOUNTS, [(topics.accounts, account_row)]),
        *(windowed if topics.windowed else []),
    ]


def raw_files(raw: RawTopics) -> list[tuple[str, Any, Sources]]:
    return [
        ("app_input", TOPIC_RECORDS, [(t, raw_row) for t in raw.inputs]),
        ("app_output", TOPIC_RECORDS, [(t, raw_row) for t in raw.outputs]),
    ]


class _Counter:
    """Decode records into a sink, counting the ones that do not decode."""

    def __init__(self, sink: ParquetSink, decode: Callable[[ConsumerRecord], dict | None]):
        self.sink = sink
        self.decode = decode
        self.bad = 0

    def __call__(self, rec: ConsumerRecord) -> None:
        try:
            row = self.decode(rec)
        except (ValueError, TypeError, KeyError, AttributeError):
            row = None
        if row is None:
            self.bad += 1
        else:
            self.sink.add(row)


def _topic_to_parquet(
    bootstrap: str,
    topics: list[tuple[str, Callable[[ConsumerRecord], dict | None]]],
    out: Path,
    schema: Any,
) -> tuple[int, int, list[TopicRead]]:
    reads = []
    bad = 0
    with ParquetSink(out, schema) as sink:
        for topic, decode in topics:
            counter = _Counter(sink, decode)
            reads.append(read_topic(bootstrap, topic, counter))
            bad += counter.bad
    return sink.rows, bad, reads


def group_offsets(bootstrap: str, group: str, topic: str) -> dict[int, int]:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30_000)
    try:
        offsets = admin.list_group_offsets(group).get(group, {})
        return {
            tp.partition: meta.offset
            for tp, meta in offsets.items()
            if tp.topic == topic and meta.offset is not None and meta.offset >= 0
        }
    finally:
        admin.close()


def collect(
    run_dir: Path,
    bootstrap: str,
    application_id: str,
    meta: dict,
    *,
    topics: TopicNames | None = TopicNames(),  # noqa: B008 - frozen, so a shared default is safe
    raw: RawTopics | None = None,
) -> CollectFigures:
    """Write `run_dir/history/*` and return what was collected: the ledger's topics
    (`topics`; None: an app run has none) and the raw ones (`raw`, for the oracle). `meta`
    (guarantee, drained, drain_seconds, dead_pods, ...) is written to meta.json with the
    figures."""
    t0 = time.perf_counter()
    hist = Path(run_dir) / "history"
    hist.mkdir(parents=True, exist_ok=True)
    records: dict[str, int] = {}
    bad: dict[str, int] = {}
    reads: list[TopicRead] = []

    # The topic whose offsets the group's progress is shown by (unavailable's examples).
    progress_topic = topics.input if topics is not None else (raw.inputs[0] if raw else "")
    # Committed offsets first: everything below them must be in the topics read after.
    committed = group_offsets(bootstrap, application_id, progress_topic)

    plan = [*(ledger_files(topics, application_id) if topics is not None else []),
            *(raw_files(raw) if raw is not None else [])]
    for stem, schema, sources in plan:
        n, b, r = _topic_to_parquet(bootstrap, sources, hist / f"{stem}.parquet", schema)
        records[stem], bad[stem] = n, b
        reads.extend(r)

    input_ends = next((r.end_offsets for r in reads if r.topic == progress_topic), {})
    with ParquetSink(hist / "offsets.parquet", OFFSETS) as sink:
        for p in sorted(set(input_ends) | set(committed)):
            sink.add({"partition": p, "committed": committed.get(p), "end": input_ends.get(p)})
    records["offsets"] = sink.rows
    records["traces"], bad["traces"] = traces_to_parquet(run_dir, hist / "traces.parquet")
    records["ops"], bad["ops"] = history_to_parquet(run_dir, hist / "ops.parquet")

    figures = CollectFigures(
        seconds=round(time.perf_counter() - t0, 3),
        records=records,
        undecodable={k: v for k, v in bad.items() if v},
        incomplete={r.topic: list(r.incomplete) for r in reads if r.incomplete},
        missing_topics=[r.topic for r in reads if r.missing],
    )
    doc = {
        **meta,
        "application_id": application_id,
        "partitions": meta.get("partitions") or len(input_ends),
        "collection": asdict(figures),
    }
    tmp = hist / (META_FILE + ".tmp")
    tmp.write_text(json.dumps(doc, indent=2, default=str) + "\n")
    tmp.replace(hist / META_FILE)
    return figures
